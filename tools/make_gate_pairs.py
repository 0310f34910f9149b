#!/usr/bin/env python3
"""make_gate_pairs.py: real-torch fixtures for `shapegate gate` (issue 17) and `verify` (issue 12).

Pairs of model versions (OLD, NEW) exported with real torch, each as
tests/data/gate/<pair>/{old,new}.pt2 with a pair.json (the change, the expected gate outcome,
the dims that change, each version's spec as torch finally accepted it). `<pair>` ends with the
torch that wrote it: `-2.14` (PT2 layout, schema 8.20, guards_code), `-2.6` (flat legacy layout),
`-2.6to2.14` (OLD written by 2.6, NEW by 2.14). The 48-layer pair `deep48-2.14` (two archives
of about 550 KB) is the "gate in < 1 s" benchmark input; it is committed for torch 2.14 only
(`export 2.6 deep48` in the trixie chroot writes the flat-layout pair, about 480 KB each, for a
benchmark of that layout; it is not committed).

A spec torch refuses is refined the way a user does it: `refine_dynamic_shapes_from_suggested_fixes`
on torch's message, re-export, at most 3 rounds; pair.json records the fixes applied.

Subcommands (from the top of the checkout):

  all [--shapegate BIN]     outside the chroots: everything, in order (one job at a time):
                            exports (2.14, 2.6, cross), gate_truth.py in both chroots, the
                            boundary archives, then verify_boundaries.py verify (BIN, default
                            build/shapegate, outside), run (in both chroots) and report
  export TAG [PAIR...]      inside a chroot (TAG 2.14 in forky, 2.6 in trixie): export the pairs
  cross-old | cross-new     inside trixie / forky: the two halves of the cross-version pairs
  traces TAG [PAIR...]      inside a chroot: each pair's two versions exported again under
                            shapegate's capture (python/), the trace of the export torch accepted
                            written as <pair>-TAG/{old,new}.trace.json (v1 JSON traces, the gate's
                            trace inputs)
  torch-trace TAG PAIR      inside a chroot: the pair's two versions exported again with
                            TORCH_TRACE set, the logs as <pair>-TAG/{old,new}.torch_trace/torch_trace.log
  export-one PAIR HALF OUT  (used by torch-trace) export one version to OUT
  boundary-archives         inside forky: tests/data/boundaries/archives/*.pt2 (2.14 archives
                            whose guards_code holds what range_constraints does not)
  list                      the pairs

Weights are tiny and seeded (torch.manual_seed(0) before each model), so a re-run gives the same
models; the archive bytes differ only where torch stores ids.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GATE = os.path.join("tests", "data", "gate")
BOUND_ARCH = os.path.join("tests", "data", "boundaries", "archives")
RUN = "/work/shared/refenv/run.sh"
CHROOT = {"2.14": "/root/refenv/forky", "2.6": "/root/refenv/trixie"}

torch = None
nn = None


def need_torch():
    global torch, nn
    if torch is None:
        import torch as t
        torch, nn = t, t.nn
        sys.path.insert(0, HERE)
        import gatelib
        gatelib.quiet()
    return torch


# ---------------------------------------------------------------------------------- models
# Defined lazily (they subclass torch.nn.Module, and `all` runs without torch).

def models():
    need_torch()
    F = torch.nn.functional

    class MLP(nn.Module):
        """x [B, 4] -> [B, 6]"""
        def __init__(self):
            super().__init__()
            self.l1, self.l2 = nn.Linear(4, 8), nn.Linear(8, 6)

        def forward(self, x):
            return self.l2(F.gelu(self.l1(x)))

    class MLPView(MLP):
        """MLP + view(-1, 8): 6*B must be a multiple of 8, so B % 4 == 0."""
        def forward(self, x):
            return super().forward(x).view(-1, 8)

    class MLPRefactor(MLP):
        """The same function as MLP through other ops: addmm, the second layer split in two
        halves of its output rows and concatenated."""
        def forward(self, x):
            h = F.gelu(torch.addmm(self.l1.bias, x, self.l1.weight.t()))
            w, b = self.l2.weight, self.l2.bias
            top = h @ w[:3].t() + b[:3]
            bottom = torch.matmul(h, w[3:].t()) + b[3:]
            return torch.cat([top, bottom], dim=-1)

    class MLPCheck(MLP):
        """torch._check(B <= 48), a runtime assert in the graph."""
        def forward(self, x):
            torch._check(x.shape[0] <= 48)
            return super().forward(x)

    class MLPEven(MLP):
        """torch._check(B % 2 == 0)."""
        def forward(self, x):
            torch._check(x.shape[0] % 2 == 0)
            return super().forward(x)

    class MLPHole(MLP):
        """torch._check(B != 7): a hole in the domain."""
        def forward(self, x):
            torch._check(x.shape[0] != 7)
            return super().forward(x)

    class MLPCheckMod(MLP):
        """torch._check(B % 3 == 0)."""
        def forward(self, x):
            torch._check(x.shape[0] % 3 == 0)
            return super().forward(x)

    class TwoSep(nn.Module):
        """x [B, 4], y [C, 4], independent."""
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(4, 4)

        def forward(self, x, y):
            return self.l(x).sum(0), self.l(y).sum(0)

    class TwoEq(TwoSep):
        """x + y: B == C."""
        def forward(self, x, y):
            return self.l(x) + self.l(y)

    class TwoReshape(nn.Module):
        """x.reshape(y.shape) + y: x0*x1 == y0*y1, an equality no symbol replacement expresses."""
        def forward(self, x, y):
            return x.reshape(y.shape) + y

    class TwoMatmul(nn.Module):
        def forward(self, x, y):
            return x @ y

    class Conv(nn.Module):
        """x [N, 2, L] through Conv1d(kernel k): L >= k."""
        def __init__(self, k):
            super().__init__()
            self.c = nn.Conv1d(2, 2, k)

        def forward(self, x):
            return torch.relu(self.c(x))

    class Tree(nn.Module):
        """inputs = {"a": [B, T, 4], "b": [[B, 4], [B, T, 4]]}, mask [B, T] (keyword)."""
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(4, 4)

        def forward(self, inputs, *, mask):
            a, (b0, b1) = inputs["a"], inputs["b"]
            return self.l(a + b1 * mask.unsqueeze(-1) + b0.unsqueeze(1))

    class TreePairs(Tree):
        """... then pairs of positions: view(B, -1, 8) needs 4*T % 8 == 0, so T even."""
        def __init__(self):
            super().__init__()
            self.p = nn.Linear(8, 4)

        def forward(self, inputs, *, mask):
            h = super().forward(inputs, mask=mask)
            return self.p(h.reshape(h.shape[0], -1, 8))

    class One(nn.Module):
        """forward(x): lin(x)"""
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(4, 6)

        def forward(self, x):
            return self.l(x)

    class OneBias(One):
        """forward(x, bias): an input added."""
        def forward(self, x, bias):
            return self.l(x) + bias

    class OneMask(One):
        def forward(self, x, *, mask):
            return self.l(x) * mask

    class OneAttnMask(One):
        """the keyword input `mask` renamed `attn_mask`."""
        def forward(self, x, *, attn_mask):
            return self.l(x) * attn_mask

    class Twice(nn.Module):
        """x [B, 4], y [2B, 4]: cat([x, x]) + y."""
        def forward(self, x, y):
            return torch.cat([x, x]) + y

    class Same(nn.Module):
        """x [B, 4], y [B, 4]: x + y."""
        def forward(self, x, y):
            return x + y

    class Scalars(nn.Module):
        """forward(x, n: int, scale: float, flag: bool, mode: str, bias=None): x [B, 4]; the
        non-tensor arguments steer the computation (torch specialises them: constant inputs)."""
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(4, 6)

        def forward(self, x, n, scale, flag, mode, bias=None):
            y = self.l(x) * scale
            if flag:
                y = y + n
            if mode == "relu":
                y = torch.relu(y)
            if bias is not None:
                y = y + bias
            return y

    class ScalarsRefactor(Scalars):
        """The same function through other ops (addmm, clamp_min, conditional expressions)."""
        def forward(self, x, n, scale, flag, mode, bias=None):
            y = torch.addmm(self.l.bias, x, self.l.weight.t())
            y = y * scale + (n if flag else 0)
            y = y.clamp_min(0) if mode == "relu" else y
            return y if bias is None else y + bias

    class ScaleBy(nn.Module):
        """forward(x, n: int): lin(x) * n, n a dynamic int in torch 2.14 (Dim.DYNAMIC: a SymInt input)."""
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(4, 6)

        def forward(self, x, n):
            return self.l(x) * n

    class Block(nn.Module):
        def __init__(self, w, pairs=False):
            super().__init__()
            self.l1, self.l2 = nn.Linear(w, w), nn.Linear(w, w)
            self.pairs = nn.Linear(2 * w, 2 * w) if pairs else None

        def forward(self, x):
            b, t, w = x.shape
            h = self.l2(torch.relu(self.l1(x.reshape(b * t, w)))).view(b, t, w)
            x = x + h
            if self.pairs is not None:      # mixes neighbouring positions: t must be even
                x = x + self.pairs(x.reshape(b, t // 2, 2 * w)).reshape(b, t, w)
            return x

    class Deep(nn.Module):
        """48 blocks of width 4 over x [B, T, 4]; with `pairs_at`, that block also mixes pairs of
        positions (T even)."""
        def __init__(self, pairs_at=None, layers=48, w=4):
            super().__init__()
            self.blocks = nn.ModuleList(Block(w, pairs=(i == pairs_at)) for i in range(layers))

        def forward(self, x):
            for blk in self.blocks:
                x = blk(x)
            return x

    return dict(locals())


# ---------------------------------------------------------------------------------- pairs

def r(*shape):
    return torch.randn(*shape)


class Version:
    def __init__(self, model, inputs, spec, note="", **export_kwargs):
        self.model, self.inputs, self.spec, self.note = model, inputs, spec, note
        self.export_kwargs = export_kwargs


def pairs():
    """name -> dict(change, expected, also, changed_dims, domains, witness, old, new)."""
    M = models()
    Dim = torch.export.Dim
    P = {}

    def pair(name, change, expected, changed, domains, witness, old, new, also=(), truth=None, only=None):
        P[name] = dict(change=change, expected=expected, also=list(also), changed_dims=changed,
                       domains=domains, witness=witness, old=old, new=new, truth=truth, only=only)

    x8 = lambda: ((r(8, 4),), {})

    def batch(lo=1, hi=64):
        return lambda: {"x": {0: Dim("batch", min=lo, max=hi)}}

    pair("view_div", "NEW adds .view(-1, 8) after the last linear: 6*B % 8 == 0, i.e. B % 4 == 0",
         "regression", ["['x'].size()[0]"],
         {"old": "B in [1, 64]", "new": "B = 4*k"},
         [{"path": "['x']", "shape": [6, 4]}],
         Version(M["MLP"], x8, batch()),
         Version(M["MLPView"], x8, lambda: {"x": {0: 4 * Dim("_batch", min=1, max=16)}},
                 note="torch refuses batch in [1, 64] and offers no fix (the guards are not expressible); "
                      "the user's spec batch = 4*_batch, _batch in [1, 16]"))
    pair("narrow_max", "same model; NEW's spec narrows the max of batch from 64 to 32", "regression",
         ["['x'].size()[0]"], {"old": "B in [1, 64]", "new": "B in [1, 32]"},
         [{"path": "['x']", "shape": [40, 4]}],
         Version(M["MLP"], x8, batch(1, 64)), Version(M["MLP"], x8, batch(1, 32)))
    pair("widen_max", "same model; NEW's spec widens the max of batch from 32 to 128", "widening",
         ["['x'].size()[0]"], {"old": "B in [1, 32]", "new": "B in [1, 128]"},
         [{"path": "['x']", "shape": [100, 4]}],
         Version(M["MLP"], x8, batch(1, 32)), Version(M["MLP"], x8, batch(1, 128)))
    pair("refactor", "NEW computes the same function through other ops (addmm, split second layer, "
         "cat): a different graph, the same domain", "equal", [],
         {"old": "B in [1, 64]", "new": "B in [1, 64]"}, None,
         Version(M["MLP"], x8, batch()), Version(M["MLPRefactor"], x8, batch()))
    two = lambda: ((r(8, 4), r(5, 4)), {})
    twoeq = lambda: ((r(8, 4), r(8, 4)), {})
    pair("new_eq", "OLD reduces x and y separately; NEW adds them, so y.size(0) == x.size(0) "
         "(torch's fix: c = b)", "regression", ["['x'].size()[0]", "['y'].size()[0]"],
         {"old": "B, C independent in [2, 64]", "new": "B == C in [2, 64]"},
         [{"path": "['x']", "shape": [3, 4]}, {"path": "['y']", "shape": [5, 4]}],
         Version(M["TwoSep"], two, lambda: {"x": {0: Dim("b", min=2, max=64)}, "y": {0: Dim("c", min=2, max=64)}}),
         Version(M["TwoEq"], twoeq, lambda: {"x": {0: Dim("b", min=2, max=64)}, "y": {0: Dim("c", min=2, max=64)}}))
    conv = lambda: ((r(2, 2, 16),), {})
    cspec = lambda lo: lambda: {"x": {0: Dim("batch", min=1, max=16), 2: Dim("length", min=lo, max=128)}}
    pair("new_min", "Conv1d kernel 3 -> 5: length >= 6 instead of >= 4", "regression",
         ["['x'].size()[2]"], {"old": "L in [4, 128]", "new": "L in [6, 128]"},
         [{"path": "['x']", "shape": [2, 2, 5]}],
         Version(lambda: M["Conv"](3), conv, cspec(4),
                 note="length min=3 is refused (guard L - 2 != 1: no output of length 1); min=4 exports"),
         Version(lambda: M["Conv"](5), conv, cspec(6),
                 note="with min=4 torch suggests min=5, which does not converge (it then refuses L = 5: "
                      "guard L - 4 != 1); min=6 exports"))

    def tree_in():
        return (({"a": r(4, 6, 4), "b": [r(4, 4), r(4, 6, 4)]},), {"mask": r(4, 6)})

    def tree_spec():
        B, T = Dim("batch", max=32), Dim("seq", min=2, max=64)
        return {"inputs": {"a": {0: B, 1: T}, "b": [{0: B}, {0: B, 1: T}]}, "mask": {0: B, 1: T}}
    pair("pytree", "dict/list inputs and a keyword mask; NEW pairs neighbouring positions "
         "(view(B, -1, 8)), so seq must be even (torch's fix: seq = 2*_seq)", "regression",
         ["['inputs']['a'].size()[1]", "['inputs']['b'][1].size()[1]", "['mask'].size()[1]"],
         {"old": "B in [0, 32], T in [2, 64] shared by a, b[1], mask", "new": "T = 2*k"},
         [{"path": "['inputs']['a']", "shape": [4, 5, 4]}, {"path": "['inputs']['b'][0]", "shape": [4, 4]},
          {"path": "['inputs']['b'][1]", "shape": [4, 5, 4]}, {"path": "['mask']", "shape": [4, 5]}],
         Version(M["Tree"], tree_in, tree_spec), Version(M["TreePairs"], tree_in, tree_spec))
    pair("sig_added", "NEW takes a second input `bias` [B, 6]: a changed signature", "signature", ["['bias']"],
         {"old": "forward(x)", "new": "forward(x, bias)"}, None,
         Version(M["One"], x8, batch()),
         Version(M["OneBias"], lambda: ((r(8, 4), r(8, 6)), {}),
                 lambda: {"x": {0: Dim("batch", min=1, max=64)}, "bias": {0: Dim("batch", min=1, max=64)}}))
    mask_in = lambda: ((r(8, 4),), {"mask": r(8, 6)})
    pair("sig_renamed", "the keyword input `mask` is renamed `attn_mask`: a changed signature", "signature",
         ["['mask']", "['attn_mask']"], {"old": "forward(x, *, mask)", "new": "forward(x, *, attn_mask)"}, None,
         Version(M["OneMask"], mask_in, lambda: {"x": {0: Dim("batch", min=1, max=64)}, "mask": {0: Dim("batch", min=1, max=64)}}),
         Version(M["OneAttnMask"], lambda: ((r(8, 4),), {"attn_mask": r(8, 6)}),
                 lambda: {"x": {0: Dim("batch", min=1, max=64)}, "attn_mask": {0: Dim("batch", min=1, max=64)}}))
    pair("new_check", "NEW calls torch._check(x.shape[0] % 2 == 0), kept as a runtime assert "
         "(_assert_scalar Eq(Mod(B, 2), 0) in the graph): torch 2.14 with "
         "prefer_deferred_runtime_asserts_over_guards=True, torch 2.6 (no such option) with strict=True, "
         "whose tracer always defers", "regression",
         ["['x'].size()[0]"], {"old": "B in [1, 64]", "new": "B in [1, 64], B even (range + assert)"},
         [{"path": "['x']", "shape": [5, 4]}],
         Version(M["MLP"], x8, batch(), prefer_deferred_runtime_asserts_over_guards=True),
         Version(M["MLPEven"], x8, batch(), prefer_deferred_runtime_asserts_over_guards=True))
    pair("check_max", "NEW calls torch._check(x.shape[0] <= 48): torch folds it into the range; its "
         "fix narrows the spec to batch max=48 (and min 0)", "regression",
         ["['x'].size()[0]"], {"old": "B in [1, 64]", "new": "B in [0, 48]"},
         [{"path": "['x']", "shape": [50, 4]}],
         Version(M["MLP"], x8, batch()), Version(M["MLPCheck"], x8, batch()))
    pair("new_hole", "NEW calls torch._check(x.shape[0] != 7) (deferred: an _assert_scalar Ne)", "regression",
         ["['x'].size()[0]"], {"old": "B in [1, 64]", "new": "B in [1, 64] minus {7}"},
         [{"path": "['x']", "shape": [7, 4]}],
         Version(M["MLP"], x8, batch(), prefer_deferred_runtime_asserts_over_guards=True),
         Version(M["MLPHole"], x8, batch(), prefer_deferred_runtime_asserts_over_guards=True))
    pair("relation", "OLD: y.size(0) == 2*x.size(0) (derived dim 2*b); NEW: y.size(0) == x.size(0)",
         "regression", ["['y'].size()[0]"], {"old": "y0 = 2*b, b in [1, 32]", "new": "y0 = b, b in [1, 32]"},
         [{"path": "['x']", "shape": [3, 4]}, {"path": "['y']", "shape": [6, 4]}],
         Version(M["Twice"], lambda: ((r(4, 4), r(8, 4)), {}),
                 lambda: (lambda b: {"x": {0: b}, "y": {0: 2 * b}})(Dim("b", min=1, max=32))),
         Version(M["Same"], lambda: ((r(4, 4), r(4, 4)), {}),
                 lambda: (lambda b: {"x": {0: b}, "y": {0: b}})(Dim("b", min=1, max=32))),
         also=["widening"])
    scal_in = lambda: ((r(8, 4), 3, 0.5, True, "relu"), {"bias": None})

    def scal_spec(hi):
        return lambda: {"x": {0: Dim("batch", min=1, max=hi)}, "n": None, "scale": None, "flag": None,
                        "mode": None, "bias": None}
    pair("scalars", "forward(x, n: int, scale: float, flag: bool, mode: str, bias=None): NEW computes the "
         "same function through other ops; the non-tensor arguments are constant inputs of the archive and "
         "absent from (or only in the capture record of) a trace", "equal", [],
         {"old": "B in [1, 64]", "new": "B in [1, 64]"}, None,
         Version(M["Scalars"], scal_in, scal_spec(64)), Version(M["ScalarsRefactor"], scal_in, scal_spec(64)))
    pair("scalars_narrow", "the model with non-tensor arguments; NEW's spec narrows the max of batch from 64 "
         "to 16", "regression", ["['x'].size()[0]"], {"old": "B in [1, 64]", "new": "B in [1, 16]"},
         [{"path": "['x']", "shape": [17, 4]}],
         Version(M["Scalars"], scal_in, scal_spec(64)), Version(M["Scalars"], scal_in, scal_spec(16)))
    pair("scalars_const", "the model with non-tensor arguments, NEW exported with n=4 instead of 3: torch "
         "specialises n, so NEW raises on every call OLD accepts (a changed constant input)", "signature",
         ["['n']"], {"old": "n == 3", "new": "n == 4"}, [{"path": "['x']", "shape": [8, 4]}],
         Version(M["Scalars"], scal_in, scal_spec(64)),
         Version(M["Scalars"], lambda: ((r(8, 4), 4, 0.5, True, "relu"), {"bias": None}), scal_spec(64)))
    pair("symint", "forward(x, n: int) with n a dynamic int (Dim.DYNAMIC: a SymInt user input, torch 2.14); "
         "NEW narrows the max of batch from 64 to 32", "regression", ["['x'].size()[0]"],
         {"old": "B in [1, 64], n any int", "new": "B in [1, 32], n any int"}, [{"path": "['x']", "shape": [33, 4]}],
         Version(M["ScaleBy"], lambda: ((r(8, 4), 3), {}), lambda: {"x": {0: Dim("batch", min=1, max=64)}, "n": Dim.DYNAMIC}),
         Version(M["ScaleBy"], lambda: ((r(8, 4), 3), {}), lambda: {"x": {0: Dim("batch", min=1, max=32)}, "n": Dim.DYNAMIC}),
         only="2.14")
    deep_in = lambda: ((r(2, 8, 4),), {})
    deep_spec = lambda: {"x": {0: Dim("batch", min=1, max=64), 1: Dim("seq", min=2, max=512)}}
    pair("deep48", "48 blocks (reshape, two Linear of width 4, ReLU, view, residual add per block); NEW's block 40 "
         "also mixes pairs of positions (reshape(b, t // 2, 8)), so seq must be even", "regression",
         ["['x'].size()[1]"], {"old": "B in [1, 64], T in [2, 512]", "new": "T = 2*k"},
         [{"path": "['x']", "shape": [2, 7, 4]}],
         Version(M["Deep"], deep_in, deep_spec), Version(lambda: M["Deep"](pairs_at=40), deep_in, deep_spec),
         truth={"max_numel": 1 << 13}, only="2.14")
    return P


def cross_pairs():
    """OLD exported by torch 2.6, NEW by torch 2.14: name -> pair (both versions' definitions)."""
    M = models()
    Dim = torch.export.Dim
    x8 = lambda: ((r(8, 4),), {})
    auto = lambda: {"x": {0: Dim.AUTO}}
    return {
        "cross_mlp": dict(change="the same MLP, exported by torch 2.6 (flat) and by torch 2.14 (PT2)",
                          expected="equal", also=[], changed_dims=[],
                          domains={"old": "B in [1, 64]", "new": "B in [1, 64]"}, witness=None,
                          old=Version(M["MLP"], x8, lambda: {"x": {0: Dim("batch", min=1, max=64)}}),
                          new=Version(M["MLP"], x8, lambda: {"x": {0: Dim("batch", min=1, max=64)}})),
        "cross_view_auto": dict(
            change="the same MLP + view(-1, 8) with Dim.AUTO: torch 2.6 keeps only range [2, oo] (the "
                   "divisibility is in the graph's view), torch 2.14 keeps it in guards_code",
            expected="equal", also=[], changed_dims=[],
            domains={"old": "B % 4 == 0 (only the view op checks it)", "new": "B % 4 == 0 (guards_code)"},
            witness=None, old=Version(M["MLPView"], x8, auto), new=Version(M["MLPView"], x8, auto)),
        "cross_narrow": dict(change="torch 2.6 OLD with batch max 64, torch 2.14 NEW with max 32",
                             expected="regression", also=[], changed_dims=["['x'].size()[0]"],
                             domains={"old": "B in [1, 64]", "new": "B in [1, 32]"},
                             witness=[{"path": "['x']", "shape": [33, 4]}],
                             old=Version(M["MLP"], x8, lambda: {"x": {0: Dim("batch", min=1, max=64)}}),
                             new=Version(M["MLP"], x8, lambda: {"x": {0: Dim("batch", min=1, max=32)}})),
    }


def boundary_models():
    """2.14 archives for the verify catalog: constraints that live only in guards_code
    (Dim.AUTO, no deferred asserts), and controls."""
    M = models()
    Dim = torch.export.Dim
    A = Dim.AUTO
    x8 = lambda: ((r(8, 4),), {})
    x12 = lambda: ((r(12, 4),), {})
    return {
        "div_view_auto": ("view(-1, 8) after Linear(.., 6), Dim.AUTO: B % 4 == 0 only in guards_code",
                          Version(M["MLPView"], x8, lambda: {"x": {0: A}})),
        "check_mod3_auto": ("torch._check(B % 3 == 0), Dim.AUTO: only in guards_code",
                            Version(M["MLPCheckMod"], x12, lambda: {"x": {0: A}})),
        "check_ne7_auto": ("torch._check(B != 7), Dim.AUTO: a hole, only in guards_code",
                           Version(M["MLPHole"], x8, lambda: {"x": {0: A}})),
        "check_le48_auto": ("torch._check(B <= 48), Dim.AUTO (control: torch folds it into the range)",
                            Version(M["MLPCheck"], x8, lambda: {"x": {0: A}})),
        "eq_reshape_auto": ("x.reshape(y.shape) + y, all dims Dim.AUTO: x0*x1 == y0*y1 only in guards_code",
                            Version(M["TwoReshape"], lambda: ((r(4, 6), r(8, 3)), {}),
                                    lambda: {"x": {0: A, 1: A}, "y": {0: A, 1: A}})),
        "eq_matmul_dynamic": ("x @ y with Dim.DYNAMIC everywhere (control: the shared dim is one symbol)",
                              Version(M["TwoMatmul"], lambda: ((r(4, 3), r(3, 5)), {}),
                                      lambda: {"x": {0: Dim.DYNAMIC, 1: Dim.DYNAMIC}, "y": {0: Dim.DYNAMIC, 1: Dim.DYNAMIC}})),
        "eq_add_dims": ("x + y with Dim('b') and Dim('c') refined by torch's fix c = b (control)",
                        Version(M["Same"], lambda: ((r(4, 4), r(4, 4)), {}),
                                lambda: {"x": {0: Dim("b", min=2, max=64)}, "y": {0: Dim("c", min=2, max=64)}})),
    }


# ---------------------------------------------------------------------------------- export

def spec_repr(spec):
    """The dynamic_shapes spec in torch's Python form, the same for torch 2.6 and 2.14:
    Dim('batch', min=1, max=64), 4*_batch (with _batch = Dim(...)), Dim.AUTO, Dim.DYNAMIC."""
    roots = {}

    def dim(d):
        if d is None or isinstance(d, int):
            return repr(d)
        hint = getattr(d, "name", None) or getattr(getattr(d, "type", None), "name", None)
        if hint in ("AUTO", "DYNAMIC", "STATIC") and not hasattr(d, "__name__"):
            return "Dim." + hint
        if hasattr(d, "root"):
            root = d.root
            roots[root.__name__] = "Dim(%r, min=%d, max=%d)" % (root.__name__, root.min, root.max)
            return d.__name__
        return "Dim(%r, min=%d, max=%d)" % (d.__name__, d.min, d.max)

    def walk(x):
        if isinstance(x, dict):
            if x and all(isinstance(k, int) for k in x):
                return "{" + ", ".join("%d: %s" % (k, dim(v)) for k, v in x.items()) + "}"
            return "{" + ", ".join("%r: %s" % (k, walk(v)) for k, v in x.items()) + "}"
        if isinstance(x, (list, tuple)):
            inner = ", ".join(walk(v) for v in x)
            return "[" + inner + "]" if isinstance(x, list) else "(" + inner + ("," if len(x) == 1 else "") + ")"
        return dim(x)

    text = walk(spec)
    return "; ".join(["%s = %s" % kv for kv in sorted(roots.items())] + [text])


def capture_one(v, path):
    """Export version v as export_one does, under shapegate's capture; write the v1 trace of the
    export torch accepted (the last call) to path."""
    import shutil
    import tempfile
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import shapegate
    tmp = tempfile.mkdtemp()
    try:
        with shapegate.capture(out=tmp, quiet=True) as cap:
            export_one(v, os.path.join(tmp, "model.pt2"))
        last = [c for c in cap.calls if c.error is None][-1]
        shutil.copyfile(last.path, path)
    finally:
        shutil.rmtree(tmp)


def cmd_traces(tag, names):
    need_torch()
    P = pairs()
    for name in names or [n for n in P if P[n]["only"] in (None, tag)]:
        d = os.path.join(GATE, "%s-%s" % (name, tag))
        if not os.path.isdir(d):
            continue
        for half in ("old", "new"):
            capture_one(P[name][half], os.path.join(d, half + ".trace.json"))
        print("%-24s traces written" % os.path.basename(d))


def export_one(v, path):
    """Export version v to path (refining a refused spec with torch's fixes); return its record."""
    from torch.export.dynamic_shapes import refine_dynamic_shapes_from_suggested_fixes
    torch.manual_seed(0)
    model = v.model()
    model.eval()
    torch.manual_seed(1)
    args, kwargs = v.inputs()
    spec = v.spec()
    fixes = []
    kw, note = dict(v.export_kwargs), v.note
    import inspect
    accepted = inspect.signature(torch.export.export).parameters
    strict = False
    for k in [k for k in kw if k not in accepted]:
        del kw[k]
        if k == "prefer_deferred_runtime_asserts_over_guards":
            strict = True           # torch 2.6's strict (dynamo) tracer always defers (_trace.py)
            note = (note + "; " if note else "") + "this torch's export() has no %s: exported " \
                "with strict=True, whose tracer always defers" % k
    for rnd in range(4):
        try:
            ep = torch.export.export(model, args, kwargs, dynamic_shapes=spec, strict=strict, **kw)
            break
        except torch._dynamo.exc.UserError as e:
            msg = getattr(e, "msg", str(e))
            if rnd == 3 or "Suggested fixes" not in msg:
                raise
            fixes.append([l.strip() for l in msg.split("Suggested fixes:")[1].strip().splitlines()
                          if l.strip() and not l.startswith("The error above")])
            spec = refine_dynamic_shapes_from_suggested_fixes(msg, spec)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.export.save(ep, path)
    return {"file": os.path.basename(path), "bytes": os.path.getsize(path), "model": type(model).__name__,
            "model_doc": (type(model).__doc__ or "").strip(), "spec": spec_repr(spec),
            "fixes_applied": fixes, "note": note, "export_kwargs": dict(kw, strict=strict),
            "torch_version": torch.__version__, "range_constraints": {str(k): [str(x.lower), str(x.upper)] for k, x in ep.range_constraints.items()}}


def pair_record(name, p, torch_old, torch_new):
    return {"pair": name, "change": p["change"], "expected": p["expected"], "also": p["also"],
            "changed_dims": p["changed_dims"], "domains": p["domains"],
            "witness_example": p["witness"], "torch": {"old": torch_old, "new": torch_new},
            "regenerate": "python3 tools/make_gate_pairs.py all", "truth": p.get("truth") or {}}


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def cmd_export(tag, names):
    need_torch()
    P = pairs()
    for name in names or [n for n in P if P[n]["only"] in (None, tag)]:
        p = P[name]
        d = os.path.join(GATE, "%s-%s" % (name, tag))
        rec = pair_record(os.path.basename(d), p, torch.__version__, torch.__version__)
        try:
            rec["old"] = export_one(p["old"], os.path.join(d, "old.pt2"))
            rec["new"] = export_one(p["new"], os.path.join(d, "new.pt2"))
        except Exception as e:
            print("%-24s FAILED: %s: %s" % (os.path.basename(d), type(e).__name__, str(e).splitlines()[0]))
            continue
        write_json(os.path.join(d, "pair.json"), rec)
        print("%-24s old %7d B  new %7d B" % (os.path.basename(d), rec["old"]["bytes"], rec["new"]["bytes"]))


def cmd_cross(half):
    need_torch()
    for name, p in cross_pairs().items():
        d = os.path.join(GATE, name + "-2.6to2.14")
        if half == "old":
            rec = export_one(p["old"], os.path.join(d, "old.pt2"))
            write_json(os.path.join(d, "old.json"), rec)
        else:
            with open(os.path.join(d, "old.json")) as f:
                old = json.load(f)
            os.remove(os.path.join(d, "old.json"))
            rec = pair_record(os.path.basename(d), p, old["torch_version"], torch.__version__)
            rec["old"] = old
            rec["new"] = export_one(p["new"], os.path.join(d, "new.pt2"))
            write_json(os.path.join(d, "pair.json"), rec)
        print("%-28s %s done" % (os.path.basename(d), half))


def cmd_boundary_archives():
    need_torch()
    index = {}
    for name, (desc, v) in boundary_models().items():
        rec = export_one(v, os.path.join(BOUND_ARCH, name + ".pt2"))
        rec["description"] = desc
        index[name] = rec
        print("%-22s %6d B  %s" % (name, rec["bytes"], rec["range_constraints"]))
    write_json(os.path.join(BOUND_ARCH, "index.json"), index)


def sh(*argv):
    print("+", " ".join(argv), flush=True)
    subprocess.run(argv, check=True, cwd=ROOT)


def cmd_all(shapegate):
    py = "python3"
    me = "tools/make_gate_pairs.py"
    sh(RUN, CHROOT["2.14"], py, me, "export", "2.14")
    sh(RUN, CHROOT["2.6"], py, me, "export", "2.6")
    sh(RUN, CHROOT["2.6"], py, me, "cross-old")
    sh(RUN, CHROOT["2.14"], py, me, "cross-new")
    sh(RUN, CHROOT["2.14"], py, "tools/gate_truth.py", "--torch", "2.14")
    sh(RUN, CHROOT["2.6"], py, "tools/gate_truth.py", "--torch", "2.6")
    sh(RUN, CHROOT["2.14"], py, me, "boundary-archives")
    sh(py, "tools/verify_boundaries.py", "verify", "--shapegate", shapegate)
    sh(RUN, CHROOT["2.14"], py, "tools/verify_boundaries.py", "run", "--torch", "2.14")
    sh(RUN, CHROOT["2.6"], py, "tools/verify_boundaries.py", "run", "--torch", "2.6")
    sh(py, "tools/verify_boundaries.py", "report")


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "all":
        sg = rest[rest.index("--shapegate") + 1] if "--shapegate" in rest else "build/shapegate"
        cmd_all(sg)
    elif cmd == "export":
        cmd_export(rest[0], rest[1:])
    elif cmd == "torch-trace":
        tag, name = rest[0], rest[1]
        for half in ("old", "new"):
            d = os.path.join(GATE, "%s-%s" % (name, tag), half + ".torch_trace")
            tmp = d + ".tmp"
            subprocess.run([sys.executable, __file__, "export-one", name, half, os.path.join("/tmp", "tt.pt2")],
                           check=True, env=dict(os.environ, TORCH_TRACE=os.path.abspath(tmp)))
            logs = [f for f in os.listdir(tmp) if f.endswith(".log")]
            os.makedirs(d, exist_ok=True)
            os.replace(os.path.join(tmp, logs[0]), os.path.join(d, "torch_trace.log"))
            for f in os.listdir(tmp):
                os.remove(os.path.join(tmp, f))
            os.rmdir(tmp)
            print("%s-%s %s: %s" % (name, tag, half, d))
    elif cmd == "export-one":
        need_torch()
        export_one(pairs()[rest[0]][rest[1]], rest[2])
    elif cmd == "traces":
        cmd_traces(rest[0], rest[1:])
    elif cmd in ("cross-old", "cross-new"):
        cmd_cross(cmd[6:])
    elif cmd == "boundary-archives":
        cmd_boundary_archives()
    elif cmd == "list":
        need_torch()
        for n, p in list(pairs().items()) + list(cross_pairs().items()):
            print("%-16s %-10s %s" % (n, p["expected"], p["change"]))
    else:
        print("unknown command %r (see --help)" % cmd, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
