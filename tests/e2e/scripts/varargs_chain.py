"""*args inputs whose lengths grow by one each, given independent Dims. No corpus case
(a small large_40_varargs_chain_derived_err)."""
import torch
from torch.export import Dim


class Chain(torch.nn.Module):
    def forward(self, *xs):
        acc = xs[0]
        for i, x in enumerate(xs[1:], 1):
            acc = acc + x[i:]
        return acc


xs = [torch.randn(6 + i) for i in range(4)]
spec = {"xs": tuple({0: Dim(f"d{i}", min=0, max=1000)} for i in range(4))}
ep = torch.export.export(Chain(), tuple(xs), dynamic_shapes=spec, strict=False)
print(ep.range_constraints)
