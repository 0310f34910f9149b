"""An encoder/decoder pipeline exported as two programs: the encoder exports, the decoder's spec
forgets that memory and target share the batch. Two export calls, two traces. No corpus case."""
import torch
from torch import nn
from torch.export import Dim


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 8)

    def forward(self, src):
        return self.lin(src).relu()


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, memory, tgt):
        return self.lin(tgt) + memory.mean(1, keepdim=True)


B, S, T = Dim("B", max=32), Dim("S", max=128), Dim("T", max=128)
enc = torch.export.export(Encoder(), (torch.randn(2, 10, 4),), dynamic_shapes={"src": {0: B, 1: S}})
print("encoder", enc.range_constraints)
mem = torch.randn(2, 10, 8)
dec = torch.export.export(Decoder(), (mem, torch.randn(2, 6, 8)),
                          dynamic_shapes={"memory": {0: B, 1: S}, "tgt": {0: Dim("B_tgt", max=32), 1: T}})
print("decoder", dec.range_constraints)
