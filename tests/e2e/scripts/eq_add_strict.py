"""The same residual add, exported with strict=True (dynamo traces it). (corpus: err_eq_add_strict)"""
import torch
from torch.export import Dim


class Residual(torch.nn.Module):
    def forward(self, x, y):
        return x + y


ep = torch.export.export(Residual(), (torch.randn(4, 3), torch.randn(4, 3)),
                         dynamic_shapes={"x": {0: Dim("dx", min=0)}, "y": {0: Dim("dy", min=0)}},
                         strict=True)
print(ep.range_constraints)
