"""A derived Dim (2*dx) for an input that is twice as long. (corpus: ok_derived_spec_2x)"""
import torch
from torch.export import Dim


class Doubled(torch.nn.Module):
    def forward(self, x, y):
        return torch.cat([x, x]) + y


dx = Dim("dx", min=2, max=32)
ep = torch.export.export(Doubled(), (torch.randn(4), torch.randn(8)),
                         dynamic_shapes={"x": {0: dx}, "y": {0: 2 * dx}}, strict=False)
print(ep.range_constraints)
