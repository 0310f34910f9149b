"""Two dims, two constraints in the model, neither in the spec. (corpus: err_two_dims_two_guards)"""
import torch
from torch.export import Dim


class Windowed(torch.nn.Module):
    def forward(self, x):
        torch._check(x.shape[1] >= 4)
        torch._check(x.shape[0] <= 16)
        return x * 2


ep = torch.export.export(Windowed(), (torch.randn(8, 10),),
                         dynamic_shapes={"x": {0: Dim("B", min=0), 1: Dim("T", min=0, max=128)}}, strict=False)
print(ep.range_constraints)
