"""A namedtuple of query/key tensors sharing sequence Dims: exports fine. No corpus case."""
import collections

import torch
from torch.export import Dim

QK = collections.namedtuple("QK", ["q", "k"])


class Scores(torch.nn.Module):
    def forward(self, qk, temperature: float):
        return (qk.q @ qk.k.transpose(-2, -1)) / temperature


S = Dim("S", min=2, max=128)
spec = {"qk": QK({0: S}, {0: S}), "temperature": None}
ep = torch.export.export(Scores(), (QK(torch.randn(7, 16), torch.randn(7, 16)), 0.5), dynamic_shapes=spec)
print(ep.range_constraints)
