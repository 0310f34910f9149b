"""Reconstructed scenarios of the torch 2.14 reference corpus (tests/corpus/cases/).

The scripts that built the corpus models are not part of the corpus. Each function below rebuilds
one case from what the corpus does record: its description, its example inputs (case.json
`inputs`), the user's spec (`dynamic_shapes_repr`), the user source lines in the guards and in
torch's structured trace, and the exported graph (graph.txt). A function returns the registry's
form (tests/corpus/gen/registry.py): {"model", "args", "kwargs", "dynamic_shapes"}; a spec that
torch rejects when it is built (Dim(min > max)) raises from the function, as in the registry.

tools/reexport.py checks every reconstruction against the corpus (outcome, message, guards)
before it uses it. Needs torch (run inside the reference chroot, see tools/README.md).
"""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

CASES = {}


def case(name, strict=False):
    """Register fn under `name`; strict=True means torch.export.export(strict=True)."""
    def deco(fn):
        if name in CASES:
            raise KeyError(f"duplicate case {name}")
        CASES[name] = {"fn": fn, "strict": strict}
        return fn
    return deco


def build(fwd, params=None, buffers=None, consts=None, modules=None):
    """A module whose forward is `fwd(self, ...)`, with the given parameters (name -> tensor),
    buffers, plain tensor attributes and submodules, assigned in dict order."""
    cls = type("M", (nn.Module,), {"forward": fwd})
    m = cls()
    for k, v in (params or {}).items():
        setattr(m, k, nn.Parameter(v))
    for k, v in (buffers or {}).items():
        m.register_buffer(k, v)
    for k, v in (modules or {}).items():
        setattr(m, k, v)
    for k, v in (consts or {}).items():
        setattr(m, k, v)
    return m


def r(*shape):
    return torch.randn(*shape)


def sc(model, args, ds, kwargs=None):
    return {"model": model, "args": tuple(args), "kwargs": kwargs or {}, "dynamic_shapes": ds}


def dims(name, n, lo=0, hi=None):
    return [Dim(f"{name}{i}", min=lo, max=hi) for i in range(n)]


# ---------------------------------------------------------------- elementwise, equality
def _add(self, x, y):
    return x + y


def _cat_self(self, x, y):
    return torch.cat([x, x]) + y


@case("err_eq_add")
def err_eq_add():
    return sc(build(_add), [r(4, 3), r(4, 3)], {"x": {0: Dim("dx", min=0)}, "y": {0: Dim("dy", min=0)}})


@case("err_eq_add_strict", strict=True)
def err_eq_add_strict():
    return err_eq_add()


@case("ok_add_shared_dim")
def ok_add_shared_dim():
    b = Dim("b", min=2, max=64)
    return sc(build(_add), [r(4, 3), r(4, 3)], {"x": {0: b}, "y": {0: b}})


@case("ok_dynamic_hint_eq_named")
def ok_dynamic_hint_eq_named():
    return sc(build(_add), [r(4, 3), r(4, 3)], {"x": {0: Dim.DYNAMIC}, "y": {0: Dim("dy", min=0, max=32)}})


@case("err_broadcast_size1_named_dim")
def err_broadcast_size1_named_dim():
    return sc(build(_add), [r(4, 3), r(1, 3)], {"x": {0: Dim("dx", min=0)}, "y": {0: Dim("dy", min=0)}})


@case("ok_broadcast_auto_size1")
def ok_broadcast_auto_size1():
    return sc(build(_add), [r(4, 3), r(1, 3)], {"x": {0: Dim.AUTO}, "y": {0: Dim.AUTO}})


@case("err_broadcast_dynamic_both")
def err_broadcast_dynamic_both():
    d = Dim.DYNAMIC
    return sc(build(lambda self, x, y: x * y), [r(4, 1), r(1, 5)], {"x": {0: d, 1: d}, "y": {0: d, 1: d}})


@case("err_eq_cat_other_dim")
def err_eq_cat_other_dim():
    return sc(build(lambda self, x, y: torch.cat([x, y], dim=1)), [r(4, 3), r(4, 5)],
              {"x": {0: Dim("bx", min=0), 1: Dim("cx", min=0)}, "y": {0: Dim("by", min=0), 1: Dim("cy", min=0)}})


@case("err_eq_matmul_inner")
def err_eq_matmul_inner():
    return sc(build(lambda self, x, y: x @ y), [r(3, 5), r(5, 7)],
              {"x": {0: Dim("m", min=0), 1: Dim("k", min=0)}, "y": {0: Dim("k2", min=0), 1: Dim("n", min=0)}})


@case("ok_eq_matmul_shared")
def ok_eq_matmul_shared():
    k = Dim("k", min=0, max=256)
    return sc(build(lambda self, x, y: x @ y), [r(3, 5), r(5, 7)],
              {"x": {0: Dim("m", min=0, max=256), 1: k}, "y": {0: k, 1: Dim("n", min=0, max=256)}})


# ---------------------------------------------------------------- ranges from checks and branches
def _check_ge16(self, x):
    torch._check(x.shape[0] >= 16)
    return x + 1


def _branch_gt10(self, x):
    if x.shape[0] > 10:
        return x * 2
    return x + 1


def _two_checks(self, x):
    torch._check(x.shape[1] >= 4)
    torch._check(x.shape[0] <= 16)
    return x * 2


def _check_ge4(self, x):
    torch._check(x.shape[0] >= 4)
    return x + 1


def _check_ge8(self, x):
    torch._check(x.shape[0] >= 8)
    return x * 3


@case("err_check_ge")
def err_check_ge():
    return sc(build(_check_ge16), [r(20, 3)], {"x": {0: Dim("dx", min=2, max=100)}})


@case("err_python_branch_gt")
def err_python_branch_gt():
    return sc(build(_branch_gt10), [r(16, 3)], {"x": {0: Dim("dx", min=2, max=64)}})


@case("err_two_dims_two_guards")
def err_two_dims_two_guards():
    return sc(build(_two_checks), [r(8, 10)], {"x": {0: Dim("B", min=0), 1: Dim("T", min=0, max=128)}})


@case("ok_check_implied_by_range")
def ok_check_implied_by_range():
    return sc(build(_check_ge4), [r(8, 3)], {"x": {0: Dim("dx", min=4, max=64)}})


@case("ok_auto_range_hint")
def ok_auto_range_hint():
    return sc(build(_check_ge8), [r(20, 3)], {"x": {0: Dim.AUTO(min=4, max=64), 1: Dim.STATIC}})


# ---------------------------------------------------------------- specialization
def _add_p(self, x):
    return x + self.p


def _lin(self, x):
    return self.lin(x)


@case("err_specialize_param_add")
def err_specialize_param_add():
    return sc(build(_add_p, params={"p": r(4, 3)}), [r(4, 3)], {"x": {0: Dim("dx", min=0, max=64)}})


@case("err_dynamic_hint_specialized")
def err_dynamic_hint_specialized():
    return sc(build(_add_p, params={"p": r(4, 3)}), [r(4, 3)], {"x": {0: Dim.DYNAMIC}})


@case("ok_auto_specialized")
def ok_auto_specialized():
    return sc(build(_add_p, params={"p": r(4, 3)}), [r(4, 3)], {"x": {0: Dim.AUTO}})


@case("err_specialize_linear_in_features")
def err_specialize_linear_in_features():
    return sc(build(_lin, modules={"lin": nn.Linear(8, 4)}), [r(3, 8)],
              {"x": {0: Dim("batch", min=0), 1: Dim("din", min=0)}})


@case("ok_linear_batch_min1")
def ok_linear_batch_min1():
    return sc(build(lambda self, x: self.lin(x).relu(), modules={"lin": nn.Linear(8, 4)}), [r(4, 8)],
              {"x": {0: Dim("batch", min=1, max=1024)}})


@case("err_example_size0")
def err_example_size0():
    return sc(build(lambda self, x: x * 2), [r(0, 3)], {"x": {0: Dim("dx", min=0, max=10)}})


# ---------------------------------------------------------------- derived dims and divisibility
@case("err_derived_cat_self")
def err_derived_cat_self():
    return sc(build(_cat_self), [r(4), r(8)], {"x": {0: Dim("dx", min=0)}, "y": {0: Dim("dy", min=0)}})


@case("ok_derived_spec_2x")
def ok_derived_spec_2x():
    dx = Dim("dx", min=2, max=32)
    return sc(build(_cat_self), [r(4), r(8)], {"x": {0: dx}, "y": {0: 2 * dx}})


@case("err_derived_slice_plus1")
def err_derived_slice_plus1():
    return sc(build(lambda self, x, y: x[1:] + y), [r(5), r(4)],
              {"x": {0: Dim("dx", min=0)}, "y": {0: Dim("dy", min=0)}})


@case("err_derived_example_mismatch")
def err_derived_example_mismatch():
    dx = Dim("dx", min=2, max=32)
    return sc(build(lambda self, x, y: x.sum() + y.sum()), [r(4), r(6)], {"x": {0: dx}, "y": {0: dx + 1}})


@case("err_derived_negative_min")
def err_derived_negative_min():
    dx = Dim("dx", min=0, max=10)
    return sc(build(lambda self, x, y: x[1:] + y), [r(4), r(3)], {"x": {0: dx}, "y": {0: dx - 1}})


@case("err_div_view_8")
def err_div_view_8():
    return sc(build(lambda self, x: x.view(-1, 8)), [r(16)], {"x": {0: Dim("dx", min=0)}})


@case("err_div_view_8_bounded")
def err_div_view_8_bounded():
    return sc(build(lambda self, x: x.view(-1, 8)), [r(16)], {"x": {0: Dim("dx", min=3, max=100)}})


@case("err_div_offset")
def err_div_offset():
    return sc(build(lambda self, x: x[1:].view(-1, 4)), [r(17)], {"x": {0: Dim("dx", min=0, max=1000)}})


@case("err_div_2d_reshape")
def err_div_2d_reshape():
    return sc(build(lambda self, x: x.reshape(-1, 4)), [r(4, 6)], {"x": {0: Dim("B", min=0, max=64)}})


@case("ok_conv2d_stride2")
def ok_conv2d_stride2():
    def fwd(self, x):
        return self.pool(self.bn(self.conv(x)).relu()) + self.offset
    m = build(fwd, modules={"conv": nn.Conv2d(3, 4, 3, stride=2, padding=1), "bn": nn.BatchNorm2d(4),
                            "pool": nn.MaxPool2d(2)}, consts={"offset": torch.zeros(1, 4, 1, 1)})
    return sc(m, [r(2, 3, 32, 32)],
              {"x": {0: Dim("N", min=1, max=16), 2: Dim("H", min=8, max=256), 3: Dim("W", min=8, max=256)}})


@case("ok_dim_min0")
def ok_dim_min0():
    return sc(build(lambda self, x: x.sum(0)), [r(4, 3)], {"x": {0: Dim("dx", min=0, max=10)}})


# ---------------------------------------------------------------- spec errors
@case("err_dim_min_gt_max")
def err_dim_min_gt_max():
    dx = Dim("dx", min=10, max=5)  # raises: the case fails while its spec is built
    return sc(build(lambda self, x: x + 1), [r(4)], {"x": {0: dx}})


@case("err_dim_same_name_diff_range")
def err_dim_same_name_diff_range():
    return sc(build(_add), [r(4), r(4)], {"x": {0: Dim("d", min=0, max=10)}, "y": {0: Dim("d", min=0, max=20)}})


@case("err_shared_dim_example_mismatch")
def err_shared_dim_example_mismatch():
    d = Dim("d", min=0, max=10)
    return sc(build(lambda self, x, y: x.sum() + y.sum()), [r(4), r(5)], {"x": {0: d}, "y": {0: d}})


@case("err_spec_bad_keys")
def err_spec_bad_keys():
    return sc(build(lambda self, x: x + 1), [r(7)], {"inp": {0: Dim("dx", min=0)}})


# ---------------------------------------------------------------- pytrees, unbacked, data-dependent
@case("ok_list_positional_dims")
def ok_list_positional_dims():
    return sc(build(lambda self, x: x.mean(dim=(1, 2))), [r(3, 4, 5)],
              {"x": [Dim("B", min=0, max=10), None, Dim("T", min=0, max=99)]})


@case("ok_nested_dict_list")
def ok_nested_dict_list():
    def fwd(self, inputs, scale=None):
        a = inputs["a"]
        y, z = inputs["b"]
        return a * scale + y + z.sum(1)
    B = Dim("B", min=2, max=64)
    return sc(build(fwd), [{"a": r(4, 3), "b": [r(4, 3), r(4, 5, 3)]}],
              {"inputs": {"a": {0: B}, "b": [{0: B}, {0: B, 1: Dim("T", min=0, max=32)}]}, "scale": {0: B}},
              kwargs={"scale": r(4, 3)})


@case("err_data_dependent_branch")
def err_data_dependent_branch():
    def fwd(self, x, t):
        if t.item() > 0:
            return x + 1
        return x - 1
    return sc(build(fwd), [r(4), torch.tensor(3)], {"x": {0: Dim("dx", min=0)}, "t": None})


@case("ok_nonzero")
def ok_nonzero():
    def fwd(self, x):
        nz = torch.nonzero(x > 0)
        torch._check(nz.shape[0] <= x.shape[0])
        return nz.float().sum(0), nz.shape[0]
    return sc(build(fwd), [r(6)], {"x": {0: Dim("dx", min=0, max=100)}})


@case("ok_unbacked_eq_input_dim")
def ok_unbacked_eq_input_dim():
    def fwd(self, x, t):
        n = t.item()
        torch._check(n == x.shape[0])
        return torch.zeros(n) + x
    return sc(build(fwd), [r(6), torch.tensor(6)], {"x": {0: Dim("dx", min=0, max=100)}, "t": None})


@case("ok_unbacked_item_check_is_size")
def ok_unbacked_item_check_is_size():
    def fwd(self, x, t):
        n = t.item()
        torch._check_is_size(n)
        torch._check(n <= 8)
        return torch.ones(n) * 2, x + 1
    return sc(build(fwd), [r(4, 3), torch.tensor(5)], {"x": {0: Dim("dx", min=0, max=64)}, "t": None})


# ---------------------------------------------------------------- large
@case("large_60_list_separate_err")
def large_60_list_separate_err():
    def fwd(self, xs):
        acc = xs[0]
        for i, x in enumerate(xs[1:], 1):
            acc = acc + x * float(i)
        return acc
    return sc(build(fwd), [[r(5, 4) for _ in range(60)]], {"xs": [{0: d} for d in dims("d", 60, 0, 4096)]})


@case("large_100_list_auto_ok")
def large_100_list_auto_ok():
    def fwd(self, xs):
        acc = xs[0]
        for i, x in enumerate(xs[1:], 1):
            acc = acc + (x[1:] if i % 2 == 0 else x)
        return acc
    xs = [r(7 if i > 0 and i % 2 == 0 else 6) for i in range(100)]
    return sc(build(fwd), [xs], {"xs": [{0: Dim.AUTO} for _ in range(100)]})


@case("large_100_div_ranges_err")
def large_100_div_ranges_err():
    def fwd(self, xs):
        acc = 0
        for i, x in enumerate(xs):
            torch._check(x.shape[0] <= 2000 + i)
            acc = acc + x.view(-1, 8).sum()
        return acc
    return sc(build(fwd), [[r(24) for _ in range(100)]], {"xs": [{0: d} for d in dims("d", 100, 2, 4096)]})


@case("large_40_varargs_chain_derived_err")
def large_40_varargs_chain_derived_err():
    def fwd(self, *xs):
        acc = xs[0]
        for i, x in enumerate(xs[1:], 1):
            acc = acc + x[i:]
        return acc
    return sc(build(fwd), [r(6 + i) for i in range(40)], {"xs": tuple({0: d} for d in dims("d", 40, 0, 1000))})


class Block(nn.Module):
    """Pre-norm attention + MLP block (d=16, 2 heads, ff 32) as in graph.txt."""

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
    def __init__(self, layers, vocab=50, d=16, maxlen=64):
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


def _lm_inputs():
    return [torch.randint(0, 50, (2, 12)), torch.ones(2, 12, dtype=torch.int64)]


def _lm_spec():
    B, T = Dim("B", min=0, max=8), Dim("T", min=0, max=64)
    return {"ids": {0: B, 1: T}, "mask": {0: B, 1: T}}


@case("large_transformer_ok")
def large_transformer_ok():
    return sc(TinyLM(2), _lm_inputs(), _lm_spec())


@case("large_transformer_ok_strict", strict=True)
def large_transformer_ok_strict():
    return sc(TinyLM(2), _lm_inputs(), _lm_spec())


@case("large_transformer_8layers_auto")
def large_transformer_8layers_auto():
    a = Dim.AUTO
    return sc(TinyLM(8), _lm_inputs(), {"ids": {0: a, 1: a}, "mask": {0: a, 1: a}})
