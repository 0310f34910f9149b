"""Dim.AUTO on a broadcasting add whose second input has size 1. (corpus: ok_broadcast_auto_size1)"""
import torch
from torch.export import Dim


class Bias(torch.nn.Module):
    def forward(self, x, y):
        return x + y


ep = torch.export.export(Bias(), (torch.randn(4, 3), torch.randn(1, 3)),
                         dynamic_shapes={"x": {0: Dim.AUTO}, "y": {0: Dim.AUTO}}, strict=False)
print(ep.range_constraints)
