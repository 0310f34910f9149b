"""Drop a leading BOS sample, then group by 4: the length must be 1 more than a multiple of 4.
(corpus: err_div_offset; torch's own fix 4*_dx - 3 does not re-export)"""
import torch
from torch.export import Dim


class Groups(torch.nn.Module):
    def forward(self, x):
        return x[1:].view(-1, 4)


ep = torch.export.export(Groups(), (torch.randn(17),),
                         dynamic_shapes={"x": {0: Dim("dx", min=0, max=1000)}}, strict=False)
print(ep.range_constraints)
