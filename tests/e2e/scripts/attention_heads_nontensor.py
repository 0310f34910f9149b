"""Multi-head split with non-tensor arguments (int, float, bool, str, None): the model dim must be
a multiple of n_heads, the spec says any D. No corpus case."""
import torch
from torch.export import Dim


class Heads(torch.nn.Module):
    def forward(self, x, n_heads: int, scale: float, causal: bool, mode: str, bias=None):
        B, T, D = x.shape
        h = x.view(B, T, n_heads, D // n_heads).transpose(1, 2)
        att = (h @ h.transpose(-2, -1)) * scale
        if causal:
            att = att.tril()
        out = att.softmax(-1) @ h
        return out.sum(1) if mode == "sum" else out.mean(1)


x = torch.randn(2, 5, 12)
spec = {"x": {0: Dim("B", max=16), 1: Dim("T", max=64), 2: Dim("D", max=96)},
        "n_heads": None, "scale": None, "causal": None, "mode": None, "bias": None}
ep = torch.export.export(Heads(), (x, 4, 0.125, True, "sum", None), dynamic_shapes=spec)
print(ep.range_constraints)
