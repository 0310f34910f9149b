"""Code that supports several torch versions: draft_export where torch has it, else
export_for_training; Dim.AUTO lets torch find the dims. No corpus case."""
import torch
from torch.export import Dim


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(8, 16), torch.nn.Linear(16, 8)

    def forward(self, x):
        return self.b(self.a(x).relu()) + x


export = getattr(torch.export, "draft_export", None) or torch.export.export_for_training
ep = export(Mlp(), (torch.randn(5, 8),), dynamic_shapes={"x": {0: Dim.AUTO, 1: Dim.AUTO}})
print(type(ep).__name__, ep.range_constraints)
