"""Attention scores over a namedtuple of query/key whose feature dims got separate Dims although
q @ k^T ties them. No corpus case."""
import collections

import torch
from torch.export import Dim

QK = collections.namedtuple("QK", ["q", "k"])


class Scores(torch.nn.Module):
    def forward(self, qk):
        return qk.q @ qk.k.transpose(-2, -1)


pair = QK(torch.randn(7, 16), torch.randn(9, 16))
spec = {"qk": QK({0: Dim("Sq"), 1: Dim("Eq")}, {0: Dim("Sk"), 1: Dim("Ek")})}
ep = torch.export.export(Scores(), (pair,), dynamic_shapes=spec, strict=False)
print(ep.range_constraints)
