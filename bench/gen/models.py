"""Model-sized torch.export scenarios for the scale benchmarks (issue 14).

Each scenario is a function returning the dict the corpus harness expects
(tests/corpus/gen/harness.py, run_case): {"model", "args", "kwargs", "dynamic_shapes", "notes"}.
They are registered under a name in SCENARIOS by `scenario(name, description)`; sizes are
parameters, so the size sweep is one function registered at several sizes.

Runs INSIDE the reference chroot (torch 2.14.1 in /root/refenv/forky, 2.6.0 in trixie), through
bench/gen/run.py. Nothing here is hand-tuned to shapegate: each model is the plain PyTorch code
the issue describes, with a user spec that names every dynamic dim separately, as people write
them before they read torch's error.
"""

import math

import torch
from torch import nn
from torch.export import Dim

from sizes import mixed_sizes

SCENARIOS = {}


def scenario(name, description):
    def deco(fn):
        if name in SCENARIOS:
            raise KeyError(f"duplicate scenario {name}")
        SCENARIOS[name] = {"fn": fn, "description": description, "strict": False, "tags": ["scale"]}
        return fn
    return deco


# --------------------------------------------------------------------------------------------
# (a) a 48-layer transformer with a per-layer KV cache
# --------------------------------------------------------------------------------------------

class _Layer(nn.Module):
    """Pre-norm attention block over [past; new] keys and values, with an additive mask."""

    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.ln = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x, past_k, past_v, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln(x)).view(b, t, 3, self.h, self.dh).permute(2, 0, 3, 1, 4)
        k = torch.cat([past_k, k], dim=2)          # (b, h, L + t, dh): past batch must be b
        v = torch.cat([past_v, v], dim=2)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(self.dh)
        att = att + mask[:, None, None, :]          # mask (B, M): M must be L + t
        y = att.softmax(-1) @ v                     # v's length must be k's
        y = y.transpose(1, 2).reshape(b, t, d)
        x = x + self.out(y)
        return x + self.ff(x), k, v


class _KVTransformer(nn.Module):
    def __init__(self, layers, d=16, heads=2, vocab=100, pos=128):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(pos, d) * 0.02)
        self.layers = nn.ModuleList(_Layer(d, heads) for _ in range(layers))
        self.head = nn.Linear(d, vocab)

    def forward(self, ids, mask, cache):
        past = cache[0].shape[2]
        t = ids.shape[1]
        x = self.emb(ids) + self.pos[past:past + t]  # pos-table slicing: past + t <= 128
        new = []
        for i, layer in enumerate(self.layers):
            x, k, v = layer(x, cache[2 * i], cache[2 * i + 1], mask)
            new += [k, v]
        return self.head(x), new


@scenario("kv48", "48-layer transformer (d=16, 2 heads, pos table 128) with a per-layer KV cache: ids (B, T), "
          "mask (B, M), 96 cache tensors (b_i, 2, l_i, 8) each with its own batch and length Dims; "
          "the model slices the pos table at the cache length and concatenates along the cache.")
def kv48(layers=48):
    torch.manual_seed(0)
    m = _KVTransformer(layers)
    B, T, L = 2, 5, 7
    ids = torch.randint(0, 100, (B, T))
    mask = torch.zeros(B, L + T)
    cache = [torch.randn(B, 2, L, 8) for _ in range(2 * layers)]
    spec_cache = [{0: Dim(f"b{i}", max=16), 2: Dim(f"l{i}", max=192)} for i in range(2 * layers)]
    ds = {"ids": {0: Dim("B", max=16), 1: Dim("T", max=64)},
          "mask": {0: Dim("B", max=16), 1: Dim("M", max=256)},
          "cache": spec_cache}
    return {"model": m, "args": (ids, mask, cache), "kwargs": {}, "dynamic_shapes": ds}


# --------------------------------------------------------------------------------------------
# (b) 1000 list inputs with separate Dims that must all be equal
# --------------------------------------------------------------------------------------------

class _SumList(nn.Module):
    def forward(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = out + x
        return out


@scenario("eq1000", "1000 list inputs with 1000 separate Dims d0..d999 (max 4096) that the sum makes equal: "
          "999 Eq guards, 999 fixes d_i = d0.")
def eq1000(n=1000):
    xs = [torch.randn(6) for _ in range(n)]
    ds = {"xs": [{0: Dim(f"d{i}", max=4096)} for i in range(n)]}
    return {"model": _SumList(), "args": (xs,), "kwargs": {}, "dynamic_shapes": ds}


# --------------------------------------------------------------------------------------------
# (c) 500 list inputs in a 499-link chain
# --------------------------------------------------------------------------------------------

def chain_offset(i):
    return 1 + i % 8


class _Chain(nn.Module):
    def forward(self, xs):
        return [xs[i][chain_offset(i):] + xs[i - 1] for i in range(1, len(xs))]


@scenario("chain500", "500 list inputs in a 499-link chain xs[i][o_i:] + xs[i-1] with o_i = 1 + i % 8 and "
          "separate Dims d0..d499 (max 8192): fixes d_i = d0 + sum of offsets, d0's max narrowed.")
def chain500(n=500):
    sizes = [10]
    for i in range(1, n):
        sizes.append(sizes[-1] + chain_offset(i))
    xs = [torch.randn(s) for s in sizes]
    ds = {"xs": [{0: Dim(f"d{i}", max=8192)} for i in range(n)]}
    return {"model": _Chain(), "args": (xs,), "kwargs": {}, "dynamic_shapes": ds}


# --------------------------------------------------------------------------------------------
# (d) 800 inputs, each view(-1, 8) and bounded by 2000 + i
# --------------------------------------------------------------------------------------------

class _ViewBounded(nn.Module):
    def forward(self, xs):
        out = []
        for i, x in enumerate(xs):
            torch._check(x.shape[0] <= 2000 + i)
            out.append(x.view(-1, 8).sum(0))
        return out


@scenario("view800", "800 list inputs with separate Dims d_i (min 2, max 4096), each x.view(-1, 8) and "
          "torch._check(x.shape[0] <= 2000 + i): 4 guards per input, fixes _d_i = Dim(max=250+), d_i = 8*_d_i.")
def view800(n=800):
    xs = [torch.randn(8 * (2 + i % 60)) for i in range(n)]
    ds = {"xs": [{0: Dim(f"d{i}", min=2, max=4096)} for i in range(n)]}
    return {"model": _ViewBounded(), "args": (xs,), "kwargs": {}, "dynamic_shapes": ds}


class _Views(nn.Module):
    def forward(self, xs):
        return [x.view(-1, 8).sum(0) for x in xs]


@scenario("same300", "300 list inputs with separate Dims d_i (min 2, max 4096) and one example size (16), each "
          "x.view(-1, 8): 300 isomorphic components (issue 14: hundreds of identical list items), each refuted "
          "with the fix d_i = 8*_d_i.")
def same300(n=300):
    xs = [torch.randn(16) for _ in range(n)]
    ds = {"xs": [{0: Dim(f"d{i}", min=2, max=4096)} for i in range(n)]}
    return {"model": _Views(), "args": (xs,), "kwargs": {}, "dynamic_shapes": ds}


# --------------------------------------------------------------------------------------------
# (e) 300 inputs with products
# --------------------------------------------------------------------------------------------

class _Products(nn.Module):
    def forward(self, g, us, ws):
        a, b = g.shape
        out = []
        for u, w in zip(us, ws):
            y = u.reshape(a, b, -1)                    # n_i divisible by A*B
            z = w.view(w.shape[0] * w.shape[1], -1)    # (p_i*q_i, 4)
            out.append(y.sum() + (z + u.view(-1, 4)).sum())  # n_i == 4*p_i*q_i
        return out + [g.sum()]


@scenario("prod300", "301 inputs with products: g (A, B); 150 u_i (n_i) reshaped to (A, B, -1); 150 w_i "
          "(p_i, q_i, 4) viewed as (p_i*q_i, -1) and added to u_i.view(-1, 4): non-linear guards "
          "n_i % (A*B) == 0, n_i == 4*p_i*q_i; 452 named dims.")
def prod300(n=150):
    A, B = 2, 3
    g = torch.randn(A, B)
    ps = [2 + i % 5 for i in range(n)]
    us = [torch.randn(12 * p) for p in ps]
    ws = [torch.randn(p, 3, 4) for p in ps]
    ds = {"g": {0: Dim("A", max=64), 1: Dim("B", max=64)},
          "us": [{0: Dim(f"n{i}", max=100000)} for i in range(n)],
          "ws": [{0: Dim(f"p{i}", max=64), 1: Dim(f"q{i}", max=64)} for i in range(n)]}
    return {"model": _Products(), "args": (g, us, ws), "kwargs": {}, "dynamic_shapes": ds}


# --------------------------------------------------------------------------------------------
# The size sweep: one representative list model at 10 .. 10,000 inputs
# --------------------------------------------------------------------------------------------

class _Mixed(nn.Module):
    """Inputs in groups of four: an anchor, one equal to it, one offset from it by a slice,
    one viewed as (-1, 8) and bounded. Every group is an independent component."""

    def forward(self, xs):
        out = []
        for i, x in enumerate(xs):
            g, r = divmod(i, 4)
            if r == 0:
                out.append(x * 2)
            elif r == 1:
                out.append(x + xs[4 * g])
            elif r == 2:
                out.append(x[1 + g % 8:] + xs[4 * g])
            else:
                torch._check(x.shape[0] <= 2000 + g)
                out.append(x.view(-1, 8).sum(0))
        return out


def _mixed(n):
    xs = [torch.randn(s) for s in mixed_sizes(n)]
    ds = {"xs": [{0: Dim(f"d{i}", min=2, max=4096)} for i in range(n)]}
    return {"model": _Mixed(), "args": (xs,), "kwargs": {}, "dynamic_shapes": ds}


SWEEP_SIZES = (10, 30, 100, 300, 1000, 3000, 10000)
for _n in SWEEP_SIZES:
    scenario(f"sweep{_n}", f"size sweep: {_n} list inputs in groups of four (anchor; equal; offset slice "
             "x[1 + g % 8:]; view(-1, 8) with x.shape[0] <= 2000 + g), separate Dims d_i (min 2, max 4096).")(
        (lambda n: lambda: _mixed(n))(_n))
