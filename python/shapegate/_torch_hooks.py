"""The one place where shapegate touches torch beyond its public API.

torch.export offers no public way to see the ShapeEnv of an export (least of all of one that
raised), nor the classes behind ``Dim``, ``Dim.AUTO`` and derived dims, nor pytree key paths.
Everything of that kind is here, resolved once per torch version, so that the rest of the
package reads plain Python values:

- ``ShapeEnvRecorder``: wraps ``ShapeEnv.__init__`` (and calls the original) to keep every
  ShapeEnv created while a capture is active, and gives each one a guard list and a
  deferred-runtime-assert table that note the user-code line of every item torch appends;
- ``read_shape_env()``: symbols, ranges, hints, sources, replacements, guards, deferred runtime
  asserts and traced input shapes of one ShapeEnv, as plain values;
- ``describe_leaf()`` / ``spec_mirror()`` / ``match_spec()``: the user's ``dynamic_shapes`` as
  given, and which spec leaf torch pairs with which input tensor;
- ``flatten_with_paths()``: pytree leaves with torch's own ``keystr`` paths.

``PINNED`` records, per supported torch version, how each hook resolves there;
``probe()`` reports the same for the running torch and python/tests/test_torch_hooks.py
compares the two, so a torch upgrade that moves any of these fails one named test.
"""

import dataclasses
import inspect
import linecache
import math
import os
import sys
import sysconfig
import threading

import torch
import torch.export
import torch.export.dynamic_shapes as _ds
import torch.fx.experimental.symbolic_shapes as _ss
import torch.utils._pytree as _pytree

INT_OO = "int_oo"
NEG_INT_OO = "-int_oo"

# How each hook resolves on the supported torch versions (see probe()).
PINNED = {
    "2.6": {
        "entry_points": ["export", "export_for_training"],
        "export_strict_default": True,
        "dim_kind": "factory function (Dims are classes of metaclass _Dim)",
        "dim_hint": "enum",
        "hints_attr": "var_to_val",
        "unbacked_hints_attr": "unbacked_var_to_val",
        "source_name": "method",
        "runtime_assert_stack": True,
        "tracked_fakes": True,
        "guards_list": True,
        "spec_matcher": "torch.export.dynamic_shapes._tree_map_with_path",
    },
    "2.14": {
        "entry_points": ["draft_export", "export"],
        "export_strict_default": False,
        "dim_kind": "class",
        "dim_hint": "dataclass (callable with min/max)",
        "hints_attr": "backed_var_to_val",
        "unbacked_hints_attr": None,
        "source_name": "property",
        "runtime_assert_stack": True,
        "tracked_fakes": True,
        "guards_list": True,
        "spec_matcher": "torch.export.dynamic_shapes._tree_map_with_path",
    },
}

ENTRY_POINTS = ("export", "export_for_training", "draft_export")

_DimHint = _ds._DimHint
_DerivedDim = _ds._DerivedDim
_StaticDim = getattr(_ds, "_StaticDim", None)
# torch >= 2.7: Dim is a class; torch 2.6: Dim() is a function returning classes of type _Dim.
_DimBase = torch.export.Dim if isinstance(torch.export.Dim, type) else _ds._Dim
_SPEC_BUILDERS = tuple(c for c in (getattr(_ds, "ShapesCollection", None),
                                   getattr(_ds, "AdditionalInputs", None)) if c is not None)


def torch_version():
    return str(torch.__version__)


def version_key(version=None):
    """``"2.14"`` for ``2.14.1+debian``."""
    parts = (version or torch_version()).split("+")[0].split(".")
    return ".".join(parts[:2])


def entry_points():
    """The export functions this torch has, by name."""
    return [n for n in ENTRY_POINTS if callable(getattr(torch.export, n, None))]


def probe():
    """How every hook resolves on the running torch (compare with ``PINNED``)."""
    se = _ss.ShapeEnv()
    from torch._dynamo.source import LocalSource
    name_attr = inspect.getattr_static(LocalSource, "name", None)
    export_sig = inspect.signature(torch.export.export)
    strict = export_sig.parameters.get("strict")
    return {
        "entry_points": sorted(entry_points()),
        "export_strict_default": None if strict is None else strict.default,
        "dim_kind": "class" if isinstance(torch.export.Dim, type)
        else "factory function (Dims are classes of metaclass _Dim)",
        "dim_hint": "dataclass (callable with min/max)" if dataclasses.is_dataclass(_DimHint) else "enum",
        "hints_attr": _first_attr(se, ("backed_var_to_val", "var_to_val")),
        "unbacked_hints_attr": _first_attr(se, ("unbacked_var_to_val",)),
        "source_name": "method" if inspect.isfunction(name_attr) else "property",
        "runtime_assert_stack": "stack" in {f.name for f in dataclasses.fields(_ss.RuntimeAssert)},
        "tracked_fakes": hasattr(se, "tracked_fakes"),
        "guards_list": isinstance(getattr(se, "guards", None), list),
        "spec_matcher": "torch.export.dynamic_shapes._tree_map_with_path"
        if callable(getattr(_ds, "_tree_map_with_path", None)) else "shapegate",
    }


def _first_attr(obj, names):
    for n in names:
        if hasattr(obj, n):
            return n
    return None


# ------------------------------------------------------------------------------- values and names

def bound(v, upper=False):
    """A range bound as an int or "int_oo" / "-int_oo"; a non-integral bound (a float symbol)
    is rounded outwards, which keeps the range sound for integers."""
    s = str(v)
    if s in ("int_oo", "oo", "inf"):
        return INT_OO
    if s in ("-int_oo", "-oo", "-inf"):
        return NEG_INT_OO
    if isinstance(v, int) or getattr(v, "is_Integer", False):
        return int(v)
    f = float(v)
    return math.ceil(f) if upper else math.floor(f)


def source_name(src):
    """``L['x']`` for a torch Source (``name`` is a method in torch 2.6, a property later)."""
    n = src.name
    return n() if callable(n) else n


def int_value(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def is_unbacked(sym):
    st = getattr(_ss, "SymT", None)
    if st is not None and hasattr(_ss, "symbol_is_type"):
        return bool(_ss.symbol_is_type(sym, (st.UNBACKED_INT, st.UNBACKED_FLOAT)))
    return str(sym).startswith("u")


# ------------------------------------------------------------------------------------ user frames

def _library_dirs():
    dirs = {os.path.dirname(os.path.abspath(torch.__file__)),
            os.path.dirname(os.path.abspath(__file__))}
    for mod in ("sympy", "numpy", "typing_extensions", "functorch", "mpmath"):
        m = sys.modules.get(mod)
        if m is not None and getattr(m, "__file__", None):
            dirs.add(os.path.dirname(os.path.abspath(m.__file__)))
    for key in ("stdlib", "platstdlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            dirs.add(os.path.abspath(p))
    return tuple(d + os.sep for d in dirs)


_LIBRARY_DIRS = None


def is_library_file(filename):
    global _LIBRARY_DIRS
    if not filename or filename.startswith("<"):
        return True
    if _LIBRARY_DIRS is None:
        _LIBRARY_DIRS = _library_dirs()
    return os.path.abspath(filename).startswith(_LIBRARY_DIRS)


def format_loc(filename, lineno, name, line=None):
    """torch's user-location form: ``return x + y  # model.py:12 in forward``."""
    if line is None:
        line = linecache.getline(filename, lineno).strip()
    where = f"{filename}:{lineno} in {name}"
    return f"{line}  # {where}" if line else where


class CallSite:
    """The frame that called an export function: a user-code search stops there."""

    def __init__(self, frame):
        self.frame = frame
        self.filename = frame.f_code.co_filename
        self.lineno = frame.f_lineno
        self.name = frame.f_code.co_name

    def text(self):
        return f"{self.filename}:{self.lineno}"

    def matches(self, fs):
        return (fs.filename, fs.lineno, fs.name) == (self.filename, self.lineno, self.name)


def user_loc_here(call_site, skip=2):
    """The innermost frame of the current stack outside torch, shapegate and the standard
    library, as ``format_loc`` text; None when that frame is the export call itself."""
    f = sys._getframe(skip)
    while f is not None:
        if call_site is not None and f is call_site.frame:
            return None
        code = f.f_code
        if not is_library_file(code.co_filename):
            return format_loc(code.co_filename, f.f_lineno, code.co_name)
        f = f.f_back
    return None


def user_loc_of_stack(summary, call_site):
    """The same search over a ``traceback.StackSummary`` (outermost frame first)."""
    for fs in reversed(list(summary)):
        if call_site is not None and call_site.matches(fs):
            return None
        if not is_library_file(fs.filename):
            return format_loc(fs.filename, fs.lineno, fs.name, fs.line)
    return None


# ------------------------------------------------------------------------------ ShapeEnv recording

def _traced_user_loc():
    """Strict export: the user line dynamo is tracing (torch's own user stack), or None."""
    try:
        from torch._guards import TracingContext
        frames = TracingContext.extract_stack()
    except Exception:  # noqa: BLE001 - no tracing context: non-strict export
        return None
    for fs in reversed(list(frames or [])):
        if not is_library_file(fs.filename):
            return format_loc(fs.filename, fs.lineno, fs.name, fs.line)
    return None


class _LocatedList(list):
    """A ShapeEnv list (guards, a deferred-runtime-assert bucket) that notes the user-code line
    of each item as torch appends it."""

    def append(self, item):
        rec = _RECORDER.current()
        loc = None
        if rec is not None:
            loc = _traced_user_loc() or user_loc_here(rec.call_site)
        self._sg_locs[id(item)] = (item, loc)
        super().append(item)

    def loc_of(self, item):
        entry = getattr(self, "_sg_locs", {}).get(id(item))
        return entry[1] if entry is not None and entry[0] is item else None


def _located(items):
    out = _LocatedList(items)
    out._sg_locs = {}
    return out


class _LocatedAsserts(dict):
    """ShapeEnv.deferred_runtime_asserts whose buckets are ``_LocatedList`` (torch adds to it
    only through ``setdefault(symbol, []).append(ra)``)."""

    def setdefault(self, key, default=None):
        if key not in self:
            dict.__setitem__(self, key, _located(default or []))
        return dict.__getitem__(self, key)


def _loc_in(container, item):
    return container.loc_of(item) if isinstance(container, _LocatedList) else None


class Recording:
    """The ShapeEnvs created during one export call."""

    def __init__(self, call_site):
        self.call_site = call_site
        self.shape_envs = []


class ShapeEnvRecorder:
    """Wraps ``ShapeEnv.__init__`` while at least one recording is active. Recordings nest (the
    innermost collects); the wrapper calls the original and changes nothing torch computes."""

    def __init__(self):
        self._lock = threading.RLock()
        self._stack = []
        self._orig_init = None

    def current(self):
        return self._stack[-1] if self._stack else None

    def start(self, call_site):
        rec = Recording(call_site)
        with self._lock:
            if self._orig_init is None:
                self._install()
            self._stack.append(rec)
        return rec

    def stop(self, rec):
        with self._lock:
            if rec in self._stack:
                self._stack.remove(rec)
            if not self._stack and self._orig_init is not None:
                _ss.ShapeEnv.__init__ = self._orig_init
                self._orig_init = None

    def _install(self):
        orig = _ss.ShapeEnv.__init__
        recorder = self

        def __init__(se, *args, **kwargs):
            orig(se, *args, **kwargs)
            rec = recorder.current()
            if rec is None:
                return
            rec.shape_envs.append(se)
            if type(getattr(se, "guards", None)) is list:
                se.guards = _located(se.guards)
            asserts = getattr(se, "deferred_runtime_asserts", None)
            if type(asserts) is dict:
                se.deferred_runtime_asserts = _LocatedAsserts(
                    {k: _located(v) for k, v in asserts.items()})

        __init__.__wrapped__ = orig
        self._orig_init = orig
        _ss.ShapeEnv.__init__ = __init__


_RECORDER = ShapeEnvRecorder()


def recorder():
    return _RECORDER


def main_shape_env(shape_envs):
    """The export's ShapeEnv: the last one created that holds sources, guards or ranges."""
    main = None
    for se in shape_envs:
        if getattr(se, "var_to_sources", None) or getattr(se, "guards", None) or getattr(se, "var_to_range", None):
            main = se
    return main


def read_shape_env(se, call_site):
    """Plain values of one ShapeEnv: ``{"symbols", "guards", "fakes"}``; ``fakes`` maps each
    tracked input's source name to its traced shape (strings: ``"s77"``, ``"2*s77"``, ``"3"``)."""
    hints = getattr(se, "backed_var_to_val", None)
    if hints is None:
        hints = getattr(se, "var_to_val", None) or {}
    unbacked_hints = getattr(se, "unbacked_var_to_val", None) or {}
    size_like = getattr(se, "size_like", None) or set()
    var_to_range = dict(getattr(se, "var_to_range", {}) or {})
    var_to_sources = dict(getattr(se, "var_to_sources", {}) or {})
    replacements = dict(getattr(se, "replacements", {}) or {})

    order = list(var_to_range)
    seen = set(order)
    for table in (var_to_sources, hints, unbacked_hints, replacements):
        for s in table:
            if s not in seen:
                seen.add(s)
                order.append(s)
    symbols = []
    for s in order:
        vr = var_to_range.get(s)
        rng = [NEG_INT_OO, INT_OO] if vr is None else [bound(vr.lower), bound(vr.upper, upper=True)]
        unbacked = is_unbacked(s)
        hint = hints.get(s)
        if hint is None:
            hint = unbacked_hints.get(s)
        rep = replacements.get(s)
        symbols.append({
            "name": str(s), "range": rng, "hint": int_value(hint) if hint is not None else None,
            "unbacked": unbacked, "size_like": s in size_like,
            "replacement": None if rep is None else str(rep),
            "sources": [source_name(x) for x in var_to_sources.get(s, [])],
        })

    guards = []
    glist = getattr(se, "guards", None) or []
    for g in glist:
        sloc = getattr(g, "sloc", None)
        torch_user = getattr(sloc, "maybe_user_loc", None)
        ours = _loc_in(glist, g)
        floc = getattr(sloc, "framework_loc", None)
        if floc is not None and not isinstance(floc, str):
            floc = f'File "{floc.filename}", line {floc.lineno}, in {floc.name}' + \
                (f"\n    {floc.line}" if getattr(floc, "line", None) else "")
        rec = {"origin": "shape", "expr": str(g.expr)}
        user = torch_user or ours
        if user:
            rec["user_loc"] = user
        if floc:
            rec["framework_loc"] = floc
        if sloc is not None:
            rec["sloc"] = str(sloc)
        guards.append(rec)
    for _key, asserts in (getattr(se, "deferred_runtime_asserts", None) or {}).items():
        for ra in asserts:
            rec = {"origin": "runtime_assert", "expr": str(ra.expr)}
            user = _loc_in(asserts, ra)
            stack = getattr(ra, "stack", None)
            if user is None and stack is not None:
                try:  # torch 2.6 keeps each assert's stack; 2.14 keeps an empty one
                    user = user_loc_of_stack(stack.summary(), call_site)
                except Exception:  # noqa: BLE001 - a stack torch could not symbolise: no location
                    user = None
            if user:
                rec["user_loc"] = user
            if getattr(ra, "msg", None):
                rec["msg"] = str(ra.msg)
            guards.append(rec)

    fakes = {}
    for tf in getattr(se, "tracked_fakes", None) or []:
        shape = getattr(tf.fake, "shape", None)
        if shape is None:
            continue
        try:
            name = source_name(tf.source)
        except Exception:  # noqa: BLE001
            continue
        fakes.setdefault(name, [str(d) for d in shape])
    return {"symbols": symbols, "guards": guards, "fakes": fakes}


# ------------------------------------------------------------------------------ dynamic_shapes spec

def resolve_spec(dynamic_shapes, mod, args, kwargs):
    """A ShapesCollection / AdditionalInputs turned into the plain spec torch uses."""
    if _SPEC_BUILDERS and isinstance(dynamic_shapes, _SPEC_BUILDERS):
        return dynamic_shapes.dynamic_shapes(mod, args, kwargs)
    return dynamic_shapes


def _num(v, oo="oo"):
    s = str(v)
    if s in ("int_oo", "oo"):
        return oo
    if s in ("-int_oo", "-oo"):
        return "-" + oo
    return int(v)


def _safe_bound(fn, oo):
    try:
        return _num(fn(), oo), None
    except Exception as e:  # noqa: BLE001 - torch raises computing a derived bound
        return None, f"<unavailable: {type(e).__name__}: {e}>"


def _derived_expr(d):
    import sympy
    return d.fn(sympy.Symbol(d.root.__name__))


def describe_leaf(d):
    """One per-dim spec leaf as ``(kind, info)``; kind is one of unset, static, dim, derived,
    auto, dynamic, unknown (info: plain values)."""
    if d is None:
        return "unset", {}
    if isinstance(d, bool):
        return "unknown", {"repr": repr(d)}
    if isinstance(d, int):
        return "static", {"size": d}
    if isinstance(d, _DimHint):
        t = getattr(d, "type", d).name
        lo, hi = getattr(d, "min", None), getattr(d, "max", None)
        return t.lower(), {"min": lo, "max": hi}
    if _StaticDim is not None and isinstance(d, _StaticDim):
        return "static", {"size": int(d.value)}
    if isinstance(d, _DerivedDim):
        root = d.root
        try:
            expr = str(_derived_expr(d))
        except Exception:  # noqa: BLE001
            expr = d.__name__
        return "derived", {"name": d.__name__, "expr": expr,
                           "root": {"name": root.__name__, "min": root.min, "max": root.max},
                           "min": lambda: d.min, "max": lambda: d.max}
    if isinstance(d, _DimBase):
        return "dim", {"name": d.__name__, "min": d.min, "max": d.max}
    return "unknown", {"repr": repr(d)}


def leaf_v1(d):
    """A spec leaf in the v1 trace's ``inputs[].spec`` form."""
    kind, info = describe_leaf(d)
    if kind == "unknown":
        return {"kind": "unset"}
    out = {"kind": kind}
    if kind == "static":
        if "size" in info:
            out["size"] = info["size"]
    elif kind == "dim":
        out.update(name=info["name"], min=_num(info["min"], INT_OO), max=_num(info["max"], INT_OO))
    elif kind == "derived":
        root = info["root"]
        out.update(name=info["name"], expr=info["expr"],
                   root={"name": root["name"], "min": _num(root["min"], INT_OO), "max": _num(root["max"], INT_OO)})
        for k in ("min", "max"):
            v, err = _safe_bound(info[k], INT_OO)
            out[k] = {"unavailable": err} if err else v
    elif kind in ("auto", "dynamic"):
        lo, hi = info["min"], info["max"]
        if lo is not None or hi is not None:
            out["min"] = 0 if lo is None else int(lo)
            out["max"] = INT_OO if hi is None else int(hi)
    return out


def leaf_mirror(d):
    """A spec leaf in the corpus's structured form (tests/corpus/README.md, case.json)."""
    kind, info = describe_leaf(d)
    if kind == "unset":
        return None
    if kind == "static":
        return info["size"] if "size" in info else "STATIC"
    if kind in ("auto", "dynamic"):
        if info["min"] is None and info["max"] is None:
            return kind.upper()
        return {"hint": kind.upper(), "min": info["min"], "max": info["max"]}
    if kind == "dim":
        return {"name": info["name"], "min": _num(info["min"]), "max": _num(info["max"])}
    if kind == "derived":
        root = info["root"]
        out = {"derived": info["name"], "expr": info["expr"],
               "root": {"name": root["name"], "min": _num(root["min"]), "max": _num(root["max"])}}
        for k in ("min", "max"):
            v, err = _safe_bound(info[k], "oo")
            out[k] = err if err else v
        return out
    return {"unknown": info["repr"]}


def is_spec_leaf(d):
    return d is None or isinstance(d, (int, _DimHint, _DimBase)) or (
        _StaticDim is not None and isinstance(d, _StaticDim))


def spec_mirror(spec):
    """The whole spec in the corpus's structured form: dict -> object (keys as strings), list ->
    array, tuple (and namedtuple) -> {"__tuple__": [...]}, leaves by ``leaf_mirror``."""
    if is_spec_leaf(spec):
        return leaf_mirror(spec)
    if isinstance(spec, dict):
        return {str(k): spec_mirror(v) for k, v in spec.items()}
    if isinstance(spec, tuple):
        return {"__tuple__": [spec_mirror(v) for v in spec]}
    if isinstance(spec, list):
        return [spec_mirror(v) for v in spec]
    return {"unknown": repr(spec)}


def combine_args(mod, args, kwargs):
    """The call's arguments by parameter name, as torch.export binds them."""
    fn = mod.forward if isinstance(mod, torch.nn.Module) else mod
    return dict(inspect.signature(fn).bind(*args, **(kwargs or {})).arguments)


def signature_of(mod):
    fn = mod.forward if isinstance(mod, torch.nn.Module) else mod
    return inspect.signature(fn)


def match_spec(mod, args, kwargs, dynamic_shapes):
    """``[(tensor, per-tensor spec)]`` in pytree leaf order, paired as torch pairs them; raises
    what torch raises when the spec does not fit the inputs."""
    combined = combine_args(mod, args, kwargs)
    tree = combined if isinstance(dynamic_shapes, dict) else type(dynamic_shapes)(combined.values())
    pairs = []

    def visit(path, t, shape):
        if isinstance(t, torch.Tensor):
            pairs.append((t, shape))

    mapper = getattr(_ds, "_tree_map_with_path", None)
    if mapper is not None:
        mapper(visit, tree, dynamic_shapes, tree_name="inputs")
    else:  # a torch without the private helper: the same pairing for built-in containers
        _walk(tree, dynamic_shapes, pairs)
    return pairs


def _walk(t, spec, pairs):
    if isinstance(t, torch.Tensor):
        pairs.append((t, spec))
    elif isinstance(t, dict):
        for k, v in t.items():
            _walk(v, spec.get(k) if isinstance(spec, dict) else None, pairs)
    elif isinstance(t, (list, tuple)):
        for i, v in enumerate(t):
            _walk(v, spec[i] if isinstance(spec, (list, tuple)) and i < len(spec) else None, pairs)
    elif dataclasses.is_dataclass(t):
        children = [getattr(t, f.name) for f in dataclasses.fields(t)]
        _walk(children, spec, pairs)


def dim_spec_of(shape, i):
    """The spec of dim ``i`` of a tensor whose spec is ``shape`` (dict / list / tuple / None)."""
    if isinstance(shape, dict):
        return shape.get(i)
    if isinstance(shape, (list, tuple)):
        return shape[i] if i < len(shape) else None
    return None


# --------------------------------------------------------------------------------------- pytrees

def flatten_with_paths(tree):
    """``[(keystr, leaf)]`` with torch's own key paths (``['inputs']['b'][1]``)."""
    flat, _ = _pytree.tree_flatten_with_path(tree)
    return [(_pytree.keystr(path), leaf) for path, leaf in flat]


def flatten_with_spec_paths(tree):
    """``[(spec_path, keystr, leaf)]`` in pytree leaf order. ``spec_path`` addresses the leaf
    the way dynamic_shapes does: ``[key]`` in dicts, ``[i]`` in lists, tuples and namedtuples,
    and ``[i]`` among the flattened children of a registered custom node (a dataclass), whose
    spec torch matches as a list (torch.export.dynamic_shapes._tree_map_with_path). ``keystr``
    is torch's own path (``['batch'].x`` in 2.14, ``['batch']['x']`` in 2.6)."""
    node_type = getattr(_pytree, "_get_node_type", type)
    nodes = getattr(_pytree, "SUPPORTED_NODES", {})
    spec_paths = []

    def walk(v, path):
        node = nodes.get(node_type(v))
        if node is None:
            spec_paths.append((path, v))
            return
        children, ctx = node.flatten_fn(v)
        if isinstance(v, dict):
            keys = [f"[{k!r}]" for k in ctx] if isinstance(ctx, (list, tuple)) and len(ctx) == len(children) \
                else [f"[{k!r}]" for k in v]
        else:
            keys = [f"[{i}]" for i in range(len(children))]
        for k, c in zip(keys, children):
            walk(c, path + k)

    walk(tree, "")
    torch_paths = flatten_with_paths(tree)
    if len(torch_paths) != len(spec_paths) or any(a is not b for (_, a), (_, b) in zip(spec_paths, torch_paths)):
        return [(p, p, v) for p, v in torch_paths]   # cannot align: torch's paths for both
    return [(sp, kp, v) for (sp, v), (kp, _) in zip(spec_paths, torch_paths)]


def node_kind(v):
    """How a non-leaf value shows in the inputs JSON: ``("namedtuple", type name, fields)``,
    ``("node", type name, keys)`` for a registered custom pytree node (a dataclass), else None."""
    if isinstance(v, tuple) and hasattr(type(v), "_fields"):
        return "namedtuple", type(v).__name__, list(type(v)._fields)
    typ = type(v)
    if typ in getattr(_pytree, "SUPPORTED_NODES", {}) and not isinstance(v, (list, tuple, dict)):
        try:
            children, ctx = _pytree.SUPPORTED_NODES[typ].flatten_fn(v)
        except Exception:  # noqa: BLE001
            return None
        keys = [f.name for f in dataclasses.fields(v)] if dataclasses.is_dataclass(v) else None
        return "node", f"{typ.__module__}.{typ.__qualname__}", (keys, list(children))
    return None
