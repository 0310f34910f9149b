"""A tensor's spec given as a list, one entry per dim. (corpus: ok_list_positional_dims)"""
import torch
from torch.export import Dim


class Pool(torch.nn.Module):
    def forward(self, x):
        return x.mean(dim=(1, 2))


ep = torch.export.export(Pool(), (torch.randn(3, 4, 5),),
                         dynamic_shapes={"x": [Dim("B", min=0, max=10), None, Dim("T", min=0, max=99)]}, strict=False)
print(ep.range_constraints)
