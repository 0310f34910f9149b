"""Dim.DYNAMIC on a dim that a parameter forces to 4. (corpus: err_dynamic_hint_specialized)"""
import torch
from torch.export import Dim


class AddParam(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.p = torch.nn.Parameter(torch.randn(4, 3))

    def forward(self, x):
        return x + self.p


ep = torch.export.export(AddParam(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim.DYNAMIC}}, strict=False)
print(ep.range_constraints)
