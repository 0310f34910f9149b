"""A data-dependent size (nonzero) checked against the input length. (corpus: ok_nonzero)"""
import torch
from torch.export import Dim


class Positives(torch.nn.Module):
    def forward(self, x):
        nz = torch.nonzero(x > 0)
        torch._check(nz.shape[0] <= x.shape[0])
        return nz.float().sum(0), nz.shape[0]


ep = torch.export.export(Positives(), (torch.randn(6),),
                         dynamic_shapes={"x": {0: Dim("dx", min=0, max=100)}}, strict=False)
print(ep.range_constraints)
