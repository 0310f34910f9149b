"""Reports as Python objects: what ``shapegate check`` and ``shapegate spec`` answer.

Built from the JSON output contract of the C library (``sg_report_to_json()``, docs/check.md
"Output"; ``shapegate spec --json``, docs/cli.md). Standard library only. Every report keeps the
JSON it was made from in ``raw`` and says which backend produced it in ``backend``.

Numbers: integers the JSON gives as decimal strings (beyond 2**53) become Python ints; an
infinite range bound (JSON null) is None.
"""

from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Dict, List, Optional, Tuple


def _int(v):
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.lstrip("-").isdigit():
        return int(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


class _Flat:
    """A dataclass of plain members, read from the JSON object of the same member names: an absent
    member is the field's default, else "" for a ``str`` field and None for the others; the
    fields named in ``_INTS`` are integers (decimal strings beyond 2**53 included)."""
    _INTS = ()

    @classmethod
    def from_json(cls, j):
        vals = {}
        for f in fields(cls):
            v = j.get(f.name, f.default if f.default is not MISSING else ("" if f.type is str else None))
            vals[f.name] = _int(v) if f.name in cls._INTS else v
        return cls(**vals)


@dataclass
class CoreItem(_Flat):
    """One member of a minimal conflicting set: a guard, a traced range, a replacement, a traced
    input shape or a spec item (``kind``), its index, its text and torch's source location."""
    kind: str
    index: Optional[int]
    text: str
    loc: Optional[str] = None
    _INTS = ("index",)


@dataclass
class Violation:
    """A refuted dim: torch's header name (``dim``), its source, the kind of failure
    (invalid_spec, specialized, equal, related, guard, range_conflict, torch), torch-worded ``message``, the value or
    dim it is forced to, a counterexample shape ``{path: [sizes]}`` and the conflicting set."""
    dim: str
    source: str
    kind: str
    message: str
    forced_value: Optional[str] = None
    related_to: Optional[str] = None
    counterexample: Optional[Dict[str, List[int]]] = None
    core: List[CoreItem] = field(default_factory=list)

    @classmethod
    def from_json(cls, j):
        cex = j.get("counterexample")
        if isinstance(cex, dict):
            cex = {k: [_int(x) for x in v] for k, v in cex.items()}
        return cls(j.get("dim", ""), j.get("source", ""), j.get("kind", ""), j.get("message", ""),
                   j.get("forced_value"), j.get("related_to"), cex,
                   [CoreItem.from_json(c) for c in j.get("core") or []])


@dataclass
class DimResult(_Flat):
    """The answer for one dynamic dim: ``status`` proved / refuted / unknown (with ``reason``)."""
    source: str
    name: Optional[str]
    status: str
    reason: Optional[str] = None


@dataclass
class Inferred:
    """What the guards imply about one symbol, whatever the spec says (docs/infer.md)."""
    symbol: str
    source: Optional[str]
    range: Tuple[Optional[int], Optional[int]]
    range_exact: bool
    constant: Optional[int] = None
    congruence: Optional[Tuple[int, int]] = None   # (modulus, residue)
    holes: List[int] = field(default_factory=list)
    holes_complete: bool = True
    equals: Optional[str] = None

    @classmethod
    def from_json(cls, sym, j):
        rng = j.get("range") or [None, None]
        cong = j.get("congruence")
        return cls(sym, j.get("source"), (_int(rng[0]), _int(rng[1])), bool(j.get("range_exact", False)),
                   _int(j.get("constant")),
                   (_int(cong["modulus"]), _int(cong["residue"])) if isinstance(cong, dict) else None,
                   [_int(h) for h in j.get("holes") or []], bool(j.get("holes_complete", True)),
                   j.get("equals"))


@dataclass
class _DerivedSpec:
    """What a fix and a generated spec both carry (their first fields): whether the derived spec
    was ``verified``, the re-check's verdict, the rounds it took, its lines (torch's "Suggested
    fixes" form), the spec (the structured form), as Python, and notes."""
    verified: bool
    recheck: Optional[str]
    rounds: int
    lines: List[str]
    spec: Any
    python: Optional[str]
    notes: List[str]

    @staticmethod
    def _members(j):
        return (bool(j.get("verified", False)), j.get("recheck"), _int(j.get("rounds") or 0),
                list(j.get("lines") or []), j.get("spec"), j.get("python"), list(j.get("notes") or []))


@dataclass
class TorchFixes:
    """torch's own suggested fixes, re-checked as refine_dynamic_shapes_from_suggested_fixes
    applies them: their ``verdict`` and, when wrong, ``why``."""
    lines: List[str]
    verdict: Optional[str]
    why: Optional[str] = None


@dataclass
class Fixes(_DerivedSpec):
    """The fix shapegate derived and re-checked (docs/fixes.md). ``verified`` means the fixed spec
    was proved; only then are ``lines`` / ``python`` offered. ``spec`` is the fixed spec in the
    structured form (``Report.fixed_dynamic_shapes()`` turns it into torch objects).
    ``untraced`` means torch stopped before tracing the model (an invalid spec): the fix is a spec
    repair that passes torch's spec checks, never ``verified`` (no guard was recorded to check it
    against); export with it and check the new trace. A trace with guards is never untraced.
    ``repaired`` means the fix rebuilds a spec torch refused (its structure, Dims whose examples
    disagree), as the notes say: the Python is the fix (a split Dim has no line)."""
    torch_message: Optional[str] = None
    torch: Optional[TorchFixes] = None
    untraced: bool = False
    repaired: bool = False

    @classmethod
    def from_json(cls, j):
        t = j.get("torch")
        return cls(*cls._members(j), j.get("torch_message"),
                   TorchFixes(list(t.get("lines") or []), t.get("verdict"), t.get("why")) if isinstance(t, dict) else None,
                   bool(j.get("untraced", False)), bool(j.get("repaired", False)))


@dataclass
class Stats:
    queries: int = 0
    decided_cheaply: int = 0
    seconds: float = 0.0


class _FixedSpec:
    def fixed_dynamic_shapes(self, like=None):
        """The fixed spec as torch objects (``Dim``, derived dims, hints), following the
        containers of ``like`` (the spec it replaces: keeps namedtuple types). Needs torch.
        None when no verified fix exists."""
        spec = self._fixed_spec_json()
        if spec is None:
            return None
        from ._pyspec import from_structured
        return from_structured(spec, like=like)


@dataclass
class CheckReport(_FixedSpec):
    """The answer of ``shapegate check`` for one trace."""
    verdict: str                      # ok, violations, unknown, invalid_spec, torch_failed
    violations: List[Violation]
    dims: List[DimResult]
    inferred: Dict[str, Inferred]
    suggested_fixes: List[str]
    fixes: Optional[Fixes]
    stats: Stats
    backend: str = ""
    input: str = ""
    exit_code: Optional[int] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, j, backend="", input="", exit_code=None):
        st = j.get("stats") or {}
        return cls(
            verdict=j.get("verdict", ""),
            violations=[Violation.from_json(v) for v in j.get("violations") or []],
            dims=[DimResult.from_json(d) for d in j.get("dims") or []],
            inferred={k: Inferred.from_json(k, v) for k, v in (j.get("inferred") or {}).items()},
            suggested_fixes=list(j.get("suggested_fixes") or []),
            fixes=Fixes.from_json(j["fixes"]) if isinstance(j.get("fixes"), dict) else None,
            stats=Stats(_int(st.get("queries", 0)), _int(st.get("decided_cheaply", 0)), float(st.get("seconds", 0.0))),
            backend=backend, input=input, exit_code=exit_code, raw=j)

    @property
    def ok(self):
        return self.verdict == "ok"

    @property
    def refuted(self):
        return [d for d in self.dims if d.status == "refuted"]

    @property
    def unknown(self):
        return [d for d in self.dims if d.status == "unknown"]

    @property
    def verified_fix(self):
        """The verified fix lines (torch's "Suggested fixes" form), or [] when there is none."""
        return list(self.fixes.lines) if self.fixes and self.fixes.verified else []

    @property
    def spec_repair(self):
        """The unverified spec repair (Python to paste) when torch stopped before tracing, else None:
        it passes torch's spec checks, but nothing recorded could verify it (``fixes.untraced``)."""
        return self.fixes.python if self.fixes and self.fixes.untraced and not self.fixes.verified else None

    def _fixed_spec_json(self):
        return self.fixes.spec if self.fixes and self.fixes.verified else None

    def text(self):
        """A short human-readable account (the CLI's own text report is ``shapegate check``)."""
        out = [f"shapegate check ({self.backend}): {self.verdict}"]
        for d in self.dims:
            name = f"{d.name} = {d.source}" if d.name else d.source
            out.append(f"  {name}: {d.status}" + (f" ({d.reason})" if d.reason else ""))
        for v in self.violations:
            out.append(f"- {v.message}")
            if v.counterexample:
                shown = ", ".join(f"{p}: {s}" for p, s in v.counterexample.items())
                out.append(f"    counterexample: {shown}")
            for c in v.core:
                if c.kind == "guard":
                    out.append(f"    guard: {c.text}" + (f"   [{_short_loc(c.loc)}]" if c.loc else ""))
        if self.verified_fix:
            out.append(f"verified fix (re-checked: {self.fixes.recheck}, {self.fixes.rounds} round"
                       f"{'s' if self.fixes.rounds != 1 else ''}):")
            out += [f"  {ln}" for ln in self.fixes.lines]
            if self.fixes.python:
                out.append("as Python:")
                out += [f"  {ln}" if ln else "" for ln in self.fixes.python.rstrip("\n").split("\n")]
        elif self.fixes is not None and not self.fixes.verified:
            out.append("no verified fix")
        if self.fixes is not None:
            out += [f"  # {n}" for n in self.fixes.notes]
        return "\n".join(out)


def _short_loc(loc):
    """The user line of a location (``code  # file:line in f``), else its first line."""
    return loc.split("\n")[0] if loc else ""


@dataclass
class SpecReport(_DerivedSpec, _FixedSpec):
    """The answer of ``shapegate spec``: the widest valid dynamic_shapes, when ``verified``.
    ``untraced``: as ``Fixes.untraced`` (a spec from no recorded guard is never verified)."""
    untraced: bool = False
    backend: str = ""
    input: str = ""
    exit_code: Optional[int] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, j, backend="", input="", exit_code=None):
        return cls(*cls._members(j), bool(j.get("untraced", False)), backend=backend, input=input,
                   exit_code=exit_code, raw=j)

    def _fixed_spec_json(self):
        return self.spec if self.verified else None

    def text(self):
        if not self.verified:
            return "\n".join([f"shapegate spec ({self.backend}): no verified spec"] + [f"# {n}" for n in self.notes])
        return (self.python or "").rstrip("\n")


class CapturedCall:
    """One recorded export call: ``index`` (1-based), ``function`` (``"export"``, ...),
    ``trace`` (the v1 dict), ``path`` (None when not written), ``error`` (the exception torch
    raised, or None) and ``result`` (the ExportedProgram, or None)."""

    def __init__(self, index, function, trace, path, error, result):
        self.index = index
        self.function = function
        self.trace = trace
        self.path = path
        self.error = error
        self.result = result

    @property
    def ok(self):
        return self.error is None

    def __repr__(self):
        what = "ok" if self.ok else type(self.error).__name__
        return f"<CapturedCall {self.index}-{self.function} {what} {self.path or '(not written)'}>"
