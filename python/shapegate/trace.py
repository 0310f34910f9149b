"""The single-file JSON trace, version 1 (docs/trace-format.md): write, read, validate.

Standard library only. A trace is a plain ``dict`` with the keys of docs/trace-format.md §1;
``dumps()`` writes it in the writers' layout (keys in the documented order, one record per
line), ``loads()`` reads and validates one and returns the same ``dict``. Integers stay Python
integers of any size; infinite bounds are the strings ``"int_oo"`` / ``"-int_oo"``.

Optional keys that this writer adds within version 1 (readers ignore keys they do not know):

- ``spec.torch_suggested_fixes`` (lines of torch's "Suggested fixes:" block) and
  ``spec.torch_error`` (module-qualified exception type), which the C library reads;
- ``inputs[].pytree_path``: torch's own key path of the tensor when it differs from ``path``,
  which addresses the tensor as dynamic_shapes does (``['batch'][0]`` for the first field of a
  registered dataclass, ``['pair'][1]`` in a namedtuple);
- ``capture``: where and how the trace was made (function, call site, outcome, versions);
- ``exception``: torch's exception as raised (type, ``str()``, ``.msg``, cause chain).
"""

import json
import os
import re
import tempfile

FORMAT = "shapegate-trace"
VERSION = 1
INT_OO = "int_oo"
NEG_INT_OO = "-int_oo"
MAX_FILE = 64 << 20          # the C reader's limit (SG_TRACE_MAX_FILE)

SPEC_KINDS = ("unset", "static", "dim", "derived", "auto", "dynamic")
ORIGINS = ("shape", "runtime_assert")
_TOP_KEYS = ("format", "version", "torch_version", "strict", "shape_env",
             "symbols", "guards", "inputs", "spec")
_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_DIGITS = re.compile(r"-?[0-9]+\Z")


class TraceError(ValueError):
    """A trace that does not follow the format: one line, ``WHERE: field: problem``."""


# ------------------------------------------------------------------------------------------ writing

def _j(value):
    """Compact JSON of one value, UTF-8 kept, as the C writer spaces records."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)


def _compact(value):
    """Opaque JSON (spec.dynamic_shapes, spec.inputs) as the C reader re-serialises it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _symbol_line(s):
    rec = {"name": s["name"], "range": list(s.get("range", [NEG_INT_OO, INT_OO])),
           "hint": s.get("hint"), "unbacked": bool(s.get("unbacked", False)),
           "size_like": bool(s.get("size_like", False)), "replacement": s.get("replacement"),
           "sources": list(s.get("sources", []))}
    return "    " + _j(rec)


def _guard_line(g):
    rec = {"origin": g["origin"], "expr": g["expr"]}
    for k in ("user_loc", "framework_loc", "sloc", "msg"):
        if g.get(k) is not None:
            rec[k] = g[k]
    return "    " + _j(rec)


def _input_line(d):
    rec = {"path": d["path"], "dim": d["dim"], "size": d["size"]}
    for k in ("source", "traced_source"):
        if d.get(k) is not None:
            rec[k] = d[k]
    rec["value"] = d.get("value")
    rec["spec"] = d.get("spec") or {"kind": "unset"}
    if d.get("pytree_path") is not None:
        rec["pytree_path"] = d["pytree_path"]
    return "    " + _j(rec)


def _array(key, items, line):
    if not items:
        return f'  "{key}": []'
    return f'  "{key}": [\n' + ",\n".join(line(x) for x in items) + "\n  ]"


def dumps(trace):
    """The trace as text, deterministically: the documented keys in order, one record per line,
    then the optional keys this package adds (``capture``, ``exception``), each on one line."""
    spec = trace.get("spec") or {}
    spec_parts = [f'"flat": {_j(bool(spec.get("flat", False)))}',
                  f'"dynamic_shapes": {_compact(spec.get("dynamic_shapes"))}',
                  f'"inputs": {_compact(spec.get("inputs"))}']
    if spec.get("torch_suggested_fixes") is not None:
        spec_parts.append(f'"torch_suggested_fixes": {_compact(spec["torch_suggested_fixes"])}')
    if spec.get("torch_error") is not None:
        spec_parts.append(f'"torch_error": {_j(spec["torch_error"])}')
    lines = [
        "{",
        f'  "format": {_j(FORMAT)},',
        f'  "version": {VERSION},',
        f'  "torch_version": {_j(trace.get("torch_version") or "")},',
        f'  "strict": {_j(bool(trace.get("strict", False)))},',
        f'  "shape_env": {_j(bool(trace.get("shape_env", False)))},',
        _array("symbols", trace.get("symbols") or [], _symbol_line) + ",",
        _array("guards", trace.get("guards") or [], _guard_line) + ",",
        _array("inputs", trace.get("inputs") or [], _input_line) + ",",
        '  "spec": {' + ", ".join(spec_parts) + "}",
    ]
    for extra in ("capture", "exception"):
        if trace.get(extra) is not None:
            lines[-1] += ","
            lines.append(f'  "{extra}": {_j(trace[extra])}')
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_atomic(path, text):
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename, so
    that a reader never sees a partial file. Refuses to replace anything but a regular file."""
    path = os.fspath(path)
    if os.path.lexists(path) and (os.path.islink(path) or not os.path.isfile(path)):
        raise OSError(f"{path}: exists and is not a regular file; not replaced")
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".sg-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def dump(trace, path):
    """Validate ``trace`` and write it to ``path`` atomically."""
    text = dumps(trace)
    loads(text, where=os.fspath(path))      # never write a trace the readers would reject
    write_atomic(path, text)


# ------------------------------------------------------------------------------------------ reading

class _Reader:
    def __init__(self, where):
        self.where = where

    def fail(self, field, problem):
        raise TraceError(f"{self.where}: {field}: {problem}" if field else f"{self.where}: {problem}")

    def expect(self, v, field, ok, expected):
        """`v` when `ok`, else the error "expected <expected>, got <its kind>"."""
        if not ok:
            self.fail(field, f"expected {expected}, got {_kind(v)}")
        return v

    def obj(self, v, field):
        return self.expect(v, field, isinstance(v, dict), "an object")

    def arr(self, v, field):
        return self.expect(v, field, isinstance(v, list), "an array")

    def string(self, v, field, optional=False):
        if v is None and optional:
            return None
        return self.expect(v, field, isinstance(v, str), "a string")

    def boolean(self, v, field, default=None):
        if v is None and default is not None:
            return default
        return self.expect(v, field, isinstance(v, bool), "true or false")

    def integer(self, v, field, optional=False):
        if v is None and optional:
            return None
        if isinstance(v, str) and _DIGITS.match(v):
            v = int(v)
        self.expect(v, field, isinstance(v, int) and not isinstance(v, bool), "an integer")
        if abs(v) >= 1 << 127:
            self.fail(field, "integer outside the signed 128-bit range")
        return v

    def bound(self, v, field):
        if v in (INT_OO, NEG_INT_OO):
            return v
        return self.integer(v, field)


def _kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    return "an object"


def _read_spec_bound(r, v, field):
    if isinstance(v, dict):
        return {"unavailable": r.string(v.get("unavailable"), field + ".unavailable")}
    return r.bound(v, field)


def _read_dim_spec(r, s, field):
    s = r.obj(s, field)
    kind = s.get("kind", "unset")
    if kind not in SPEC_KINDS:
        r.fail(field + ".kind", f"unknown spec kind {kind!r}")
    out = dict(s)
    if kind == "static" and "size" in s:
        out["size"] = r.integer(s["size"], field + ".size")
    elif kind in ("dim", "derived"):
        r.string(s.get("name"), field + ".name", optional=(kind == "dim"))
        for k in ("min", "max"):
            if k in s:
                out[k] = _read_spec_bound(r, s[k], f"{field}.{k}")
        if kind == "derived":
            r.string(s.get("expr"), field + ".expr")
            root = r.obj(s.get("root"), field + ".root")
            r.string(root.get("name"), field + ".root.name", optional=True)
            for k in ("min", "max"):
                if k in root:
                    r.bound(root[k], f"{field}.root.{k}")
    elif kind in ("auto", "dynamic"):
        if ("min" in s) != ("max" in s):
            r.fail(field, "min and max come together or not at all")
        for k in ("min", "max"):
            if k in s:
                out[k] = _read_spec_bound(r, s[k], f"{field}.{k}")
    return out


def loads(text, where="trace JSON"):
    """Read and validate a v1 trace; returns the ``dict``. Raises ``TraceError`` (one line naming
    ``where`` and the field) for anything the format does not allow."""
    r = _Reader(where)
    if isinstance(text, bytes):
        if len(text) > MAX_FILE:
            r.fail("", f"larger than {MAX_FILE} bytes")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            r.fail("", f"not UTF-8 (byte {e.start})")
    if len(text) > MAX_FILE:
        r.fail("", f"larger than {MAX_FILE} bytes")
    try:
        t = json.loads(text)
    except json.JSONDecodeError as e:
        r.fail("", f"invalid JSON at byte {e.pos} (line {e.lineno}, column {e.colno})")
    r.obj(t, "")
    if t.get("format") != FORMAT:
        r.fail("format", f"expected {FORMAT!r}, got {t.get('format')!r}")
    version = r.integer(t.get("version"), "version")
    if version > VERSION:
        r.fail("version", f"format version {version} is newer than this shapegate reads ({VERSION})")
    if version < 1:
        r.fail("version", f"no format version {version}")
    r.string(t.get("torch_version", ""), "torch_version")
    r.boolean(t.get("strict"), "strict", default=False)
    r.boolean(t.get("shape_env"), "shape_env", default=False)
    names = set()
    for i, s in enumerate(r.arr(t.get("symbols", []), "symbols")):
        f = f"symbols[{i}]"
        r.obj(s, f)
        name = r.string(s.get("name"), f + ".name")
        if not _SYMBOL.match(name):
            r.fail(f + ".name", f"{name!r} is not a bare symbol")
        if name in names:
            r.fail(f, f"symbol {name!r} listed twice")
        names.add(name)
        rng = r.arr(s.get("range", [NEG_INT_OO, INT_OO]), f + ".range")
        if len(rng) != 2:
            r.fail(f + ".range", "expected [lo, hi]")
        r.bound(rng[0], f + ".range[0]")
        r.bound(rng[1], f + ".range[1]")
        r.integer(s.get("hint"), f + ".hint", optional=True)
        r.boolean(s.get("unbacked"), f + ".unbacked", default=False)
        r.boolean(s.get("size_like"), f + ".size_like", default=False)
        r.string(s.get("replacement"), f + ".replacement", optional=True)
        for k, src in enumerate(r.arr(s.get("sources", []), f + ".sources")):
            r.string(src, f"{f}.sources[{k}]")
    for i, g in enumerate(r.arr(t.get("guards", []), "guards")):
        f = f"guards[{i}]"
        r.obj(g, f)
        if g.get("origin") not in ORIGINS:
            r.fail(f + ".origin", f"expected 'shape' or 'runtime_assert', got {g.get('origin')!r}")
        r.string(g.get("expr"), f + ".expr")
        for k in ("user_loc", "framework_loc", "sloc", "msg"):
            r.string(g.get(k), f"{f}.{k}", optional=True)
    for i, d in enumerate(r.arr(t.get("inputs", []), "inputs")):
        f = f"inputs[{i}]"
        r.obj(d, f)
        r.string(d.get("path"), f + ".path")
        dim = r.integer(d.get("dim"), f + ".dim")
        if not 0 <= dim <= 65535:
            r.fail(f + ".dim", f"dimension index {dim} outside 0 .. 65535")
        r.integer(d.get("size"), f + ".size")
        r.string(d.get("source"), f + ".source", optional=True)
        r.string(d.get("traced_source"), f + ".traced_source", optional=True)
        r.string(d.get("pytree_path"), f + ".pytree_path", optional=True)
        v = d.get("value")
        if v is not None and not isinstance(v, (str, int)) or isinstance(v, bool):
            r.fail(f + ".value", f"expected an expression or null, got {_kind(v)}")
        if "spec" in d:
            _read_dim_spec(r, d["spec"], f + ".spec")
    spec = r.obj(t.get("spec", {}), "spec")
    r.boolean(spec.get("flat"), "spec.flat", default=False)
    fixes = spec.get("torch_suggested_fixes")
    if fixes is not None:
        for k, line in enumerate(r.arr(fixes, "spec.torch_suggested_fixes")):
            r.string(line, f"spec.torch_suggested_fixes[{k}]")
    r.string(spec.get("torch_error"), "spec.torch_error", optional=True)
    return t


def load(path):
    """Read and validate the trace file at ``path``."""
    path = os.fspath(path)
    with open(path, "rb") as fh:
        data = fh.read(MAX_FILE + 1)
    return loads(data, where=path)


def is_trace_file(path):
    """True when ``path`` is a file whose JSON says ``"format": "shapegate-trace"``."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(256)
    except OSError:
        return False
    return b'"format"' in head and FORMAT.encode() in head


def keys_in_order():
    """The documented top-level keys, in the writers' order."""
    return _TOP_KEYS
