"""A structured spec (the corpus's JSON form, as ``fixes.spec`` and ``spec --json`` give it)
turned into the ``dynamic_shapes`` object torch.export takes. Public torch API only: ``Dim``,
its arithmetic for derived dims, ``Dim.AUTO`` / ``DYNAMIC`` / ``STATIC``.

``like`` is the spec being replaced: where it has a namedtuple the result has the same type, and
tensor dim keys come back as the ints torch expects.
"""

import re

_DERIVED = re.compile(r"\s*(?:(\d+)\s*\*\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*(?:([+-])\s*(\d+))?\s*\Z")


def _bound(v):
    if v is None or v in ("oo", "int_oo"):
        return None
    if v in ("-oo", "-int_oo"):
        raise ValueError("a Dim cannot have an infinite lower bound")
    return int(v)


class _Builder:
    def __init__(self):
        from torch.export import Dim
        self.Dim = Dim
        self.dims = {}

    def dim(self, name, lo, hi):
        key = (name, lo, hi)
        d = self.dims.get(name)
        if d is not None:
            if d[0] != key:
                raise ValueError(f"Dim {name!r} defined twice with different ranges")
            return d[1]
        kw = {}
        if lo is not None:
            kw["min"] = lo
        if hi is not None:
            kw["max"] = hi
        obj = self.Dim(name, **kw)
        self.dims[name] = (key, obj)
        return obj

    def leaf(self, j):
        Dim = self.Dim
        if j is None:
            return None
        if isinstance(j, bool):
            raise ValueError(f"spec leaf {j!r}")
        if isinstance(j, int):
            return j
        if isinstance(j, str):
            if j in ("AUTO", "DYNAMIC", "STATIC"):
                return getattr(Dim, j)
            raise ValueError(f"unknown spec leaf {j!r}")
        if "hint" in j:
            hint = getattr(Dim, j["hint"])
            lo, hi = j.get("min"), j.get("max")
            if lo is None and hi is None:
                return hint
            return hint(min=lo, max=None if hi in ("oo", "int_oo") else hi)
        if "derived" in j:
            root = j.get("root") or {}
            m = _DERIVED.match(j.get("expr") or j["derived"])
            if not m or m.group(2) != root.get("name"):
                raise ValueError(f"derived dim {j['derived']!r} is not A*{root.get('name')} + B")
            r = self.dim(root["name"], _bound(root.get("min", 0)), _bound(root.get("max")))
            a = int(m.group(1) or 1)
            b = int(m.group(4) or 0) * (-1 if m.group(3) == "-" else 1)
            out = r if a == 1 else a * r
            if b > 0:
                out = out + b
            elif b < 0:
                out = out - (-b)
            return out
        if "name" in j:
            return self.dim(j["name"], _bound(j.get("min", 0)), _bound(j.get("max")))
        if "static" in j:
            return int(j["static"])
        raise ValueError(f"unknown spec leaf {j!r}")

    def is_leaf(self, j):
        return j is None or isinstance(j, (int, str)) or (
            isinstance(j, dict) and any(k in j for k in ("name", "derived", "hint", "static")))

    def tensor(self, j):
        """A tensor's dims: {"0": leaf} -> {0: leaf}; a list of leaves stays a list."""
        if isinstance(j, list):
            return [self.leaf(x) for x in j]
        if isinstance(j, dict) and "__tuple__" in j:
            return tuple(self.leaf(x) for x in j["__tuple__"])
        return {int(k): self.leaf(v) for k, v in j.items()}

    def node(self, j, like):
        if like is not None and _is_tensor_spec(like):
            return self.tensor(j) if j is not None else None
        if self.is_leaf(j):
            return self.leaf(j)
        if isinstance(j, dict) and "__tuple__" in j:
            items = j["__tuple__"]
            likes = list(like) if isinstance(like, (list, tuple)) else [None] * len(items)
            vals = [self.node(x, likes[i] if i < len(likes) else None) for i, x in enumerate(items)]
            if isinstance(like, tuple) and hasattr(type(like), "_fields"):
                return type(like)(*vals)
            return tuple(vals)
        if isinstance(j, list):
            likes = list(like) if isinstance(like, (list, tuple)) else [None] * len(j)
            vals = [self.node(x, likes[i] if i < len(likes) else None) for i, x in enumerate(j)]
            if isinstance(like, tuple) and hasattr(type(like), "_fields"):
                return type(like)(*vals)
            return vals
        if isinstance(j, dict):
            if like is None and j and all(k.isdigit() for k in j) and all(self.is_leaf(v) for v in j.values()):
                return self.tensor(j)
            keys = {str(k): k for k in like} if isinstance(like, dict) else {}
            return {keys.get(k, k): self.node(v, like.get(keys[k]) if k in keys else None) for k, v in j.items()}
        raise ValueError(f"spec node of unknown form: {j!r}")


def _is_tensor_spec(like):
    """``{0: dx}``: a per-tensor spec (int keys)."""
    return isinstance(like, dict) and bool(like) and all(isinstance(k, int) for k in like)


def from_structured(spec, like=None):
    """``dynamic_shapes`` for torch from the structured form; ``like``: the spec it replaces."""
    return _Builder().node(spec, like)
