"""Capture: one v1 trace per torch.export call, whether the export succeeds or raises.

``Capture`` is the context manager behind ``shapegate.capture()`` and
``python3 -m shapegate capture``. While one is active, ``torch.export.export``,
``export_for_training`` and ``draft_export`` (those this torch has) are wrapped: the wrapper
binds the call as torch does, starts a ShapeEnv recording (``_torch_hooks``), calls the
original, and, when it returns or raises, turns what torch held into a trace
(docs/trace-format.md) and writes ``DIR/<n>-<function>.json``. The export's result or exception
reaches the caller unchanged; a failure to write a trace is one line on stderr, never an
exception in the user's code.
"""

import functools
import inspect
import os
import re
import sys
import threading
import time

from . import __version__
from . import trace as _trace
from . import _torch_hooks as hooks
from .report import CapturedCall

TRAILER = "\n\nThe error above occurred when calling torch.export"
_FIX_BLOCK = "Suggested fixes:"


# ----------------------------------------------------------------------------- wrapping torch.export

_lock = threading.RLock()
_sessions = []            # active Capture objects, innermost last
_tls = threading.local()  # depth of export calls on this thread (nested calls are not recorded)
_installed = {}           # name -> (original, wrapper)


def _current():
    return _sessions[-1] if _sessions else None


def _make_wrapper(name, orig):
    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        session = _current()
        if session is None or getattr(_tls, "depth", 0):
            return orig(*args, **kwargs)
        return session._record(name, orig, args, kwargs, sys._getframe(1))

    wrapper.__shapegate_original__ = orig
    return wrapper


def _install():
    import torch.export
    for name in hooks.entry_points():
        if name in _installed:
            continue
        orig = getattr(torch.export, name)
        orig = getattr(orig, "__shapegate_original__", orig)
        wrapper = _make_wrapper(name, orig)
        _installed[name] = (orig, wrapper)
        setattr(torch.export, name, wrapper)


def _uninstall():
    import torch.export
    for name, (orig, wrapper) in list(_installed.items()):
        if getattr(torch.export, name, None) is wrapper:
            setattr(torch.export, name, orig)
        del _installed[name]


def original(name):
    """The unwrapped torch.export function ``name``."""
    import torch.export
    if name in _installed:
        return _installed[name][0]
    fn = getattr(torch.export, name)
    return getattr(fn, "__shapegate_original__", fn)


# ------------------------------------------------------------------------------------- the session

class Capture:
    """Record every torch.export call made inside the ``with`` block.

    ``out``: folder for ``<n>-<function>.json`` (created if missing; None: keep traces in memory
    only, in ``calls``). ``quiet``: no summary line on stderr. ``dynamic_shapes``: a mapping
    ``{call index: spec}`` whose spec replaces the call's ``dynamic_shapes`` (to try a fix
    without editing the script); a callable is given the call's own spec and returns the new one. Names bound with ``from torch.export import export`` in the
    module that enters the block are redirected for its duration too.
    """

    def __init__(self, out=None, *, quiet=False, dynamic_shapes=None, stream=None):
        self.out = os.fspath(out) if out is not None else None
        self.quiet = quiet
        self.replacements = dict(dynamic_shapes or {})
        self.stream = stream
        self.calls = []
        self._aliases = []

    # -- context manager
    def __enter__(self):
        if self.out is not None:
            os.makedirs(self.out, exist_ok=True)
        with _lock:
            _install()
            _sessions.append(self)
        self._redirect_aliases(sys._getframe(1).f_globals)
        return self

    def __exit__(self, exc_type, exc, tb):
        for g, key, wrapper, orig in self._aliases:
            if g.get(key) is wrapper:
                g[key] = orig
        self._aliases.clear()
        with _lock:
            if self in _sessions:
                _sessions.remove(self)
            if not _sessions:
                _uninstall()
        return False

    def _redirect_aliases(self, g):
        originals = {id(orig): (orig, wrapper) for orig, wrapper in _installed.values()}
        for key, val in list(g.items()):
            hit = originals.get(id(val))
            if hit is not None and hit[0] is val:
                g[key] = hit[1]
                self._aliases.append((g, key, hit[1], val))

    def _say(self, text):
        if not self.quiet:
            print(text, file=self.stream or sys.stderr, flush=True)

    # -- one call
    def _record(self, name, orig, args, kwargs, frame):
        index = len(self.calls) + 1
        call_site = hooks.CallSite(frame)
        try:
            bound = inspect.signature(orig).bind(*args, **kwargs)
        except TypeError:
            return orig(*args, **kwargs)  # torch will report the bad call itself
        if index in self.replacements:
            new = self.replacements[index]
            if callable(new):  # a function of the call's own spec (keeps its container types)
                new = new(bound.arguments.get("dynamic_shapes"))
            bound.arguments["dynamic_shapes"] = new
            args, kwargs = bound.args, bound.kwargs
        full = inspect.signature(orig).bind(*args, **kwargs)
        full.apply_defaults()
        rec = hooks.recorder().start(call_site)
        _tls.depth = getattr(_tls, "depth", 0) + 1
        t0 = time.perf_counter()
        result = error = None
        try:
            result = orig(*args, **kwargs)
            return result
        except Exception as e:
            error = e
            raise
        finally:
            seconds = time.perf_counter() - t0
            _tls.depth -= 1
            hooks.recorder().stop(rec)
            self._finish(index, name, full.arguments, rec, call_site, seconds, result, error)

    def _finish(self, index, name, arguments, rec, call_site, seconds, result, error):
        path = None
        trace = None
        try:
            trace = build_trace(name, index, arguments, rec, call_site, seconds, error,
                                replaced=index in self.replacements)
            if self.out is not None:
                path = os.path.join(self.out, f"{index}-{name}.json")
                _trace.dump(trace, path)
            self._say(summary_line(trace, path))
        except Exception as e:  # noqa: BLE001 - never turn a capture problem into the user's error
            self._say(f"shapegate capture: call {index} ({name}): no trace written: {type(e).__name__}: {e}")
        self.calls.append(CapturedCall(index, name, trace, path, error, result))


def summary_line(trace, path):
    cap = trace["capture"]
    exc = trace.get("exception")
    what = "ok" if exc is None else f"raised {exc['type'].rsplit('.', 1)[-1]}"
    dims = trace["inputs"]
    named = sum(1 for d in dims if d["spec"]["kind"] not in ("unset", "static"))
    where = path if path is not None else "(in memory)"
    return (f"shapegate capture: {where}: {cap['function']} at {cap['call_site']} {what}; "
            f"{len(trace['symbols'])} symbols, {len(trace['guards'])} guards, "
            f"{len(dims)} input dims ({named} dynamic in the spec)")


# ---------------------------------------------------------------------------------- building traces

def build_trace(name, index, arguments, rec, call_site, seconds, error, replaced=False):
    """The v1 trace of one export call (see docs/capture.md for where each field comes from)."""
    mod = arguments.get("mod")
    args = tuple(arguments.get("args") or ())
    kwargs = dict(arguments.get("kwargs") or {})
    strict = bool(arguments.get("strict", False))
    notes = []
    try:
        spec = hooks.resolve_spec(arguments.get("dynamic_shapes"), mod, args, kwargs)
    except Exception as e:  # noqa: BLE001
        spec = arguments.get("dynamic_shapes")
        notes.append(f"spec builder raised {type(e).__name__}: {e}")

    main = hooks.main_shape_env(rec.shape_envs)
    env = hooks.read_shape_env(main, call_site) if main is not None else \
        {"symbols": [], "guards": [], "fakes": {}}
    inputs, flat, more_notes = _input_dims(mod, args, kwargs, spec, env["fakes"])
    notes += more_notes

    spec_rec = {"flat": flat, "dynamic_shapes": _safe(lambda: hooks.spec_mirror(spec), notes, "spec"),
                "inputs": _safe(lambda: _inputs_json(mod, args, kwargs), notes, "inputs")}
    exc_rec = None
    if error is not None:
        exc_rec = exception_record(error)
        spec_rec["torch_error"] = exc_rec["type"]
        if exc_rec.get("suggested_fixes") is not None:
            spec_rec["torch_suggested_fixes"] = exc_rec["suggested_fixes"]
    capture = {"tool": f"shapegate-python {__version__}", "function": f"torch.export.{name}",
               "call": index, "call_site": call_site.text(), "outcome": "ok" if error is None else "error",
               "seconds": round(seconds, 6), "python": sys.version.split()[0],
               "shape_envs": len(rec.shape_envs)}
    if replaced:
        capture["dynamic_shapes_replaced"] = True
    if notes:
        capture["notes"] = notes
    return {
        "format": _trace.FORMAT, "version": _trace.VERSION, "torch_version": hooks.torch_version(),
        "strict": strict, "shape_env": main is not None,
        "symbols": env["symbols"], "guards": env["guards"], "inputs": inputs, "spec": spec_rec,
        "capture": capture, "exception": exc_rec,
    }


def _safe(fn, notes, what):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001
        notes.append(f"{what}: {type(e).__name__}: {e}")
        return None


_ATTR = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)")


def _norm_source(s):
    """``L['batch'].x`` and ``L['batch']['x']`` name the same leaf (dynamo vs pytree paths)."""
    return _ATTR.sub(r"['\1']", s)


def _input_dims(mod, args, kwargs, spec, fakes):
    """inputs[] of the trace, whether the spec matched the inputs, and notes."""
    import torch
    notes = []
    try:
        combined = hooks.combine_args(mod, args, kwargs)
    except Exception as e:  # noqa: BLE001 - torch rejects such a call too
        notes.append(f"arguments do not bind to the signature: {e}")
        return [], False, notes
    leaves = [(sp, kp, v) for sp, kp, v in hooks.flatten_with_spec_paths(combined) if isinstance(v, torch.Tensor)]

    # the spec of each tensor, as torch pairs them (None spec: every dim unset)
    specs = [None] * len(leaves)
    flat = True
    if spec is not None:
        try:
            pairs = hooks.match_spec(mod, args, kwargs, spec)
            if len(pairs) != len(leaves) or any(t is not leaf for (t, _), (_, _, leaf) in zip(pairs, leaves)):
                raise ValueError("the spec pairs tensors in another order than the inputs flatten")
            specs = [s for _, s in pairs]
        except Exception as e:  # noqa: BLE001 - torch raises the same when it builds the spec
            flat = False
            notes.append(f"dynamic_shapes not matched to the inputs: {type(e).__name__}: {str(e).splitlines()[0]}")

    # where each tensor sits among (args, kwargs): strict export's flat_args index, 2.6's L['args']
    ak = hooks.flatten_with_paths((tuple(args), dict(kwargs)))
    positions = {}
    for i, (p, v) in enumerate(ak):
        positions.setdefault(id(v), []).append((i, p))
    seen = {}
    by_norm = {_norm_source(k): k for k in fakes}

    out = []
    for (path, kpath, t), shape in zip(leaves, specs):
        k = seen.get(id(t), 0)
        seen[id(t)] = k + 1
        pos = positions.get(id(t), [])
        i, p2 = pos[k] if k < len(pos) else (None, None)
        candidates = [("L" + kpath, False)]
        if i is not None:
            candidates += [(f"L['flat_args'][{i}]", True), ("L['args']" + p2, False)]
        traced = None
        user_named = False
        for cand, renamed in candidates:
            hit = by_norm.get(_norm_source(cand))
            if hit is not None:
                traced, user_named = hit, renamed
                break
        for d in range(t.dim()):
            spec_leaf = hooks.dim_spec_of(shape, d) if flat else None
            rec = {"path": path, "dim": d, "size": int(t.shape[d])}
            if traced is not None and d < len(fakes[traced]):
                tsrc = f"{traced}.size()[{d}]"
                rec["source"] = f"L{kpath}.size()[{d}]" if user_named else tsrc
                rec["traced_source"] = tsrc
                rec["value"] = fakes[traced][d]
            else:
                rec["source"] = f"L{kpath}.size()[{d}]"
                rec["value"] = None
            if kpath != path:
                rec["pytree_path"] = kpath
            rec["spec"] = hooks.leaf_v1(spec_leaf) if flat else {"kind": "unset"}
            out.append(rec)
    return out, flat, notes


def _value_json(v, depth=0):
    import torch
    if depth > 64:
        return {"other": "..."}
    if isinstance(v, torch.Tensor):
        return {"tensor": [int(s) for s in v.shape], "dtype": str(v.dtype).replace("torch.", "")}
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": v}
    if isinstance(v, float):
        return {"float": v if v == v and abs(v) != float("inf") else repr(v)}
    if isinstance(v, str):
        return {"str": v}
    if v is None:
        return None
    if isinstance(v, dict):
        return {"dict": {str(k): _value_json(x, depth + 1) for k, x in v.items()}}
    kind = hooks.node_kind(v)
    if kind is not None and kind[0] == "namedtuple":
        return {"tuple": [_value_json(x, depth + 1) for x in v], "namedtuple": kind[1], "fields": kind[2]}
    if isinstance(v, tuple):
        return {"tuple": [_value_json(x, depth + 1) for x in v]}
    if isinstance(v, list):
        return {"list": [_value_json(x, depth + 1) for x in v]}
    if kind is not None and kind[0] == "node":
        keys, children = kind[2]
        out = {"node": kind[1], "list": [_value_json(x, depth + 1) for x in children]}
        if keys is not None:
            out["fields"] = keys
        return out
    return {"other": repr(v)[:200]}


def _inputs_json(mod, args, kwargs):
    sig = hooks.signature_of(mod)
    out = {"arg_names": list(sig.parameters), "args": [_value_json(a) for a in args],
           "kwargs": {k: _value_json(v) for k, v in kwargs.items()}, "flat": []}
    combined = hooks.combine_args(mod, args, kwargs)
    for path, _kpath, leaf in hooks.flatten_with_spec_paths(combined):
        row = {"path": path}
        row.update(_value_json(leaf) or {"none": True})
        out["flat"].append(row)
    out["signature"] = str(sig)
    return out


def parse_fixes(msg):
    """The lines of torch's "Suggested fixes:" block, indent stripped; None without one."""
    if not msg or _FIX_BLOCK not in msg:
        return None
    block = msg.split(_FIX_BLOCK, 1)[1].split(TRAILER, 1)[0]
    return [ln.strip() for ln in block.strip("\n").split("\n") if ln.strip()]


def qualname(e):
    t = type(e)
    return f"{t.__module__}.{t.__qualname__}"


def exception_record(e):
    """torch's exception as raised: type, ``str()``, ``.msg`` when it differs, the user error
    type, the "Suggested fixes" lines, the cause chain and the innermost frames."""
    import traceback
    msg_attr = getattr(e, "msg", None)
    rec = {"type": qualname(e), "message": str(e)}
    if isinstance(msg_attr, str) and msg_attr != rec["message"]:
        rec["msg"] = msg_attr
    et = getattr(e, "error_type", None)
    if et is not None:
        rec["user_error_type"] = getattr(et, "name", str(et))
    rec["suggested_fixes"] = parse_fixes(msg_attr if isinstance(msg_attr, str) else rec["message"])
    chain = []
    c = e.__cause__ or e.__context__
    while c is not None and len(chain) < 4:
        chain.append({"type": qualname(c), "message": str(c)[:4000]})
        c = c.__cause__ or c.__context__
    rec["cause"] = chain
    frames = traceback.extract_tb(e.__traceback__)
    rec["raised_at"] = [f"{f.filename}:{f.lineno} in {f.name}" for f in frames][-6:]
    return rec
