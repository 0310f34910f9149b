"""Scenarios for issue 12 (never a wrong answer on real torch cases), registry style.

Each function returns {"model", "args", "kwargs", "dynamic_shapes"} (registry.py); a spec that
torch rejects while it is being built raises from the function (phase "spec_construction"), and a
scenario that uses an API this torch lacks raises AttributeError/TypeError (outcome "unsupported",
e.g. `Dim.AUTO(min=2, max=10)` on torch 2.6).  Run with run_cases.py (module docstring there).

Tags name the issue-12 class (CATALOG.md groups by them):
  bounded_hint   Dim.AUTO / Dim.DYNAMIC with explicit min/max (contradicted or consistent)
  data_dependent torch fails on a data-dependent guard (GuardOnDataDependentSymNode)
  non_tensor     int/float/bool/None/str arguments, tuple and dict specs
  input_kinds    dataclasses, namedtuples, OrderedDict, nested containers, kwargs-only tensors,
                 Dim.STATIC, torch.export.dims, None entries
  invalid_spec   a dim beyond the rank, a wrong spec structure
  pinned         a dim pinned to one value (the fix is `dx = 4`)
  zero_one       0/1 examples: Dims and derived roots that torch specialises
  inexpressible  relations Dim cannot express (dz = dx + dy, conv output sizes, products)
  example_range  an example outside the declared range
  cat_reshape    cat then reshape(-1, 4) of two dynamic inputs
  conv_pool      conv + pooling with a too-small min
  unbacked       unbacked symbols and runtime asserts
  guards_code    exports whose 2.14 model.pt2 carries guards_code (equality, divisibility)
  naming         messages that name dims as `d0 + 1` (list inputs, derived dims)
  shape_ops      shape arithmetic real models do: attention with separate q/kv lengths and masks,
                 padding to a multiple, unflatten/flatten, expand/repeat, split/chunk, narrow,
                 cat of three inputs, max/min of sizes, modulo, min-only / max-only Dims

Models are tiny (a few parameters at most) so that the archives stay small.  FIXES holds, for
cases whose spec is wrong, a corrected spec that real torch exports (the expectations' "how",
tools/expect_12.py); it is not used to record the case.
"""

import collections
import dataclasses

import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

from registry import CASES, case  # noqa: F401 - CASES: the registry, read by run_cases.py

FIXES = {}


def fix(name):
    """Register fn as the corrected spec of case `name`: fn() returns a dynamic_shapes for the same
    model and example inputs."""
    def deco(fn):
        FIXES[name] = fn
        return fn
    return deco


def module(fwd, **attrs):
    """A module whose forward is fwd(self, ...); attrs are submodules / parameters / buffers."""
    cls = type("M", (nn.Module,), {"forward": fwd})
    m = cls()
    for k, v in attrs.items():
        setattr(m, k, v)
    return m


def r(*shape):
    return torch.randn(*shape)


def sc(model, args, ds, kwargs=None, notes=None):
    d = {"model": model, "args": tuple(args), "kwargs": kwargs or {}, "dynamic_shapes": ds}
    if notes:
        d["notes"] = notes
    return d


# ============================================================== bounded Dim.AUTO / Dim.DYNAMIC
class CheckGe(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        torch._check(x.shape[0] >= self.n)
        return x * 2


class CheckLe(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        torch._check(x.shape[0] <= self.n)
        return x + 1


@case("hint_auto_range_conflict", "Dim.AUTO(min=2, max=10) on a dim the model checks >= 16 (example 20): "
      "torch raises the user-range / inferred-range conflict.", tags=["bounded_hint"])
def hint_auto_range_conflict():
    return sc(CheckGe(16), [r(20, 3)], {"x": {0: Dim.AUTO(min=2, max=10)}})


@fix("hint_auto_range_conflict")
def _():
    return {"x": {0: Dim.AUTO(min=16, max=64)}}


@case("hint_dynamic_range_conflict", "Dim.DYNAMIC(min=2, max=10) with torch._check(x.shape[0] >= 16), "
      "example 20: range conflict.", tags=["bounded_hint"])
def hint_dynamic_range_conflict():
    return sc(CheckGe(16), [r(20, 3)], {"x": {0: Dim.DYNAMIC(min=2, max=10)}})


@fix("hint_dynamic_range_conflict")
def _():
    return {"x": {0: Dim.DYNAMIC(min=16, max=64)}}


@case("hint_auto_max_only_conflict", "Dim.AUTO(max=4) (no min) on a dim that must be >= 8 (example 12): "
      "the conflict message prints min None.", tags=["bounded_hint"])
def hint_auto_max_only_conflict():
    return sc(CheckGe(8), [r(12, 2)], {"x": {0: Dim.AUTO(max=4)}})


@fix("hint_auto_max_only_conflict")
def _():
    return {"x": {0: Dim.AUTO(min=8)}}


@case("hint_dynamic_upper_conflict", "Dim.DYNAMIC(min=32, max=64) on a dim the model checks <= 16 "
      "(example 8): the user range lies above the inferred one.", tags=["bounded_hint"])
def hint_dynamic_upper_conflict():
    return sc(CheckLe(16), [r(8, 3)], {"x": {0: Dim.DYNAMIC(min=32, max=64)}})


@fix("hint_dynamic_upper_conflict")
def _():
    return {"x": {0: Dim.DYNAMIC(min=2, max=16)}}


@case("hint_dynamic_overlap_narrowed", "Dim.DYNAMIC(min=2, max=64) with torch._check(x.shape[0] >= 8), "
      "example 16: the ranges overlap, torch exports and narrows to [8, 64] silently.",
      tags=["bounded_hint"])
def hint_dynamic_overlap_narrowed():
    return sc(CheckGe(8), [r(16, 3)], {"x": {0: Dim.DYNAMIC(min=2, max=64)}})


@fix("hint_dynamic_overlap_narrowed")
def _():
    return {"x": {0: Dim.DYNAMIC(min=8, max=64)}}


@case("hint_auto_consistent_ok", "Dim.AUTO(min=8, max=64) and Dim.DYNAMIC(min=8, max=64) on x and y "
      "of x + y with torch._check(x.shape[0] >= 4): consistent bounds, ok.", tags=["bounded_hint"])
def hint_auto_consistent_ok():
    def fwd(self, x, y):
        torch._check(x.shape[0] >= 4)
        return x + y
    return sc(module(fwd), [r(16, 3), r(16, 3)],
              {"x": {0: Dim.AUTO(min=8, max=64)}, "y": {0: Dim.DYNAMIC(min=8, max=64)}})


@case("hint_dynamic_bounded_specialized", "Dim.DYNAMIC(min=2, max=16) on a dim the model forces to 4 "
      "(x + Parameter(4, 3)): torch's 'tracing inferred a static shape' conflict.", tags=["bounded_hint", "pinned"])
def hint_dynamic_bounded_specialized():
    def fwd(self, x):
        return x + self.w
    return sc(module(fwd, w=nn.Parameter(torch.zeros(4, 3))), [r(4, 3)], {"x": {0: Dim.DYNAMIC(min=2, max=16)}})


@fix("hint_dynamic_bounded_specialized")
def _():
    return {"x": {0: 4}}


@case("hint_auto_two_dims_conflict", "Dim.AUTO(min=2, max=8) on B and Dim.AUTO(min=4, max=32) on T where the "
      "model needs T >= 40 and B <= 16: only T conflicts.", tags=["bounded_hint"])
def hint_auto_two_dims_conflict():
    def fwd(self, x):
        torch._check(x.shape[1] >= 40)
        torch._check(x.shape[0] <= 16)
        return x.sum(1)
    return sc(module(fwd), [r(4, 48)], {"x": {0: Dim.AUTO(min=2, max=8), 1: Dim.AUTO(min=4, max=32)}})


@fix("hint_auto_two_dims_conflict")
def _():
    return {"x": {0: Dim.AUTO(min=2, max=8), 1: Dim.AUTO(min=40, max=64)}}


# ============================================================== data-dependent guards
@case("dd_item_lt_size", "n = t.item(); `x[:n] if n < x.shape[0] else x`: a branch on an unbacked "
      "symbol against a dynamic dim (GuardOnDataDependentSymNode).", tags=["data_dependent"])
def dd_item_lt_size():
    def fwd(self, x, t):
        n = t.item()
        if n < x.shape[0]:
            return x[:n] * 2
        return x
    return sc(module(fwd), [r(8, 3), torch.tensor(3)], {"x": {0: Dim("dx", max=64)}, "t": None})


@case("dd_nonzero_count_branch", "Python branch on nonzero().shape[0] > 2 with a dynamic input.",
      tags=["data_dependent"])
def dd_nonzero_count_branch():
    def fwd(self, x):
        nz = x.nonzero()
        if nz.shape[0] > 2:
            return nz.sum()
        return x.sum()
    return sc(module(fwd), [r(8)], {"x": {0: Dim("dx", min=2, max=128)}})


@case("dd_float_item_branch", "Branch on a float x.sum().item() > 0 (unbacked float zuf0), dynamic x, strict=False.",
      tags=["data_dependent"])
def dd_float_item_branch():
    def fwd(self, x):
        if x.sum().item() > 0:
            return x * 2
        return x - 1
    return sc(module(fwd), [r(6, 2)], {"x": {0: Dim("dx")}})


@case("dd_view_unbacked", "torch.zeros(t.item()).view(-1, 2) + dynamic x: torch 2.14 defers the guard "
      "to a runtime assert, torch 2.6 fails on Ne(u0//2, 1).", tags=["data_dependent", "unbacked"])
def dd_view_unbacked():
    def fwd(self, x, t):
        n = t.item()
        return torch.zeros(n).view(-1, 2).sum() + x.sum()
    return sc(module(fwd), [r(8), torch.tensor(6)], {"x": {0: Dim("dx")}, "t": None})


@case("dd_item_branch_strict", "Strict export of a branch on t.item() == 3 with a dynamic input.",
      strict=True, tags=["data_dependent"])
def dd_item_branch_strict():
    def fwd(self, x, t):
        if t.item() == 3:
            return x + 1
        return x
    return sc(module(fwd), [r(5, 2), torch.tensor(3)], {"x": {0: Dim("dx", max=32)}, "t": None})


# ============================================================== non-tensor arguments
@case("nt_int_dict_ok", "forward(x, n: int) with x * n, dict spec {'x': {0: dx}, 'n': None}.", tags=["non_tensor"])
def nt_int_dict_ok():
    return sc(module(lambda self, x, n: x * n), [r(4, 3), 3], {"x": {0: Dim("dx", max=64)}, "n": None})


@case("nt_int_tuple_err", "forward(x, k: int, y) with x + y, positional tuple spec and separate Dims: "
      "dy = dx, an int in the middle.", tags=["non_tensor"])
def nt_int_tuple_err():
    return sc(module(lambda self, x, k, y: (x + y) * k), [r(5, 2), 2, r(5, 2)],
              ({0: Dim("dx", max=50)}, None, {0: Dim("dy", max=50)}))


@fix("nt_int_tuple_err")
def _():
    dx = Dim("dx", max=50)
    return ({0: dx}, None, {0: dx})


@case("nt_mixed_tuple_err", "forward(x, f: float, b: bool, s: str, z: None) with a torch._check(x.shape[0] >= 6), "
      "tuple spec with None for every non-tensor.", tags=["non_tensor"])
def nt_mixed_tuple_err():
    def fwd(self, x, f, b, s, z):
        torch._check(x.shape[0] >= 6)
        y = x * f if b else x
        return y + len(s) if z is None else y
    return sc(module(fwd), [r(8, 2), 2.5, True, "abc", None], ({0: Dim("dx", max=100)}, None, None, None, None))


@fix("nt_mixed_tuple_err")
def _():
    return ({0: Dim("dx", min=6, max=100)}, None, None, None, None)


@case("nt_mixed_dict_ok", "forward(x, scale: float, flag: bool, tag: str, opt=None) with a dict spec naming "
      "every argument (None for the non-tensors); spec valid.", tags=["non_tensor"])
def nt_mixed_dict_ok():
    def fwd(self, x, scale, flag, tag, opt=None):
        return x * scale if flag else x
    return sc(module(fwd), [r(6, 4), 0.5, False, "t", None],
              {"x": {0: Dim("dx", min=2, max=32), 1: Dim("dc", min=2, max=16)},
               "scale": None, "flag": None, "tag": None, "opt": None})


@case("nt_int_kwarg_div_err", "forward(x, *, groups: int = 4) with x.view(-1, groups): int kwarg, "
      "divisibility refutes Dim('dx', max=64).", tags=["non_tensor"])
def nt_int_kwarg_div_err():
    def fwd(self, x, *, groups=4):
        return x.view(-1, groups).sum(1)
    return sc(module(fwd), [r(12)], {"x": {0: Dim("dx", max=64)}, "groups": None}, kwargs={"groups": 4})


@fix("nt_int_kwarg_div_err")
def _():
    _dx = Dim("_dx", min=2, max=16)
    return {"x": {0: 4 * _dx}, "groups": None}


# ============================================================== input kinds
@dataclasses.dataclass
class Pair:
    a: torch.Tensor
    b: torch.Tensor


torch.export.register_dataclass(Pair)

NT = collections.namedtuple("NT", ["img", "mask"])


@case("kind_dataclass_ok", "A register_dataclass'd Pair(a, b) input with p.a + p.b, spec as a list "
      "[{0: d}, {0: d}] in field order.", tags=["input_kinds"])
def kind_dataclass_ok():
    d = Dim("d", min=2, max=64)
    return sc(module(lambda self, p: p.a + p.b), [Pair(r(4, 3), r(4, 3))], {"p": [{0: d}, {0: d}]})


@case("kind_dataclass_err", "register_dataclass'd Pair(a, b) with separate Dims da, db for p.a + p.b: db = da.",
      tags=["input_kinds"])
def kind_dataclass_err():
    return sc(module(lambda self, p: p.a * p.b), [Pair(r(6, 2), r(6, 2))],
              {"p": [{0: Dim("da", max=40)}, {0: Dim("db", max=40)}]})


@fix("kind_dataclass_err")
def _():
    da = Dim("da", max=40)
    return {"p": [{0: da}, {0: da}]}


@case("kind_namedtuple_err", "namedtuple NT(img, mask) input, spec as NT(...); img.view(-1, 4) needs img's "
      "dim 0 even (img is (H, 2)) and mask shares the Dim.", tags=["input_kinds"])
def kind_namedtuple_err():
    def fwd(self, p):
        return p.img.reshape(-1, 4).sum() + p.mask.sum()
    h = Dim("h", max=30)
    return sc(module(fwd), [NT(r(6, 2), r(6))], {"p": NT({0: h}, {0: h})})


@fix("kind_namedtuple_err")
def _():
    _h = Dim("_h", min=1, max=15)
    return {"p": NT({0: 2 * _h}, {0: 2 * _h})}


@case("kind_odict_ok", "OrderedDict input {'q', 'k'} with q @ k.T, spec as an OrderedDict; valid.", tags=["input_kinds"])
def kind_odict_ok():
    def fwd(self, d):
        return d["q"] @ d["k"].transpose(0, 1)
    t = Dim("t", max=64)
    s = Dim("s", max=64)
    inp = collections.OrderedDict(q=r(5, 4), k=r(7, 4))
    return sc(module(fwd), [inp], {"d": collections.OrderedDict(q={0: t}, k={0: s})})


@case("kind_nested_err", "Nested input {'enc': [a, {'m': b}], 'dec': c}: a + b + c needs equal dims, "
      "b's Dim separate; c's torch._check(c.shape[0] <= 24) beyond the range.", tags=["input_kinds"])
def kind_nested_err():
    def fwd(self, batch):
        a = batch["enc"][0]
        b = batch["enc"][1]["m"]
        c = batch["dec"]
        torch._check(c.shape[0] <= 24)
        return a + b + c
    n = Dim("n", max=48)
    inp = {"enc": [r(8, 2), {"m": r(8, 2)}], "dec": r(8, 2)}
    return sc(module(fwd), [inp], {"batch": {"enc": [{0: n}, {"m": {0: Dim("nm", max=48)}}], "dec": {0: n}}})


@fix("kind_nested_err")
def _():
    n = Dim("n", max=24)
    return {"batch": {"enc": [{0: n}, {"m": {0: n}}], "dec": {0: n}}}


@case("kind_kwonly_err", "forward(x, *, mask) with a kwargs-only tensor and separate Dims: mask's dim = x's.",
      tags=["input_kinds"])
def kind_kwonly_err():
    class KW(nn.Module):
        def forward(self, x, *, mask):
            return x.masked_fill(mask, 0.0)
    return sc(KW(), [r(6, 3)], {"x": {0: Dim("b", max=32)}, "mask": {0: Dim("bm", max=32)}},
              kwargs={"mask": torch.zeros(6, 3, dtype=torch.bool)})


@fix("kind_kwonly_err")
def _():
    b = Dim("b", max=32)
    return {"x": {0: b}, "mask": {0: b}}


@case("kind_static_dims_none_ok", "torch.export.dims('b', 't', max=32) with Dim.STATIC and None entries "
      "in list-form specs, and an input with spec None: valid.", tags=["input_kinds"])
def kind_static_dims_none_ok():
    def fwd(self, x, w, bias):
        return (x @ w).sum(-1) + bias
    b, t = torch.export.dims("b", "t", max=32)
    return sc(module(fwd), [r(3, 5, 4), r(4, 2), r(5)],
              {"x": [b, t, Dim.STATIC], "w": None, "bias": [t]})


@case("kind_dims_matmul_err", "torch.export.dims('m', 'k', 'k2', 'n', min=1, max=128) for x(m, k) @ y(k2, n): "
      "k2 = k.", tags=["input_kinds"])
def kind_dims_matmul_err():
    m, k, k2, n = torch.export.dims("m", "k", "k2", "n", min=1, max=128)
    return sc(module(lambda self, x, y: x @ y), [r(3, 6), r(6, 2)], {"x": (m, k), "y": (k2, n)})


@fix("kind_dims_matmul_err")
def _():
    m, k, n = torch.export.dims("m", "k", "n", min=1, max=128)
    return {"x": (m, k), "y": (k, n)}


@case("kind_list_none_entry_err", "forward(xs: list) with a list spec [None, {0: d1}, {0: d2}] (xs[0] static 5): "
      "torch.cat(xs) + 1 then .view(-1, 3) needs 5 + d1 + d2 divisible by 3.", tags=["input_kinds", "cat_reshape"])
def kind_list_none_entry_err():
    def fwd(self, xs):
        return torch.cat(xs).view(-1, 3).sum(1)
    return sc(module(fwd), [[r(5), r(4), r(3)]], {"xs": [None, {0: Dim("d1", max=20)}, {0: Dim("d2", max=20)}]})


@fix("kind_list_none_entry_err")
def _():
    return {"xs": [None, {0: Dim.AUTO}, {0: Dim.AUTO}]}


# ============================================================== invalid specs
@case("spec_dim_beyond_rank_dict", "Dict spec {0: dx, 2: dz} on a 2-D tensor (dim 2 does not exist).",
      tags=["invalid_spec"])
def spec_dim_beyond_rank_dict():
    return sc(module(lambda self, x: x + 1), [r(4, 3)], {"x": {0: Dim("dx"), 2: Dim("dz")}})


@fix("spec_dim_beyond_rank_dict")
def _():
    return {"x": {0: Dim("dx")}}


@case("spec_dim_beyond_rank_list", "List spec [dx, None, None] (length 3) on a 2-D tensor.", tags=["invalid_spec"])
def spec_dim_beyond_rank_list():
    return sc(module(lambda self, x, y: x * y), [r(4, 3), r(4, 3)],
              {"x": [Dim("dx", max=16), None, None], "y": [Dim("dx", max=16), None]})


@fix("spec_dim_beyond_rank_list")
def _():
    dx = Dim("dx", max=16)
    return {"x": [dx, None], "y": [dx, None]}


@case("spec_structure_dict_for_list", "xs is a list of two tensors; its spec is a dict {0: d} (the per-tensor "
      "form) instead of a list.", tags=["invalid_spec"])
def spec_structure_dict_for_list():
    return sc(module(lambda self, xs: xs[0] + xs[1]), [[r(4, 3), r(4, 3)]], {"xs": {0: Dim("d")}})


@fix("spec_structure_dict_for_list")
def _():
    d = Dim("d")
    return {"xs": [{0: d}, {0: d}]}


@case("spec_structure_short_tuple", "Positional tuple spec with 2 entries for 3 inputs.", tags=["invalid_spec"])
def spec_structure_short_tuple():
    return sc(module(lambda self, x, y, z: x + y + z), [r(4), r(4), r(4)], ({0: Dim("d")}, {0: Dim("d")}))


@fix("spec_structure_short_tuple")
def _():
    d = Dim("d")
    return ({0: d}, {0: d}, {0: d})


@case("spec_structure_namedtuple_as_tuple", "namedtuple input whose spec is a plain tuple.", tags=["invalid_spec", "input_kinds"])
def spec_structure_namedtuple_as_tuple():
    d = Dim("d", max=16)
    return sc(module(lambda self, p: p.img * p.mask), [NT(r(4, 2), r(4, 2))], {"p": ({0: d}, {0: d})})


@fix("spec_structure_namedtuple_as_tuple")
def _():
    d = Dim("d", max=16)
    return {"p": NT({0: d}, {0: d})}


# ============================================================== pinned dims
@case("pin_dim_min_eq_max", "Dim('dx', min=4, max=4): torch refuses to build a Dim whose min equals its max "
      "(the spec must say 4, or Dim.STATIC).", tags=["pinned"])
def pin_dim_min_eq_max():
    return sc(module(lambda self, x: x + 1), [r(4, 3)], {"x": {0: Dim("dx", min=4, max=4)}})


@fix("pin_dim_min_eq_max")
def _():
    return {"x": {0: 4}}


@case("pin_checks_to_one_value", "torch._check(x.shape[0] >= 6) and torch._check(x.shape[0] <= 6) with "
      "Dim('dx', max=64): the guards pin dx to 6; the fix is `dx = 6`.", tags=["pinned"])
def pin_checks_to_one_value():
    def fwd(self, x):
        torch._check(x.shape[0] >= 6)
        torch._check(x.shape[0] <= 6)
        return x * 3
    return sc(module(fwd), [r(6, 2)], {"x": {0: Dim("dx", max=64)}})


@fix("pin_checks_to_one_value")
def _():
    return {"x": {0: 6}}


@case("pin_range_meets_max", "torch._check(x.shape[0] >= 16) with Dim('dx', min=2, max=16), example 16: "
      "the only valid value is 16.", tags=["pinned"])
def pin_range_meets_max():
    return sc(CheckGe(16), [r(16, 2)], {"x": {0: Dim("dx", min=2, max=16)}})


@fix("pin_range_meets_max")
def _():
    return {"x": {0: 16}}


@case("pin_derived_root", "y = dx + 1 (derived) and torch._check(x.shape[0] == 5): the root is pinned, "
      "x and y become 5 and 6.", tags=["pinned"])
def pin_derived_root():
    def fwd(self, x, y):
        torch._check(x.shape[0] == 5)
        return x.sum() + y.sum()
    dx = Dim("dx", max=32)
    return sc(module(fwd), [r(5, 2), r(6, 2)], {"x": {0: dx}, "y": {0: dx + 1}})


@fix("pin_derived_root")
def _():
    return {"x": {0: 5}, "y": {0: 6}}


# ============================================================== 0/1 examples
@case("zo_dim_example1", "Dim('b', max=10) on a dim whose example is 1 (nn.Linear batch).", tags=["zero_one"])
def zo_dim_example1():
    return sc(module(lambda self, x: self.fc(x), fc=nn.Linear(4, 2)), [r(1, 4)], {"x": {0: Dim("b", max=10)}})


@fix("zo_dim_example1")
def _():
    return {"x": {0: 1}}


@case("zo_derived_root_example0", "Root dx with example 0 (x is (0, 3)) and y = dx + 2 (example 2): torch "
      "specialises the root.", tags=["zero_one"])
def zo_derived_root_example0():
    dx = Dim("dx", max=16)
    return sc(module(lambda self, x, y: x.sum() + y.sum()), [r(0, 3), r(2, 3)], {"x": {0: dx}, "y": {0: dx + 2}})


@fix("zo_derived_root_example0")
def _():
    return {"x": {0: 0}, "y": {0: 2}}


@case("zo_derived_only_root1", "Only the derived dim y = dx + 2 is given (example 3, so the root's example is 1); "
      "dx names no input.", tags=["zero_one"])
def zo_derived_only_root1():
    dx = Dim("dx", max=16)
    return sc(module(lambda self, y: y * 2), [r(3, 2)], {"y": {0: dx + 2}})


@fix("zo_derived_only_root1")
def _():
    return {"y": {0: Dim("dy", min=3, max=18)}}


@case("zo_dynamic_example1", "Dim.DYNAMIC on a size-1 example (x(1, 3) + y(1, 3)).", tags=["zero_one"])
def zo_dynamic_example1():
    return sc(module(lambda self, x, y: x + y), [r(1, 3), r(1, 3)], {"x": {0: Dim.DYNAMIC}, "y": {0: Dim.DYNAMIC}})


@fix("zo_dynamic_example1")
def _():
    return {"x": {0: Dim.AUTO}, "y": {0: Dim.AUTO}}


@case("zo_div_root_example1", "x.view(-1, 8) with Dim('dx', max=256) on an example of size 8: torch's fix "
      "dx = 8*_dx has a root whose example is 1.", tags=["zero_one"])
def zo_div_root_example1():
    return sc(module(lambda self, x: x.view(-1, 8).sum(0)), [r(8)], {"x": {0: Dim("dx", max=256)}})


@fix("zo_div_root_example1")
def _():
    return {"x": {0: Dim.AUTO(max=256)}}


@case("zo_derived_fix_root1", "torch.cat([x, x]) + y with separate Dims and x's example 1: the relation "
      "dy = 2*dx has a root with example 1.", tags=["zero_one"])
def zo_derived_fix_root1():
    return sc(module(lambda self, x, y: torch.cat([x, x]) + y), [r(1, 3), r(2, 3)],
              {"x": {0: Dim("dx", max=32)}, "y": {0: Dim("dy", max=64)}})


@fix("zo_derived_fix_root1")
def _():
    return {"x": {0: 1}, "y": {0: 2}}


# ============================================================== relations Dim cannot express
@case("rel_cat_sum", "torch.cat([x, y]) + z with separate Dims dx, dy, dz: z's size is dx + dy, which no Dim "
      "spec can say.", tags=["inexpressible"])
def rel_cat_sum():
    return sc(module(lambda self, x, y, z: torch.cat([x, y]) + z), [r(3, 2), r(4, 2), r(7, 2)],
              {"x": {0: Dim("dx")}, "y": {0: Dim("dy")}, "z": {0: Dim("dz")}})


@fix("rel_cat_sum")
def _():
    return {"x": {0: Dim("dx")}, "y": {0: Dim("dy")}, "z": {0: Dim.AUTO}}


@case("rel_cat_sum_bounded", "torch.cat([x, y]) + z with dx, dy <= 10 and dz <= 15: dz = dx + dy needs "
      "dz >= 4 (torch), and dx + dy <= 15 is not a box.", tags=["inexpressible"])
def rel_cat_sum_bounded():
    return sc(module(lambda self, x, y, z: torch.cat([x, y]) + z), [r(3, 2), r(4, 2), r(7, 2)],
              {"x": {0: Dim("dx", max=10)}, "y": {0: Dim("dy", max=10)}, "z": {0: Dim("dz", max=15)}})


@fix("rel_cat_sum_bounded")
def _():
    return {"x": {0: Dim("dx", max=7)}, "y": {0: Dim("dy", max=8)}, "z": {0: Dim.AUTO}}


@case("rel_conv_stride2_out", "Conv1d(k3, s2)(x) + y with Dims L (x) and Ly (y): Ly = (L - 3)//2 + 1 is "
      "not affine.", tags=["inexpressible"])
def rel_conv_stride2_out():
    return sc(module(lambda self, x, y: self.conv(x) + y, conv=nn.Conv1d(2, 2, 3, stride=2)),
              [r(1, 2, 11), r(1, 2, 5)], {"x": {2: Dim("L", max=128)}, "y": {2: Dim("Ly", max=64)}})


@fix("rel_conv_stride2_out")
def _():
    return {"x": {2: Dim("L", min=5, max=128)}, "y": {2: Dim.AUTO}}


@case("rel_outer_product", "(x[:, None] * y[None, :]).reshape(-1) + z with Dims a, b, c: z's size is a*b.",
      tags=["inexpressible"])
def rel_outer_product():
    def fwd(self, x, y, z):
        return (x[:, None] * y[None, :]).reshape(-1) + z
    return sc(module(fwd), [r(3), r(4), r(12)], {"x": {0: Dim("a", max=16)}, "y": {0: Dim("b", max=16)}, "z": {0: Dim("c", max=256)}})


@fix("rel_outer_product")
def _():
    return {"x": {0: Dim("a", max=16)}, "y": {0: Dim("b", max=16)}, "z": {0: Dim.AUTO}}


@case("rel_conv_same_dim_ok", "Conv1d(k3, padding=1)(x) + y with one Dim L on both: the output length equals "
      "the input's, valid.", tags=["inexpressible"])
def rel_conv_same_dim_ok():
    L = Dim("L", min=2, max=128)
    return sc(module(lambda self, x, y: self.conv(x) + y, conv=nn.Conv1d(2, 2, 3, padding=1)),
              [r(1, 2, 10), r(1, 2, 10)], {"x": {2: L}, "y": {2: L}})


# ============================================================== example outside the range
@case("range_example_above_max", "Dim('dx', min=2, max=10) with an example of size 20.", tags=["example_range"])
def range_example_above_max():
    return sc(module(lambda self, x: x + 1), [r(20, 3)], {"x": {0: Dim("dx", min=2, max=10)}})


@fix("range_example_above_max")
def _():
    return {"x": {0: Dim("dx", min=2, max=20)}}


@case("range_example_below_min", "Dim('n', min=8, max=64) shared by x and y, example size 4.", tags=["example_range"])
def range_example_below_min():
    n = Dim("n", min=8, max=64)
    return sc(module(lambda self, x, y: x - y), [r(4, 2), r(4, 2)], {"x": {0: n}, "y": {0: n}})


@fix("range_example_below_min")
def _():
    n = Dim("n", min=4, max=64)
    return {"x": {0: n}, "y": {0: n}}


@case("range_example_derived_outside", "y = 2*dx with Dim('dx', min=2, max=8) and examples 10, 20 (root 10 > 8).",
      tags=["example_range"])
def range_example_derived_outside():
    dx = Dim("dx", min=2, max=8)
    return sc(module(lambda self, x, y: torch.cat([x, x]) + y), [r(10, 2), r(20, 2)], {"x": {0: dx}, "y": {0: 2 * dx}})


@fix("range_example_derived_outside")
def _():
    dx = Dim("dx", min=2, max=16)
    return {"x": {0: dx}, "y": {0: 2 * dx}}


# ============================================================== cat then reshape(-1, 4)
@case("cr_cat_reshape_2d", "torch.cat([x, y]).reshape(-1, 4) for x(dx, 2), y(dy, 2): needs dx + dy even; "
      "torch's solver keeps the two-symbol guard out of its checks.", tags=["cat_reshape"])
def cr_cat_reshape_2d():
    return sc(module(lambda self, x, y: torch.cat([x, y]).reshape(-1, 4)), [r(3, 2), r(5, 2)],
              {"x": {0: Dim("dx", max=32)}, "y": {0: Dim("dy", max=32)}})


@fix("cr_cat_reshape_2d")
def _():
    return {"x": {0: Dim("dx", max=32)}, "y": {0: Dim.AUTO}}


@case("cr_cat_view_1d_unbounded", "torch.cat([x, y]).view(-1, 4) of 1-D x, y with unbounded Dims: needs "
      "dx + dy divisible by 4.", tags=["cat_reshape"])
def cr_cat_view_1d_unbounded():
    return sc(module(lambda self, x, y: torch.cat([x, y]).view(-1, 4).sum(1)), [r(6), r(10)],
              {"x": {0: Dim("dx")}, "y": {0: Dim("dy")}})


@fix("cr_cat_view_1d_unbounded")
def _():
    return {"x": {0: Dim("dx")}, "y": {0: Dim.AUTO}}


@case("cr_cat_reshape_shared_ok", "torch.cat([x, y]).reshape(-1, 4) with one Dim on x and y (2-D, width 2): "
      "2*d*2 is always divisible by 4, valid.", tags=["cat_reshape"])
def cr_cat_reshape_shared_ok():
    d = Dim("d", max=32)
    return sc(module(lambda self, x, y: torch.cat([x, y]).reshape(-1, 4)), [r(3, 2), r(3, 2)], {"x": {0: d}, "y": {0: d}})


# ============================================================== conv + pooling
@case("cp_conv_pool_min2", "Conv2d(k3) -> MaxPool2d(2) -> Conv2d(k3) with Dim('H', min=2, max=64), "
      "Dim('W', min=2, max=64): the min is too small (needs 8, and parity).", tags=["conv_pool"])
def cp_conv_pool_min2():
    seq = nn.Sequential(nn.Conv2d(1, 2, 3), nn.MaxPool2d(2), nn.Conv2d(2, 2, 3))
    return sc(module(lambda self, x: self.seq(x), seq=seq), [r(1, 1, 16, 16)],
              {"x": {2: Dim("H", min=2, max=64), 3: Dim("W", min=2, max=64)}})


@fix("cp_conv_pool_min2")
def _():
    return {"x": {2: Dim.AUTO(min=8, max=64), 3: Dim.AUTO(min=8, max=64)}}


@case("cp_conv_stride_avgpool", "Conv1d(k5, s2) -> AvgPool1d(3) with Dim('L', min=4, max=512) and a dynamic "
      "batch: L must be >= 9 (conv out >= 3 for the pool).", tags=["conv_pool"])
def cp_conv_stride_avgpool():
    seq = nn.Sequential(nn.Conv1d(1, 1, 5, stride=2), nn.AvgPool1d(3))
    return sc(module(lambda self, x: self.seq(x), seq=seq), [r(2, 1, 40)],
              {"x": {0: Dim("N", max=8), 2: Dim("L", min=4, max=512)}})


@fix("cp_conv_stride_avgpool")
def _():
    return {"x": {0: Dim("N", max=8), 2: Dim.AUTO(min=11, max=512)}}


@case("cp_conv_maxpool1d_specialized", "MaxPool1d(2) after Conv1d(k3, padding=1) with Dim('L', min=4, max=256): "
      "torch's max_pool1d specialises L to the example 16.", tags=["conv_pool", "pinned"])
def cp_conv_maxpool1d_specialized():
    seq = nn.Sequential(nn.Conv1d(1, 1, 3, padding=1), nn.MaxPool1d(2))
    return sc(module(lambda self, x: self.seq(x), seq=seq), [r(1, 1, 16)], {"x": {2: Dim("L", min=4, max=256)}})


# ============================================================== unbacked symbols, runtime asserts
@case("ub_item_checks_ok", "n = t.item(); torch._check(n >= 2); torch._check(n <= x.shape[0]); x[:n]: "
      "unbacked u0 with runtime asserts tied to a dynamic dim.", tags=["unbacked"])
def ub_item_checks_ok():
    def fwd(self, x, t):
        n = t.item()
        torch._check(n >= 2)
        torch._check(n <= x.shape[0])
        return x[:n] * 2
    return sc(module(fwd), [r(8, 3), torch.tensor(3)], {"x": {0: Dim("d", max=64)}, "t": None})


@case("ub_nonzero_index_err", "x[x.nonzero()[:, 0]] plus torch._check(x.shape[0] >= 4) with Dim('dx', max=64): "
      "an unbacked size and a refuted backed guard.", tags=["unbacked"])
def ub_nonzero_index_err():
    def fwd(self, x):
        torch._check(x.shape[0] >= 4)
        idx = x.nonzero()[:, 0]
        return x[idx].sum()
    return sc(module(fwd), [r(8)], {"x": {0: Dim("dx", max=64)}})


@fix("ub_nonzero_index_err")
def _():
    return {"x": {0: Dim("dx", min=4, max=64)}}


@case("ub_masked_select_ok", "masked_select(x, m).view(-1) + a runtime-checked item size: two unbacked "
      "symbols, dynamic x and m sharing a Dim.", tags=["unbacked"])
def ub_masked_select_ok():
    def fwd(self, x, m, t):
        v = torch.masked_select(x, m)
        n = t.item()
        torch._check(n >= 0)
        torch._check(n <= 16)
        return v.sum() + torch.ones(n).sum()
    b = Dim("b", max=16)
    return sc(module(fwd), [r(6, 2), torch.ones(6, 2, dtype=torch.bool), torch.tensor(4)],
              {"x": {0: b}, "m": {0: b}, "t": None})


# ============================================================== guards_code in the 2.14 archive
@case("gc_eq_auto", "x + y with Dim.AUTO on both dim 0: torch infers the equality; the 2.14 archive keeps "
      "L['x'].size()[0] == L['y'].size()[0] in guards_code.", tags=["guards_code"])
def gc_eq_auto():
    return sc(module(lambda self, x, y: x + y), [r(4, 3), r(4, 3)], {"x": {0: Dim.AUTO}, "y": {0: Dim.AUTO}})


@case("gc_div_auto", "x.view(-1, 4) with Dim.AUTO: divisibility by 4 kept in guards_code.", tags=["guards_code"])
def gc_div_auto():
    return sc(module(lambda self, x: x.view(-1, 4).sum(1)), [r(12)], {"x": {0: Dim.AUTO}})


@case("gc_eq_div_mixed", "x.view(-1, 2) + y.view(-1, 2) with AUTO x and a named Dim on y: equality "
      "between the two inputs and divisibility by 2.", tags=["guards_code"])
def gc_eq_div_mixed():
    def fwd(self, x, y):
        return x.view(-1, 2) + y.view(-1, 2)
    return sc(module(fwd), [r(8), r(8)], {"x": {0: Dim.AUTO}, "y": {0: Dim.AUTO(min=2, max=64)}})


@case("gc_eq_dynamic_div", "x * y (Dim.DYNAMIC on both) then .reshape(-1, 3): equality and divisibility "
      "by 3 in guards_code.", tags=["guards_code"])
def gc_eq_dynamic_div():
    return sc(module(lambda self, x, y: (x * y).reshape(-1, 3)), [r(6), r(6)],
              {"x": {0: Dim.DYNAMIC}, "y": {0: Dim.DYNAMIC}})


# ============================================================== names: d0 + 1
@case("nm_list_plus1", "forward(xs) with xs[0][1:] + xs[1], separate Dims d0, d1 in a list spec: "
      "torch says d0 = d1 + 1.", tags=["naming"])
def nm_list_plus1():
    return sc(module(lambda self, xs: xs[0][1:] + xs[1]), [[r(5), r(4)]], {"xs": [{0: Dim("d0", max=50)}, {0: Dim("d1", max=50)}]})


@fix("nm_list_plus1")
def _():
    d1 = Dim("d1", max=49)
    return {"xs": [{0: d1 + 1}, {0: d1}]}


@case("nm_list_derived_guard", "xs = [a, b, c] with spec [{0: d0}, {0: d0 + 1}, {0: d0 + 2}] and "
      "torch._check(xs[2].shape[0] <= 20) over a range up to 30: the guard is on d0 + 2, torch charges d0.",
      tags=["naming"])
def nm_list_derived_guard():
    def fwd(self, xs):
        torch._check(xs[2].shape[0] <= 20)
        return xs[0].sum() + xs[1].sum() + xs[2].sum()
    d0 = Dim("d0", min=2, max=30)
    return sc(module(fwd), [[r(4), r(5), r(6)]], {"xs": [{0: d0}, {0: d0 + 1}, {0: d0 + 2}]})


@fix("nm_list_derived_guard")
def _():
    d0 = Dim("d0", min=2, max=18)
    return {"xs": [{0: d0}, {0: d0 + 1}, {0: d0 + 2}]}


@fix("cp_conv_maxpool1d_specialized")
def _():
    return {"x": {2: 16}}


@case("nm_list_derived_specialized", "xs = [a, b] with spec [{0: d0}, {0: d0 + 1}] and xs[1] + Parameter(5): "
      "d0 + 1 is specialised to 5 (so d0 to 4); torch names the dim `d0 + 1`.", tags=["naming", "pinned"])
def nm_list_derived_specialized():
    def fwd(self, xs):
        return xs[0].sum() + (xs[1] + self.w).sum()
    d0 = Dim("d0", min=2, max=30)
    return sc(module(fwd, w=nn.Parameter(torch.zeros(5))), [[r(4), r(5)]], {"xs": [{0: d0}, {0: d0 + 1}]})


@fix("nm_list_derived_specialized")
def _():
    return {"xs": [{0: 4}, {0: 5}]}


@case("cp_conv_pool_min8_hole", "The Conv2d(k3) -> MaxPool2d(2) -> Conv2d(k3) stack of cp_conv_pool_min2 with "
      "Dim('H', min=8, max=64) on H only (W static): H // 2 != 4 still excludes 8 and 9.", tags=["conv_pool"])
def cp_conv_pool_min8_hole():
    seq = nn.Sequential(nn.Conv2d(1, 2, 3), nn.MaxPool2d(2), nn.Conv2d(2, 2, 3))
    return sc(module(lambda self, x: self.seq(x), seq=seq), [r(1, 1, 16, 12)], {"x": {2: Dim("H", min=8, max=64)}})


@fix("cp_conv_pool_min8_hole")
def _():
    return {"x": {2: Dim("H", min=10, max=64)}}


@case("nm_dict_list_plus2", "{'segs': [a, b]} with b = a[2:] relation and separate Dims: names inside a "
      "dict of lists.", tags=["naming", "input_kinds"])
def nm_dict_list_plus2():
    def fwd(self, inp):
        a, b = inp["segs"]
        return a[2:] * b
    return sc(module(fwd), [{"segs": [r(7, 2), r(5, 2)]}],
              {"inp": {"segs": [{0: Dim("s0", max=40)}, {0: Dim("s1", max=40)}]}})


@fix("nm_dict_list_plus2")
def _():
    s1 = Dim("s1", max=38)
    return {"inp": {"segs": [{0: s1 + 2}, {0: s1}]}}


# ============================================================== shape ops real models use (sound15)
def _attn(self, q, k, v, mask):
    s = q @ k.transpose(-1, -2) / 4.0
    s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, -1) @ v


@case("so_attn_q_kv_mask_ok", "Attention q(B, Tq, 8), k/v(B, Tk, 8) and a bool mask (B, Tq, Tk) with Dims "
      "B, Tq, Tk shared across the four inputs: valid.", tags=["shape_ops"])
def so_attn_q_kv_mask_ok():
    B, Tq, Tk = Dim("B", max=8), Dim("Tq", max=64), Dim("Tk", max=64)
    return sc(module(_attn), [r(2, 5, 8), r(2, 7, 8), r(2, 7, 8), torch.ones(2, 5, 7, dtype=torch.bool)],
              {"q": {0: B, 1: Tq}, "k": {0: B, 1: Tk}, "v": {0: B, 1: Tk}, "mask": {0: B, 1: Tq, 2: Tk}})


@case("so_attn_mask_own_dim_err", "The attention of so_attn_q_kv_mask_ok with the mask's key length on its own "
      "Dim Tm: torch says Tm = Tk.", tags=["shape_ops"])
def so_attn_mask_own_dim_err():
    B, Tq, Tk, Tm = Dim("B", max=8), Dim("Tq", max=64), Dim("Tk", max=64), Dim("Tm", max=64)
    return sc(module(_attn), [r(2, 5, 8), r(2, 7, 8), r(2, 7, 8), torch.ones(2, 5, 7, dtype=torch.bool)],
              {"q": {0: B, 1: Tq}, "k": {0: B, 1: Tk}, "v": {0: B, 1: Tk}, "mask": {0: B, 1: Tq, 2: Tm}})


@fix("so_attn_mask_own_dim_err")
def _():
    B, Tq, Tk = Dim("B", max=8), Dim("Tq", max=64), Dim("Tk", max=64)
    return {"q": {0: B, 1: Tq}, "k": {0: B, 1: Tk}, "v": {0: B, 1: Tk}, "mask": {0: B, 1: Tq, 2: Tk}}


@case("so_attn_v_len_err", "Attention with v's length on its own Dim Tv (k on Tk), no mask: Tv = Tk.",
      tags=["shape_ops"])
def so_attn_v_len_err():
    def fwd(self, q, k, v):
        return torch.softmax(q @ k.transpose(-1, -2), -1) @ v
    return sc(module(fwd), [r(1, 3, 4), r(1, 6, 4), r(1, 6, 4)],
              {"q": {1: Dim("Tq", max=32)}, "k": {1: Dim("Tk", max=32)}, "v": {1: Dim("Tv", max=32)}})


@fix("so_attn_v_len_err")
def _():
    Tk = Dim("Tk", max=32)
    return {"q": {1: Dim("Tq", max=32)}, "k": {1: Tk}, "v": {1: Tk}}


@case("so_pad_to_multiple8_ok", "F.pad(x, (0, (n + 7) // 8 * 8 - n)).view(-1, 8) with Dim('n', max=100): "
      "the padded length is a multiple of 8 for every n, valid.", tags=["shape_ops"])
def so_pad_to_multiple8_ok():
    def fwd(self, x):
        n = x.shape[0]
        return F.pad(x, (0, (n + 7) // 8 * 8 - n)).view(-1, 8).sum(1)
    return sc(module(fwd), [r(13)], {"x": {0: Dim("n", max=100)}})


@case("so_pad_to_multiple8_add_err", "x padded to a multiple of 8 plus y with its own Dim m: m = "
      "(n + 7) // 8 * 8 is no Dim expression.", tags=["shape_ops", "inexpressible"])
def so_pad_to_multiple8_add_err():
    def fwd(self, x, y):
        n = x.shape[0]
        return F.pad(x, (0, (n + 7) // 8 * 8 - n)) + y
    return sc(module(fwd), [r(13), r(16)], {"x": {0: Dim("n", min=2, max=40)}, "y": {0: Dim("m", min=2, max=40)}})


@fix("so_pad_to_multiple8_add_err")
def _():
    return {"x": {0: Dim("n", min=2, max=40)}, "y": {0: Dim.AUTO}}


@case("so_unflatten_heads_err", "x(B, T, C).unflatten(-1, (4, -1)) with a dynamic C = Dim('C', max=128): "
      "C must be a multiple of 4.", tags=["shape_ops"])
def so_unflatten_heads_err():
    return sc(module(lambda self, x: x.unflatten(-1, (4, -1)).transpose(1, 2).sum(-1)), [r(2, 3, 16)],
              {"x": {0: Dim("B", max=8), 2: Dim("C", max=128)}})


@fix("so_unflatten_heads_err")
def _():
    return {"x": {0: Dim("B", max=8), 2: 4 * Dim("_C", max=32)}}


@case("so_flatten_unflatten_ok", "x(B, T, H, D).flatten(2).unflatten(2, (H, D)) round trip plus a residual "
      "with the same Dims: valid.", tags=["shape_ops"])
def so_flatten_unflatten_ok():
    def fwd(self, x, res):
        h, d = x.shape[2], x.shape[3]
        return x.flatten(2).unflatten(2, (h, d)) + res
    B, T, H = Dim("B", max=4), Dim("T", max=32), Dim("H", max=8)
    return sc(module(fwd), [r(2, 5, 3, 4), r(2, 5, 3, 4)], {"x": {0: B, 1: T, 2: H}, "res": {0: B, 1: T, 2: H}})


@case("so_flatten_view_err", "x(B, T, 4).flatten(0, 1).view(-1, 8): B*T*4 must be divisible by 8, i.e. "
      "B*T even, with Dims B, T.", tags=["shape_ops", "inexpressible"])
def so_flatten_view_err():
    return sc(module(lambda self, x: x.flatten(0, 1).view(-1, 8).sum(1)), [r(2, 3, 4)],
              {"x": {0: Dim("B", max=6), 1: Dim("T", max=6)}})


@fix("so_flatten_view_err")
def _():
    return {"x": {0: 2 * Dim("_B", max=3), 1: Dim("T", max=6)}}


@case("so_expand_symbolic_ok", "x(B, 1, D).expand(-1, y.shape[1], -1) + y(B, T, D) with Dims B, T: valid.",
      tags=["shape_ops"])
def so_expand_symbolic_ok():
    def fwd(self, x, y):
        return x.expand(-1, y.shape[1], -1) + y
    B = Dim("B", max=8)
    return sc(module(fwd), [r(3, 1, 4), r(3, 6, 4)], {"x": {0: B}, "y": {0: B, 1: Dim("T", max=64)}})


@case("so_repeat_symbolic_err", "x(B, D).repeat(1, 2) + y(B, E) with separate Dims D, E: E = 2*D.",
      tags=["shape_ops"])
def so_repeat_symbolic_err():
    B = Dim("B", max=8)
    return sc(module(lambda self, x, y: x.repeat(1, 2) + y), [r(2, 3), r(2, 6)],
              {"x": {0: B, 1: Dim("D", max=16)}, "y": {0: B, 1: Dim("E", max=32)}})


@fix("so_repeat_symbolic_err")
def _():
    B, D = Dim("B", max=8), Dim("D", max=16)
    return {"x": {0: B, 1: D}, "y": {0: B, 1: 2 * D}}


@case("so_chunk2_err", "a, b = x.chunk(2); a * b with Dim('n', max=64): equal halves need n even.",
      tags=["shape_ops"])
def so_chunk2_err():
    def fwd(self, x):
        a, b = x.chunk(2)
        return a * b
    return sc(module(fwd), [r(10, 3)], {"x": {0: Dim("n", max=64)}})


@fix("so_chunk2_err")
def _():
    return {"x": {0: 2 * Dim("_n", max=32)}}


@case("so_qkv_split3_err", "q, k, v = x.split(x.shape[-1] // 3, -1) of a fused qkv projection with a "
      "dynamic width: three equal parts need the width divisible by 3.", tags=["shape_ops"])
def so_qkv_split3_err():
    def fwd(self, x):
        q, k, v = x.split(x.shape[-1] // 3, -1)
        return q * k + v
    return sc(module(fwd), [r(2, 12)], {"x": {1: Dim("C", min=3, max=48)}})


@fix("so_qkv_split3_err")
def _():
    return {"x": {1: 3 * Dim("_C", min=1, max=16)}}


@case("so_cat3_derived_ok", "torch.cat([a, b, c]) + d with a: dx, b: dx + 1, c: 2*dx and d: 4*dx + 1 "
      "(derived Dims): valid.", tags=["shape_ops"])
def so_cat3_derived_ok():
    dx = Dim("dx", min=2, max=20)
    return sc(module(lambda self, a, b, c, d: torch.cat([a, b, c]) + d), [r(3, 2), r(4, 2), r(6, 2), r(13, 2)],
              {"a": {0: dx}, "b": {0: dx + 1}, "c": {0: 2 * dx}, "d": {0: 4 * dx + 1}})


@case("so_cat3_own_dim_err", "torch.cat([a, b, c]) + d with a: dx, b: dx + 1, c: 2*dx and d on its own Dim: "
      "torch says dd = 4*dx + 1.", tags=["shape_ops"])
def so_cat3_own_dim_err():
    dx = Dim("dx", min=2, max=20)
    return sc(module(lambda self, a, b, c, d: torch.cat([a, b, c]) + d), [r(3, 2), r(4, 2), r(6, 2), r(13, 2)],
              {"a": {0: dx}, "b": {0: dx + 1}, "c": {0: 2 * dx}, "d": {0: Dim("dd", max=100)}})


@fix("so_cat3_own_dim_err")
def _():
    dx = Dim("dx", min=2, max=20)
    return {"a": {0: dx}, "b": {0: dx + 1}, "c": {0: 2 * dx}, "d": {0: 4 * dx + 1}}


@case("so_narrow_by_other_err", "x.narrow(0, 0, y.shape[0]) + y with Dims dx, dy (max 16): needs dy <= dx, "
      "a relation between two Dims.", tags=["shape_ops", "inexpressible"])
def so_narrow_by_other_err():
    return sc(module(lambda self, x, y: x.narrow(0, 0, y.shape[0]) + y), [r(9, 2), r(4, 2)],
              {"x": {0: Dim("dx", max=16)}, "y": {0: Dim("dy", max=16)}})


@fix("so_narrow_by_other_err")
def _():
    return {"x": {0: Dim("dx", max=16)}, "y": {0: Dim.AUTO}}


@case("so_slice_half_ok", "x[: x.shape[0] // 2] * x[x.shape[0] // 2 :] with n = 2*_n derived: valid.",
      tags=["shape_ops"])
def so_slice_half_ok():
    def fwd(self, x):
        h = x.shape[0] // 2
        return x[:h] * x[h:]
    return sc(module(fwd), [r(8, 2)], {"x": {0: 2 * Dim("_n", max=20)}})


@case("so_min_only_conv_err", "Conv1d(k7)(x) with Dim('L', min=4) (no max): the output needs L >= 7.",
      tags=["shape_ops", "conv_pool"])
def so_min_only_conv_err():
    return sc(module(lambda self, x: self.c(x), c=nn.Conv1d(1, 1, 7)), [r(1, 1, 20)], {"x": {2: Dim("L", min=4)}})


@fix("so_min_only_conv_err")
def _():
    return {"x": {2: Dim("L", min=7)}}


@case("so_max_only_check_err", "Dim('n', max=100) (no min) on a dim the model checks <= 50: the max is too big.",
      tags=["shape_ops"])
def so_max_only_check_err():
    return sc(CheckLe(50), [r(10)], {"x": {0: Dim("n", max=100)}})


@fix("so_max_only_check_err")
def _():
    return {"x": {0: Dim("n", max=50)}}


@case("so_auto_mixed_named_err", "x.view(-1, 4) + y.view(-1, 4) with x on Dim.AUTO and y on Dim('dy', max=64): "
      "dy must be a multiple of 4 (the AUTO dim follows).", tags=["shape_ops", "bounded_hint"])
def so_auto_mixed_named_err():
    return sc(module(lambda self, x, y: x.view(-1, 4) + y.view(-1, 4)), [r(8), r(8)],
              {"x": {0: Dim.AUTO}, "y": {0: Dim("dy", max=64)}})


@fix("so_auto_mixed_named_err")
def _():
    return {"x": {0: Dim.AUTO}, "y": {0: 4 * Dim("_dy", max=16)}}


@case("so_auto_mixed_named_ok", "x + y with x on Dim.AUTO and y on Dim('dy', max=64): the AUTO dim is tied "
      "to dy, valid.", tags=["shape_ops", "bounded_hint"])
def so_auto_mixed_named_ok():
    return sc(module(lambda self, x, y: x + y), [r(5, 2), r(5, 2)], {"x": {0: Dim.AUTO}, "y": {0: Dim("dy", max=64)}})


@case("so_kwonly_nested_shared_ok", "forward(x, *, extra) with extra = {'mem': [m1, m2]} (kwargs-only nested "
      "dict/list) sharing Dims B and S: valid.", tags=["shape_ops", "input_kinds"])
def so_kwonly_nested_shared_ok():
    def fwd(self, x, *, extra):
        m1, m2 = extra["mem"]
        return x + (m1 * m2).sum(1, keepdim=True)
    B, S = Dim("B", max=8), Dim("S", max=32)
    return sc(module(fwd), [r(3, 1)], {"x": {0: B}, "extra": {"mem": [{0: B, 1: S}, {0: B, 1: S}]}},
              kwargs={"extra": {"mem": [r(3, 5), r(3, 5)]}})


@case("so_nested_shared_err", "{'enc': [a, b]} and c with a shared Dim S on a and c and its own Dim T on b: "
      "a[1:] + b needs T = S - 1.", tags=["shape_ops", "input_kinds", "naming"])
def so_nested_shared_err():
    def fwd(self, inp, c):
        a, b = inp["enc"]
        return (a[1:] + b).sum() + (a * c).sum()
    S = Dim("S", min=3, max=30)
    return sc(module(fwd), [{"enc": [r(6), r(5)]}, r(6)], {"inp": {"enc": [{0: S}, {0: Dim("T", max=30)}]}, "c": {0: S}})


@fix("so_nested_shared_err")
def _():
    S = Dim("S", min=3, max=30)
    return {"inp": {"enc": [{0: S}, {0: S - 1}]}, "c": {0: S}}


@case("so_conv2d_stride_dil_min_err", "Conv2d(k3, stride=2, dilation=2, padding=1) with Dim('H', min=2, max=64): "
      "the effective kernel 5 with padding 1 needs H >= 3.", tags=["shape_ops", "conv_pool"])
def so_conv2d_stride_dil_min_err():
    conv = nn.Conv2d(1, 1, 3, stride=2, dilation=2, padding=1)
    return sc(module(lambda self, x: self.c(x), c=conv), [r(1, 1, 9, 9)], {"x": {2: Dim("H", min=2, max=64)}})


@fix("so_conv2d_stride_dil_min_err")
def _():
    return {"x": {2: Dim("H", min=3, max=64)}}


@case("so_conv1d_dil_out_err", "Conv1d(k3, dilation=3)(x) + y with Dims L (x) and Ly (y): Ly = L - 6.",
      tags=["shape_ops", "conv_pool"])
def so_conv1d_dil_out_err():
    conv = nn.Conv1d(1, 1, 3, dilation=3)
    return sc(module(lambda self, x, y: self.c(x) + y, c=conv), [r(1, 1, 20), r(1, 1, 14)],
              {"x": {2: Dim("L", min=8, max=64)}, "y": {2: Dim("Ly", max=64)}})


@fix("so_conv1d_dil_out_err")
def _():
    L = Dim("L", min=8, max=64)
    return {"x": {2: L}, "y": {2: L - 6}}


@case("so_check_mod_err", "torch._check(x.shape[0] % 3 == 0) with Dim('n', max=60): a runtime-checked "
      "divisibility the spec does not state.", tags=["shape_ops", "unbacked"])
def so_check_mod_err():
    def fwd(self, x):
        torch._check(x.shape[0] % 3 == 0)
        return x * 2
    return sc(module(fwd), [r(9)], {"x": {0: Dim("n", max=60)}})


@fix("so_check_mod_err")
def _():
    return {"x": {0: 3 * Dim("_n", max=20)}}


@case("so_max_of_sizes_ok", "torch.zeros(max(n, m)) padded from x(n) and y(m) via F.pad to max(n, m): "
      "valid for any n, m.", tags=["shape_ops"])
def so_max_of_sizes_ok():
    def fwd(self, x, y):
        t = max(x.shape[0], y.shape[0])
        return F.pad(x, (0, t - x.shape[0])) + F.pad(y, (0, t - y.shape[0]))
    return sc(module(fwd), [r(5), r(7)], {"x": {0: Dim("n", max=20)}, "y": {0: Dim("m", max=20)}})


@case("so_min_of_sizes_slice_ok", "x[:min(n, m)] + y[:min(n, m)] with Dims n, m: valid.", tags=["shape_ops"])
def so_min_of_sizes_slice_ok():
    def fwd(self, x, y):
        t = min(x.shape[0], y.shape[0])
        return x[:t] + y[:t]
    return sc(module(fwd), [r(5, 2), r(7, 2)], {"x": {0: Dim("n", max=20)}, "y": {0: Dim("m", max=20)}})


@case("so_batch1_auto_specialized", "Linear on x(1, 4) with Dim.AUTO on the batch (example 1): torch "
      "specialises it to 1 (no error, a static dim).", tags=["shape_ops", "zero_one"])
def so_batch1_auto_specialized():
    return sc(module(lambda self, x: self.l(x), l=nn.Linear(4, 2)), [r(1, 4)], {"x": {0: Dim.AUTO}})


@case("so_batch1_named_err", "x(1, 4) @ W with a named Dim('B', max=16) on the batch (example 1): torch "
      "specialises B to 1 and raises.", tags=["shape_ops", "zero_one"])
def so_batch1_named_err():
    return sc(module(lambda self, x: self.l(x), l=nn.Linear(4, 2)), [r(1, 4)], {"x": {0: Dim("B", max=16)}})


@fix("so_batch1_named_err")
def _():
    return {"x": {0: Dim.AUTO}}


# ============ unseen variants (pq_*): made after the fixes above, to test on cases not tuned on
@case("pq_matmul_bias_err", "x(b, n, k1) @ w(k2, m) + bias(m2) with separate Dims: k2 = k1 and m2 = m.",
      tags=["shape_ops"])
def pq_matmul_bias_err():
    def fwd(self, x, w, bias):
        return x @ w + bias
    return sc(module(fwd), [r(2, 5, 6), r(6, 3), r(3)],
              {"x": {0: Dim("b", max=8), 1: Dim("n", max=64), 2: Dim("k1", max=64)},
               "w": {0: Dim("k2", max=64), 1: Dim("m", max=64)}, "bias": {0: Dim("m2", max=64)}})


@case("pq_stack_list_err", "torch.stack of xs[0..2] with a Dim each: all equal.", tags=["input_kinds"])
def pq_stack_list_err():
    return sc(module(lambda self, xs: torch.stack(xs).sum(0)), [[r(4, 2), r(4, 2), r(4, 2)]],
              {"xs": [{0: Dim("a", max=30)}, {0: Dim("b", max=30)}, {0: Dim("c", max=30)}]})


@case("pq_where_broadcast_err", "torch.where(mask(n, 1), x(1, m), y(n2, m2)) with separate Dims: n2 = n, m2 = m.",
      tags=["shape_ops"])
def pq_where_broadcast_err():
    return sc(module(lambda self, mask, x, y: torch.where(mask, x, y)),
              [torch.ones(4, 1, dtype=torch.bool), r(1, 5), r(4, 5)],
              {"mask": {0: Dim("n", max=32)}, "x": {1: Dim("m", max=32)},
               "y": {0: Dim("n2", max=32), 1: Dim("m2", max=32)}})


@case("pq_einsum_batch_err", "einsum('bij,bjk->bik') with separate batch Dims b, b2 and inner j, j2.",
      tags=["shape_ops"])
def pq_einsum_batch_err():
    return sc(module(lambda self, x, y: torch.einsum("bij,bjk->bik", x, y)), [r(3, 4, 5), r(3, 5, 2)],
              {"x": {0: Dim("b", max=16), 2: Dim("j", max=16)}, "y": {0: Dim("b2", max=16), 1: Dim("j2", max=16)}})


@case("pq_view_product_err", "x(a, b).reshape(-1) + y(c): c = a*b, which no Dim expresses.",
      tags=["inexpressible"])
def pq_view_product_err():
    return sc(module(lambda self, x, y: x.reshape(-1) + y), [r(3, 4), r(12)],
              {"x": {0: Dim("a", max=16), 1: Dim("b", max=16)}, "y": {0: Dim("c", max=256)}})


@case("pq_conv2d_pool_ok", "conv2d 3x3 pad 1 then max_pool2d 2 on H = W = 2*_h (min 2): valid.",
      tags=["conv_pool"])
def pq_conv2d_pool_ok():
    def fwd(self, x):
        return F.max_pool2d(self.c(x), 2)
    h = Dim("_h", min=2, max=64)
    return sc(module(fwd, c=nn.Conv2d(3, 4, 3, padding=1)), [r(1, 3, 16, 16)], {"x": {2: 2 * h, 3: 2 * h}})


@case("pq_conv1d_pool_min_err", "conv1d k=5 then avg_pool1d 3 on L in [4, 100]: L must be >= 7.",
      tags=["conv_pool"])
def pq_conv1d_pool_min_err():
    def fwd(self, x):
        return F.avg_pool1d(self.c(x), 3)
    return sc(module(fwd, c=nn.Conv1d(2, 2, 5)), [r(1, 2, 20)], {"x": {2: Dim("L", min=4, max=100)}})


@case("pq_auto_bounded_named_eq", "x Dim.AUTO(min=2, max=16) + y Dim('d', max=64): torch ties them; "
      "the AUTO bounds are narrower than d's.", tags=["bounded_hint"])
def pq_auto_bounded_named_eq():
    return sc(module(lambda self, x, y: x + y), [r(6), r(6)],
              {"x": {0: Dim.AUTO(min=2, max=16)}, "y": {0: Dim("d", max=64)}})


@case("pq_dynamic_bounded_div_ok", "x.view(-1, 4) with Dim.DYNAMIC(min=4, max=64) (example 8): torch "
      "infers a multiple of 4 inside the bounds.", tags=["bounded_hint"])
def pq_dynamic_bounded_div_ok():
    return sc(module(lambda self, x: x.view(-1, 4) * 2), [r(8)], {"x": {0: Dim.DYNAMIC(min=4, max=64)}})


@dataclasses.dataclass
class Batch:
    x: torch.Tensor
    y: torch.Tensor


torch.export.register_dataclass(Batch)


@case("pq_dataclass_int_field_err", "register_dataclass'd Batch(x, y) passed by keyword, x.view(-1, 3) + y "
      "with separate Dims: y's dim = x's / 3.", tags=["input_kinds"])
def pq_dataclass_int_field_err():
    return sc(module(lambda self, *, batch: batch.x.view(-1, 3).sum(1) + batch.y), [],
              {"batch": [{0: Dim("n", max=90)}, {0: Dim("m", max=30)}]},
              kwargs={"batch": Batch(r(12), r(4))})


@case("pq_int_none_positional_err", "forward(x, scale: int, none, y) with a positional tuple spec "
      "(Dim, None, None, Dim): x * scale + y needs y's dim = x's.", tags=["non_tensor"])
def pq_int_none_positional_err():
    def fwd(self, x, scale, nothing, y):
        return x * scale + y
    return sc(module(fwd), [r(5), 3, None, r(5)],
              ({0: Dim("a", max=40)}, None, None, {0: Dim("b", max=40)}))


@case("pq_derived_cat_ok", "torch.cat([x, x]) + y with y = 2*d (derived): valid.", tags=["shape_ops"])
def pq_derived_cat_ok():
    d = Dim("d", max=32)
    return sc(module(lambda self, x, y: torch.cat([x, x]) + y), [r(5), r(10)], {"x": {0: d}, "y": {0: 2 * d}})


@case("pq_slice_by_other_err", "x[:, :y.shape[1]] * y with independent Dims n, m (n < m possible).",
      tags=["shape_ops"])
def pq_slice_by_other_err():
    return sc(module(lambda self, x, y: x[:, :y.shape[1]] * y), [r(2, 9), r(2, 6)],
              {"x": {1: Dim("n", max=32)}, "y": {1: Dim("m", max=32)}})


@case("pq_cat_view_two_err", "torch.cat([x, y]).view(-1, 4) with Dims dx, dy in [2, 20]: dx + dy must be a "
      "multiple of 4.", tags=["cat_reshape"])
def pq_cat_view_two_err():
    return sc(module(lambda self, x, y: torch.cat([x, y]).view(-1, 4)), [r(6), r(10)],
              {"x": {0: Dim("dx", max=20)}, "y": {0: Dim("dy", max=20)}})


@case("pq_repeat_interleave_unbacked_ok", "repeat_interleave by a tensor of counts (unbacked total), "
      "then + 1: exports with a data-dependent size.", tags=["unbacked"])
def pq_repeat_interleave_unbacked_ok():
    def fwd(self, x, counts):
        return x.repeat_interleave(counts, dim=0) + 1
    return sc(module(fwd), [r(4, 3), torch.tensor([1, 2, 1, 3])], {"x": {0: Dim("n", max=64)}, "counts": {0: Dim("n", max=64)}})


@case("pq_example_above_derived", "y = d + 3 derived with d = Dim('d', max=8) and y's example 14 "
      "(d = 11 > 8).", tags=["example_range"])
def pq_example_above_derived():
    d = Dim("d", max=8)
    return sc(module(lambda self, x, y: x.sum() + y.sum()), [r(11), r(14)], {"x": {0: d}, "y": {0: d + 3}})


# ============ unseen variants, second round (pr_*)
@case("pr_interpolate_cat_err", "F.interpolate(x, scale_factor=2) cat with y along the length: Dims L, Ly "
      "independent, but y's length must be 2*L.", tags=["shape_ops"])
def pr_interpolate_cat_err():
    def fwd(self, x, y):
        return torch.cat([F.interpolate(x, scale_factor=2.0), y], dim=1)
    return sc(module(fwd), [r(1, 2, 5), r(1, 3, 10)], {"x": {2: Dim("L", max=64)}, "y": {2: Dim("Ly", max=128)}})


@case("pr_topk_half_ok", "x.topk(x.shape[0] // 2) with Dim n in [4, 64]: valid.", tags=["shape_ops"])
def pr_topk_half_ok():
    return sc(module(lambda self, x: x.topk(x.shape[0] // 2).values * 2), [r(10)], {"x": {0: Dim("n", min=4, max=64)}})


@case("pr_narrow_by_arg_err", "x.narrow(0, 2, y.shape[0]) + y with Dims n, m independent: n >= m + 2.",
      tags=["shape_ops"])
def pr_narrow_by_arg_err():
    return sc(module(lambda self, x, y: x.narrow(0, 2, y.shape[0]) + y), [r(9), r(5)],
              {"x": {0: Dim("n", max=40)}, "y": {0: Dim("m", max=40)}})


@case("pr_unsqueeze_expand_ok", "x(b, 1, d).expand(b, t, d) with y(b, t, d), Dims shared: valid.",
      tags=["shape_ops"])
def pr_unsqueeze_expand_ok():
    b, t = Dim("b", max=16), Dim("t", max=64)
    return sc(module(lambda self, x, y: x.expand(-1, y.shape[1], -1) + y), [r(2, 1, 4), r(2, 7, 4)],
              {"x": {0: b}, "y": {0: b, 1: t}})


@case("pr_unbacked_check_spec_ok", "n = int(k.item()) with torch._check(n <= x.shape[0]), then x[:n]: "
      "exports with a runtime assert; Dim on x.", tags=["unbacked"])
def pr_unbacked_check_spec_ok():
    def fwd(self, x, k):
        n = k.item()
        torch._check(n >= 0)
        torch._check(n <= x.shape[0])
        return x[:n].sum()
    return sc(module(fwd), [r(8), torch.tensor(3)], {"x": {0: Dim("d", max=64)}, "k": None})


@case("pr_dynamic_eq_two_hints_ok", "x + y with Dim.DYNAMIC on both (bounded [2, 32] and unbounded): torch "
      "ties them.", tags=["bounded_hint"])
def pr_dynamic_eq_two_hints_ok():
    return sc(module(lambda self, x, y: x + y), [r(6), r(6)],
              {"x": {0: Dim.DYNAMIC(min=2, max=32)}, "y": {0: Dim.DYNAMIC}})


@case("pr_auto_bounded_div_conflict", "x.view(-1, 8) with Dim.AUTO(min=2, max=7) (example 16 outside): "
      "no size of the bounds is a multiple of 8.", tags=["bounded_hint"])
def pr_auto_bounded_div_conflict():
    return sc(module(lambda self, x: x.view(-1, 8)), [r(16)], {"x": {0: Dim.AUTO(min=2, max=7)}})


@case("pr_nested_tuple_dict_err", "forward(batch) with batch = ({'a': x}, [y]) and separate Dims: y's dim = x's.",
      tags=["input_kinds"])
def pr_nested_tuple_dict_err():
    return sc(module(lambda self, batch: batch[0]["a"] * batch[1][0]), [({"a": r(5, 2)}, [r(5, 2)])],
              {"batch": ({"a": {0: Dim("da", max=32)}}, [{0: Dim("dy", max=32)}])})


@case("pr_derived_root_example1_err", "y = 2*d + 1 with x's example 1 (d = 1): torch specialises d.",
      tags=["zero_one"])
def pr_derived_root_example1_err():
    d = Dim("d", max=16)
    return sc(module(lambda self, x, y: x.sum() + y.sum()), [r(1), r(3)], {"x": {0: d}, "y": {0: 2 * d + 1}})


@case("pr_float_arg_scale_ok", "forward(x, alpha: float, flag: bool) with a dict spec giving None for the "
      "scalars: valid.", tags=["non_tensor"])
def pr_float_arg_scale_ok():
    def fwd(self, x, alpha, flag):
        return x * alpha if flag else x
    return sc(module(fwd), [r(6, 2), 0.5, True], {"x": {0: Dim("n", max=32)}, "alpha": None, "flag": None})


@case("pr_maxpool_stride_min_err", "max_pool1d(k=4, stride=4) then + bias of fixed 3: L // 4 must be 3.",
      tags=["conv_pool"])
def pr_maxpool_stride_min_err():
    return sc(module(lambda self, x: F.max_pool1d(x, 4) + self.b, b=nn.Parameter(torch.zeros(3))), [r(1, 2, 12)],
              {"x": {2: Dim("L", min=4, max=64)}})


@case("pr_index_select_ok", "x.index_select(0, idx) + y with idx's length = y's (Dim k) and x's Dim n: valid.",
      tags=["shape_ops"])
def pr_index_select_ok():
    k = Dim("k", max=32)
    return sc(module(lambda self, x, idx, y: x.index_select(0, idx) + y),
              [r(8, 3), torch.tensor([0, 2, 4]), r(3, 3)], {"x": {0: Dim("n", max=32)}, "idx": {0: k}, "y": {0: k}})


@case("pr_strict_eq_err", "strict export: x @ y with separate inner Dims (k2 = k).", strict=True, tags=["shape_ops"])
def pr_strict_eq_err():
    return sc(module(lambda self, x, y: x @ y), [r(3, 6), r(6, 2)],
              {"x": {1: Dim("k", max=32)}, "y": {0: Dim("k2", max=32)}})


@case("pr_spec_extra_key_err", "a dict spec with a key the forward does not take ('z').", tags=["invalid_spec"])
def pr_spec_extra_key_err():
    return sc(module(lambda self, x: x + 1), [r(4)], {"x": {0: Dim("n", max=32)}, "z": {0: Dim("m")}})
