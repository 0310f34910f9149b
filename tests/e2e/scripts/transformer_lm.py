"""A tiny 2-layer language model with dynamic batch and sequence length. (corpus: large_transformer_ok)"""
import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim


class Block(nn.Module):
    def __init__(self, d=16, h=2, ff=32):
        super().__init__()
        self.h = h
        self.ln1, self.qkv, self.proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln2, self.ff1, self.ff2 = nn.LayerNorm(d), nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, x, mask):
        B, T, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
        q = q.view(B, T, self.h, D // self.h).transpose(1, 2)
        k = k.view(B, T, self.h, D // self.h).transpose(1, 2)
        v = v.view(B, T, self.h, D // self.h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(D // self.h)
        att = att.masked_fill(mask[:, None, None, :] == 0, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, D)
        x = x + self.proj(y)
        return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))


class TinyLM(nn.Module):
    def __init__(self, layers=2, vocab=50, d=16, maxlen=64):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(maxlen, d) * 0.02)
        self.tok = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(Block(d) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)

    def forward(self, ids, mask):
        B, T = ids.shape
        x = self.tok(ids) + self.pos[:T]
        for b in self.blocks:
            x = b(x, mask)
        return self.head(self.ln(x))


torch.manual_seed(0)
ids, mask = torch.randint(0, 50, (2, 12)), torch.ones(2, 12, dtype=torch.int64)
B, T = Dim("B", min=0, max=8), Dim("T", min=0, max=64)
ep = torch.export.export(TinyLM().eval(), (ids, mask),
                         dynamic_shapes={"ids": {0: B, 1: T}, "mask": {0: B, 1: T}}, strict=False)
print(ep.range_constraints)
