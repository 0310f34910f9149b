"""A size read from a tensor (.item()), declared size-like and bounded. (corpus: ok_unbacked_item_check_is_size)"""
import torch
from torch.export import Dim


class Ones(torch.nn.Module):
    def forward(self, x, t):
        n = t.item()
        torch._check_is_size(n)
        torch._check(n <= 8)
        return torch.ones(n) * 2, x + 1


ep = torch.export.export(Ones(), (torch.randn(4, 3), torch.tensor(5)),
                         dynamic_shapes={"x": {0: Dim("dx", min=0, max=64)}, "t": None}, strict=False)
print(ep.range_constraints)
