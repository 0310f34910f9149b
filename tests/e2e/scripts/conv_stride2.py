"""Conv (stride 2) + BatchNorm + MaxPool with dynamic batch, height and width.
torch 2.14 accepts it; torch 2.6 asks for H and W multiples of 4. (corpus: ok_conv2d_stride2)"""
import torch
from torch import nn
from torch.export import Dim


class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.offset = torch.zeros(1, 4, 1, 1)

    def forward(self, x):
        return self.pool(self.bn(self.conv(x)).relu()) + self.offset


model = Stem().eval()
spec = {"x": {0: Dim("N", min=1, max=16), 2: Dim("H", min=8, max=256), 3: Dim("W", min=8, max=256)}}
ep = torch.export.export(model, (torch.randn(2, 3, 32, 32),), dynamic_shapes=spec, strict=False)
print(ep.range_constraints)
