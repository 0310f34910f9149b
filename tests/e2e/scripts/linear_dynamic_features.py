"""Marking a Linear layer's input-feature dim dynamic: the weight fixes it to 8.
(corpus: err_specialize_linear_in_features)"""
import torch
from torch.export import Dim


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.lin(x)


ep = torch.export.export(Head(), (torch.randn(3, 8),),
                         dynamic_shapes={"x": {0: Dim("batch", min=0), 1: Dim("din", min=0)}}, strict=False)
print(ep.range_constraints)
