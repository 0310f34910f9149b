"""Branching on a tensor's value: a data-dependent error, not a dynamic_shapes problem.
(corpus: err_data_dependent_branch)"""
import torch
from torch.export import Dim


class Gate(torch.nn.Module):
    def forward(self, x, t):
        if t.item() > 0:
            return x + 1
        return x - 1


ep = torch.export.export(Gate(), (torch.randn(4), torch.tensor(3)),
                         dynamic_shapes={"x": {0: Dim("dx", min=0)}, "t": None}, strict=False)
print(ep.range_constraints)
