"""A residual add whose two inputs were given separate batch Dims.

torch: "The values of dy = L['y'].size()[0] and dx = L['x'].size()[0] must always be equal."
(corpus: err_eq_add)"""
import torch
from torch.export import Dim


class Residual(torch.nn.Module):
    def forward(self, x, y):
        return x + y


x, y = torch.randn(4, 3), torch.randn(4, 3)
ep = torch.export.export(Residual(), (x, y),
                         dynamic_shapes={"x": {0: Dim("dx", min=0)}, "y": {0: Dim("dy", min=0)}},
                         strict=False)
print(ep.range_constraints)
