"""The model asserts a minimum sequence length that the Dim's range does not respect.
(corpus: err_check_ge)"""
import torch
from torch.export import Dim


class NeedsContext(torch.nn.Module):
    def forward(self, x):
        torch._check(x.shape[0] >= 16)
        return x + 1


ep = torch.export.export(NeedsContext(), (torch.randn(20, 3),),
                         dynamic_shapes={"x": {0: Dim("dx", min=2, max=100)}}, strict=False)
print(ep.range_constraints)
