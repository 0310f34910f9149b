"""Nested dict/list inputs plus a keyword tensor, one batch Dim throughout. (corpus: ok_nested_dict_list)"""
import torch
from torch.export import Dim


class Fusion(torch.nn.Module):
    def forward(self, inputs, scale=None):
        a = inputs["a"]
        y, z = inputs["b"]
        return a * scale + y + z.sum(1)


B = Dim("B", min=2, max=64)
inputs = {"a": torch.randn(4, 3), "b": [torch.randn(4, 3), torch.randn(4, 5, 3)]}
spec = {"inputs": {"a": {0: B}, "b": [{0: B}, {0: B, 1: Dim("T", min=0, max=32)}]}, "scale": {0: B}}
ep = torch.export.export(Fusion(), (inputs,), {"scale": torch.randn(4, 3)}, dynamic_shapes=spec, strict=False)
print(ep.range_constraints)
