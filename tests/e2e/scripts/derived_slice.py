"""x[1:] + y ties x's length to y's plus one; the spec keeps them independent.
(corpus: err_derived_slice_plus1)"""
import torch
from torch.export import Dim


class Shifted(torch.nn.Module):
    def forward(self, x, y):
        return x[1:] + y


ep = torch.export.export(Shifted(), (torch.randn(5), torch.randn(4)),
                         dynamic_shapes={"x": {0: Dim("dx", min=0)}, "y": {0: Dim("dy", min=0)}}, strict=False)
print(ep.range_constraints)
