"""torch.export.dims() for batch and sequence of a small encoder: exports fine. No corpus case."""
import torch
from torch import nn
from torch.export import dims


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 8)
        self.rnn_like = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)

    def forward(self, tokens, lengths):
        h = self.norm(torch.tanh(self.rnn_like(self.emb(tokens))))
        return h.sum(1) / lengths.unsqueeze(-1)


batch, seq = dims("batch", "seq", min=2, max=256)
tokens, lengths = torch.randint(0, 100, (3, 9)), torch.full((3,), 9.0)
ep = torch.export.export(Encoder(), (tokens, lengths),
                         dynamic_shapes={"tokens": {0: batch, 1: seq}, "lengths": {0: batch}})
print(ep.range_constraints)
