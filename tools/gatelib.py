"""gatelib.py: what the real-torch fixture tools share (run inside a refenv chroot).

Used by gate_truth.py, gate_witness.py, verify_boundaries.py and make_gate_pairs.py; works with
torch 2.6 (flat archives) and torch 2.14 (PT2 archives). Nothing here knows a particular model:
everything is read from the loaded ExportedProgram.

- `Archive(path)`: `torch.export.load` + `ep.module()`, and per user input leaf (in signature
  order) its shapegate-style pytree path (`['x']`, `['inputs']['b'][1]`, kwargs by name), dtype,
  symbolic sizes (ints or sympy expressions), example value; the declared `range_constraints`.
- `Archive.grid(...)`: symbol assignments around the declared ranges (every bound, bound +- 1,
  small sizes, multiples and non-multiples, a few large sizes), turned into concrete shapes that
  keep the traced relations (a shared symbol gets the same size everywhere, `2*s` twice it).
- `Archive.declared(shapes)`: whether concrete shapes lie in the declared domain (static sizes,
  consistent symbols, every range_constraints entry); None when it cannot tell.
- `Archive.inputs(shapes)`: (args, kwargs) in this archive's input structure with tensors of
  those shapes; `run(module, args, kwargs)`: accepted, or the exception's type, kind and text.
"""
import logging
import math
import warnings

import sympy
import torch
import torch.utils._pytree as pytree

LARGE = (1000, 1024, 4096)          # sizes tried when a range has no finite max
SMALL = tuple(range(0, 10))
MULTIPLES = (12, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 96, 100, 127, 128, 129, 255, 256, 257)


def quiet():
    """Silence torch's loader warnings (legacy-format notices, unused-symbol warnings)."""
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")


def bound(v):
    """An int for a finite ValueRanges bound, None for +-oo / int_oo."""
    s = str(v)
    if "oo" in s or "inf" in s:
        return None
    return int(v)


def evaluate(expr, assign):
    """int value of a sympy size expression under {symbol: int}, or None."""
    if isinstance(expr, int):
        return expr
    try:
        e = expr.xreplace({s: sympy.Integer(assign[s]) for s in expr.free_symbols if s in assign})
        if e.free_symbols:
            return None
        return int(e)
    except Exception:
        return None


def solve1(expr, sym, val):
    """The integer v with expr(sym=v) == val when expr is linear in its one symbol, else None."""
    f0, f1 = evaluate(expr, {sym: 0}), evaluate(expr, {sym: 1})
    if f0 is None or f1 is None or f1 == f0:
        return None
    a = f1 - f0
    if (val - f0) % a:
        return None
    v = (val - f0) // a
    return v if evaluate(expr, {sym: v}) == val else None


def keypath(path, arg_names):
    """shapegate's input path from a pytree key path into (args, kwargs): ['x'], ['inputs']['b'][1]."""
    top, rest = path[0], path[1:]
    if getattr(top, "idx", None) == 0 and rest:              # positional argument i
        i = rest[0].idx
        head = repr(arg_names[i]) if i < len(arg_names) else repr(str(i))
        return "[%s]%s" % (head, pytree.keystr(rest[1:]))
    return pytree.keystr(rest)                                # kwargs: ['name']...


def first_line(text, limit=300):
    line = str(text).strip().splitlines()[0] if str(text).strip() else ""
    return line if len(line) <= limit else line[:limit] + "..."


def classify(exc):
    """What rejected the call: constant (a specialised non-tensor input called with another value),
    guard (2.14 guards_code / input guards), runtime_assert (graph
    _assert_scalar), input_check (range/equality/rank checks of the pre-hook), signature (the
    inputs do not match the exported structure), data (an unbacked, data-dependent value), kernel
    (an operator failed on the shapes)."""
    msg = str(exc)
    first = first_line(msg)
    # a non-tensor input torch specialised, called with another value: 2.14's guard `n == 3`,
    # 2.6's "Expected input at *args[1] to be equal to 3, but got 4" (no .shape / .size())
    sized = ".size()" in first or ".shape" in first or "size(" in first
    if not sized and (("Guard failed" in first and "==" in first)
                      or ("Expected input at" in first and "to be equal to" in first)):
        return "constant"
    if "Guard failed" in msg:
        return "guard"
    if "Runtime assertion failed" in msg:
        return "runtime_assert"
    if "Expected input at" in msg or "Unexpected number of dimensions" in msg or \
            ("Expected input" in msg and "of the form" in msg):
        return "input_check"
    if isinstance(exc, TypeError) or "tree spec" in msg or "keyword mismatch" in msg or "pytree" in msg.lower() or \
            "Unexpected number of inputs" in msg or "missing" in msg and "argument" in msg:
        return "signature"
    if "data-dependent" in msg or "Data dependent" in msg or "u0" in msg:
        return "data"
    return "kernel"


def run(module, args, kwargs):
    """{"ok": True} or {"ok": False, "type", "kind", "message"}."""
    try:
        with torch.no_grad():
            module(*args, **kwargs)
        return {"ok": True}
    except Exception as e:          # every rejection is data for the oracle
        return {"ok": False, "type": type(e).__name__, "kind": classify(e), "message": first_line(e)}


class Leaf:
    def __init__(self, path, value, example):
        self.path = path
        self.example = example
        self.tensor = isinstance(value, torch.Tensor)
        self.dtype = value.dtype if self.tensor else None
        self.dims = []
        if self.tensor:
            for d in value.shape:
                if isinstance(d, torch.SymInt):
                    e = d.node.expr
                    self.dims.append(int(e) if e.is_number else e)
                else:
                    self.dims.append(int(d))
        self.value = value

    def shape_text(self):
        return [d if isinstance(d, int) else str(d) for d in self.dims]


class Archive:
    def __init__(self, path):
        self.path = path
        self.ep = torch.export.load(path)
        self.module = self.ep.module()
        ep = self.ep
        sig = ep.module_call_graph[0].signature
        self.in_spec = sig.in_spec if sig is not None and sig.in_spec is not None else ep.call_spec.in_spec
        self.arg_names = list(getattr(sig, "forward_arg_names", None) or [])
        user = [s.arg.name for s in ep.graph_signature.input_specs
                if s.kind.name == "USER_INPUT" and hasattr(s.arg, "name")]
        vals = {n.name: n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder"}
        n = self.in_spec.num_leaves
        paths = [p for p, _ in pytree.tree_flatten_with_path(pytree.tree_unflatten(list(range(n)), self.in_spec))[0]]
        examples = [None] * n
        if getattr(ep, "example_inputs", None):
            try:
                ex = pytree.tree_flatten(ep.example_inputs)[0]
                if len(ex) == n:
                    examples = ex
            except Exception:
                pass
        if len(user) != n:
            raise RuntimeError("%s: %d user inputs but the input spec has %d leaves" % (path, len(user), n))
        self.leaves = [Leaf(keypath(p, self.arg_names), vals[u], examples[i]) for i, (p, u) in enumerate(zip(paths, user))]
        self.ranges = {}
        for k, vr in ep.range_constraints.items():
            self.ranges[k] = (bound(vr.lower), bound(vr.upper))
        self.torch_version = torch.__version__

    # ------------------------------------------------------------------ structure
    def symbols(self):
        """Backed symbols of the input sizes, in order of first appearance."""
        out = []
        for leaf in self.leaves:
            for d in leaf.dims:
                if not isinstance(d, int):
                    for s in sorted(d.free_symbols, key=str):
                        if s not in out:
                            out.append(s)
        return out

    def symbol_range(self, s):
        lo, hi = self.ranges.get(s, (None, None))
        return (0 if lo is None else lo), hi

    def base(self):
        """Example value of each symbol (from the example inputs), else a point inside its range."""
        assign = {}
        for leaf in self.leaves:
            if not leaf.tensor or not isinstance(leaf.example, torch.Tensor):
                continue
            for d, e in zip(leaf.example.shape, leaf.dims):
                if isinstance(e, sympy.Symbol) and e not in assign:
                    assign[e] = int(d)
        for leaf in self.leaves:
            if not leaf.tensor or not isinstance(leaf.example, torch.Tensor):
                continue
            for d, e in zip(leaf.example.shape, leaf.dims):
                if not isinstance(e, int):
                    free = [s for s in e.free_symbols if s not in assign]
                    if len(free) == 1:
                        v = solve1(e.xreplace({s: sympy.Integer(assign[s]) for s in e.free_symbols if s in assign}), free[0], int(d))
                        if v is not None:
                            assign[free[0]] = v
        for s in self.symbols():
            if s not in assign:
                lo, hi = self.symbol_range(s)
                assign[s] = max(lo, min(8, hi if hi is not None else 8))
        return assign

    def shapes(self, assign):
        """Concrete shapes (one list per leaf, None for non-tensors) or None when a size is not
        an integer >= 0 under the assignment."""
        out = []
        for leaf in self.leaves:
            if not leaf.tensor:
                out.append(None)
                continue
            shape = []
            for d in leaf.dims:
                v = evaluate(d, assign)
                if v is None or v < 0:
                    return None
                shape.append(v)
            out.append(shape)
        return out

    def boundary_values(self, s, large=LARGE, dense_upto=0):
        """Sizes to try for symbol s: its declared bounds and their neighbours (from the symbol's
        own entry and any derived entry `a*s + b`), small sizes, multiples and non-multiples,
        and large sizes when the range has no finite max; every size 0 .. max + 2 when the max
        is at most `dense_upto`."""
        lo, hi = self.symbol_range(s)
        vals = set(SMALL) | set(MULTIPLES)
        if hi is not None and hi <= dense_upto:
            vals.update(range(0, hi + 3))
        edges = [(lo, hi)]
        for k, (klo, khi) in self.ranges.items():
            if k != s and getattr(k, "free_symbols", set()) == {s}:
                for kb in (klo, khi):
                    if kb is not None:
                        v = solve1(k, s, kb)
                        if v is not None:
                            edges.append((v, None))
        for a, b in edges:
            for e in (a, b):
                if e is not None:
                    vals.update((e - 1, e, e + 1))
        if hi is None:
            vals.update(large)
        return sorted(v for v in vals if v >= 0)

    def edges(self, s):
        """The declared bounds of s and their neighbours (hi: the first large size when unbounded)."""
        lo, hi = self.symbol_range(s)
        h = hi if hi is not None else LARGE[0]
        return sorted({v for v in (lo - 1, lo, lo + 1, h - 1, h, h + 1, 2, 7, 8, 16) if v >= 0})

    def grid(self, large=LARGE, pairwise_limit=3, dense_upto=0, values=None, corner_max=None):
        """Symbol assignments: the base point; each symbol over its boundary values with the
        others at the base; corners (every symbol at its min, min+1, max-1, max); with at most
        `pairwise_limit` symbols, every pair of symbols over their edges. `values(s)` replaces
        boundary_values(s, large, dense_upto); `corner_max` (default large[0]) stands for an
        infinite max in the corners. Duplicates are dropped, first occurrence kept."""
        syms = self.symbols()
        base = self.base()
        out = [dict(base)]
        if values is None:
            def values(s):
                return self.boundary_values(s, large, dense_upto)
        if corner_max is None:
            corner_max = large[0]
        for s in syms:
            for v in values(s):
                a = dict(base)
                a[s] = v
                out.append(a)
        for pick in (0, 1, -2, -1):
            a = dict(base)
            for s in syms:
                lo, hi = self.symbol_range(s)
                h = hi if hi is not None else corner_max
                a[s] = [lo, lo + 1, h - 1, h][pick]
            out.append(a)
        if 1 < len(syms) <= pairwise_limit:
            for i, s in enumerate(syms):
                for t in syms[i + 1:]:
                    for v in self.edges(s):
                        for w in self.edges(t):
                            a = dict(base)
                            a[s], a[t] = v, w
                            out.append(a)
        seen, uniq = set(), []
        for a in out:
            key = tuple(a[s] for s in syms)
            if key not in seen:
                seen.add(key)
                uniq.append(a)
        return uniq

    def declared(self, shapes):
        """True when the shapes are in the declared domain, False when not, None when unknown."""
        assign, pending = {}, []
        for leaf, shape in zip(self.leaves, shapes):
            if not leaf.tensor:
                continue
            if shape is None or len(shape) != len(leaf.dims):
                return False
            for v, d in zip(shape, leaf.dims):
                if isinstance(d, int):
                    if v != d:
                        return False
                elif isinstance(d, sympy.Symbol):
                    if assign.setdefault(d, v) != v:
                        return False
                else:
                    pending.append((d, v))
        changed = True
        while changed:
            changed = False
            for d, v in pending:
                free = [s for s in d.free_symbols if s not in assign]
                if len(free) == 1:
                    e = d.xreplace({s: sympy.Integer(assign[s]) for s in d.free_symbols if s in assign})
                    x = solve1(e, free[0], v)
                    if x is None:
                        return False
                    assign[free[0]] = x
                    changed = True
        for d, v in pending:
            got = evaluate(d, assign)
            if got is None:
                return None
            if got != v:
                return False
        for k, (lo, hi) in self.ranges.items():
            if not set(getattr(k, "free_symbols", ())) <= set(assign):
                continue                      # unbacked (data-dependent) symbols
            v = evaluate(k, assign)
            if v is None:
                return None
            if (lo is not None and v < lo) or (hi is not None and v > hi):
                return False
        return True

    def assignment_of(self, shapes):
        """{symbol: size} read from shapes through the bare-symbol dims."""
        assign = {}
        for leaf, shape in zip(self.leaves, shapes):
            if leaf.tensor and shape is not None and len(shape) == len(leaf.dims):
                for v, d in zip(shape, leaf.dims):
                    if isinstance(d, sympy.Symbol):
                        assign.setdefault(d, v)
        return assign

    # ------------------------------------------------------------------ running
    def tied_scalar(self, i):
        """For a 0-d integer input whose example value equals the example size of a dynamic
        dim, that (leaf, dim): such a value is usually a size the model checks against
        (`torch._check(t.item() == x.shape[0])`), so it follows the dim."""
        leaf = self.leaves[i]
        if not (leaf.tensor and not leaf.dims and isinstance(leaf.example, torch.Tensor)
                and not leaf.dtype.is_floating_point and leaf.dtype != torch.bool):
            return None
        want = int(leaf.example.item())
        for j, other in enumerate(self.leaves):
            if other.tensor and isinstance(other.example, torch.Tensor):
                for d, (e, sz) in enumerate(zip(other.dims, other.example.shape)):
                    if not isinstance(e, int) and int(sz) == want:
                        return j, d
        return None

    def inputs(self, shapes, seed=0):
        """(args, kwargs) in this archive's structure; tensors of `shapes` (one per leaf, in
        order); non-tensor leaves keep their example value. Float tensors are seeded random;
        integer and bool tensors repeat the example's values (zeros without one)."""
        gen = torch.Generator().manual_seed(seed)
        leaves = []
        for i, (leaf, shape) in enumerate(zip(self.leaves, shapes)):
            if not leaf.tensor:
                leaves.append(leaf.example)
                continue
            dt = leaf.dtype
            numel = math.prod(shape)
            tie = self.tied_scalar(i)
            if tie is not None and shapes[tie[0]] is not None:
                leaves.append(torch.tensor(shapes[tie[0]][tie[1]], dtype=dt))
            elif dt.is_floating_point or dt.is_complex:
                leaves.append(torch.randn(shape, generator=gen).to(dt))
            elif isinstance(leaf.example, torch.Tensor) and leaf.example.numel() > 0:
                flat = leaf.example.reshape(-1)
                reps = -(-numel // flat.numel()) if numel else 0
                leaves.append(flat.repeat(reps)[:numel].reshape(shape).clone())
            else:
                leaves.append(torch.zeros(shape, dtype=dt))
        return pytree.tree_unflatten(leaves, self.in_spec)

    def shapes_by_path(self, by_path):
        """Shapes in leaf order from {path: shape}; KeyError names a missing path."""
        out = []
        for leaf in self.leaves:
            if not leaf.tensor:
                out.append(None)
            elif leaf.path in by_path:
                out.append(list(by_path[leaf.path]))
            else:
                raise KeyError(leaf.path)
        return out

    def describe(self):
        return [{"path": l.path, "shape": l.shape_text(), "dtype": str(l.dtype).replace("torch.", "")}
                if l.tensor else {"path": l.path, "value": repr(l.example)} for l in self.leaves]

    def ranges_text(self):
        return {str(k): [lo, hi] for k, (lo, hi) in self.ranges.items()}

    def guards_code(self):
        return list(getattr(self.ep, "_guards_code", None) or [])


def model_json(path):
    """The archive's ExportedProgram JSON (either layout), read with zipfile."""
    import json
    import zipfile
    with zipfile.ZipFile(path) as z:
        names = [n for n in z.namelist() if n == "serialized_exported_program.json"
                 or (n.count("/") == 2 and n.split("/")[1] == "models" and n.endswith(".json"))]
        return json.loads(z.read(names[0]))
