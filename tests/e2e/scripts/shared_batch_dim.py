"""One Dim object shared by both inputs: the export succeeds. (corpus: ok_add_shared_dim)"""
import torch
from torch.export import Dim


class Residual(torch.nn.Module):
    def forward(self, x, y):
        return x + y


batch = Dim("b", min=2, max=64)
ep = torch.export.export(Residual(), (torch.randn(4, 3), torch.randn(4, 3)),
                         dynamic_shapes={"x": {0: batch}, "y": {0: batch}}, strict=False)
print(ep.range_constraints)
