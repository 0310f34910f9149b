"""Splitting a flat signal into rows of 8: only multiples of 8 can be viewed that way.
(corpus: err_div_view_8; torch suggests _dx = Dim('_dx', min=1, max=oo), dx = 8*_dx)"""
import torch
from torch.export import Dim


class Frames(torch.nn.Module):
    def forward(self, x):
        return x.view(-1, 8)


signal = torch.randn(16)
ep = torch.export.export(Frames(), (signal,), dynamic_shapes={"x": {0: Dim("dx", min=0)}}, strict=False)
print(ep.range_constraints)
