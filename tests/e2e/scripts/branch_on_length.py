"""A Python branch on the input length: export keeps the branch the example took.
(corpus: err_python_branch_gt)"""
import torch
from torch.export import Dim


class LongOrShort(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 10:
            return x * 2
        return x + 1


ep = torch.export.export(LongOrShort(), (torch.randn(16, 3),),
                         dynamic_shapes={"x": {0: Dim("dx", min=2, max=64)}}, strict=False)
print(ep.range_constraints)
