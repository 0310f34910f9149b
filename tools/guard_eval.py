"""Exact evaluation of torch's recorded shape guards on concrete shapes (Python integer semantics).

Pure Python (no torch, no sympy): it reads the `tree` form of guards.json expressions
(tests/corpus/README.md: nested lists `[ClassName, arg...]`) and evaluates them with Python ints
and Fractions: `FloorDiv` and `PythonMod`/`Mod` are Python's `//` and `%`, `CleanDiv` is exact
division, comparisons are exact, a division or modulo by zero makes the guard undefined (counted
as failed, as torch would raise). Used by tools/expect_12.py (brute force over a spec's domain) and
tools/catalog.py (is shapegate's counterexample really a failing shape?).

Model of a trace (Trace.from_capture):
  - inputs: one row per tensor dim of case.json `dynamic_shapes_flat` (path, dim, example size,
    spec leaf), and its traced expression from the last produce_guards call (`placeholders`, in
    the same flat order as case.json `inputs.flat`), e.g. "s77", "4", "s17 + s77";
  - ranges: each backed symbol's traced range (var_to_range: the spec's bounds, narrowed by what
    torch inferred), checked for the symbols the shape determines;
  - constraints: every guard of the main ShapeEnv and every deferred runtime assert, over backed
    symbols only (a constraint naming an unbacked symbol u0/zuf0 is not a condition on shapes:
    torch checks it at run time on data) plus the binding of each input dim to its traced
    expression (`x.size()[0] == s77`, or `== 4` when torch specialised it).
A shape (sizes of every tensor dim) passes when some value of each backed symbol makes every
binding and every constraint true; symbols are determined by the dims they size directly.
"""

import json
import os
import re
from fractions import Fraction


class NotEvaluable(Exception):
    """An expression node this evaluator does not model, or a symbol without a value."""


class Undefined(Exception):
    """The expression raises in Python (division or modulo by zero)."""


def _int(v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, Fraction):
        if v.denominator != 1:
            raise NotEvaluable(f"non-integer {v} where an integer is needed")
        return v.numerator
    return v


INF = float("inf")


def evaluate(t, env):
    """Value of tree `t` (int, Fraction, bool or +-inf) under env {symbol: int}."""
    op = t[0]
    a = t[1:]
    if op == "Integer":
        return a[0]
    if op == "Rational":
        return Fraction(a[0], a[1])
    if op == "Symbol":
        if a[0] not in env:
            raise NotEvaluable(f"no value for symbol {a[0]}")
        return env[a[0]]
    if op in ("BooleanTrue", "true"):
        return True
    if op in ("BooleanFalse", "false"):
        return False
    if op in ("IntInfinity", "Infinity"):
        return INF
    if op in ("NegativeIntInfinity", "NegativeInfinity"):
        return -INF
    if op == "And":
        return all(bool(evaluate(x, env)) for x in a)
    if op == "Or":
        return any(bool(evaluate(x, env)) for x in a)
    if op == "Not":
        return not evaluate(a[0], env)
    v = [evaluate(x, env) for x in a]
    if op == "Add":
        s = 0
        for x in v:
            s = s + x
        return s
    if op == "Mul":
        p = 1
        for x in v:
            p = p * x
        return p
    if op == "Pow":
        b, e = v
        if isinstance(e, Fraction) and e.denominator != 1:
            raise NotEvaluable("fractional power")
        e = _int(e)
        if e < 0:
            if b == 0:
                raise Undefined("0 ** negative")
            return Fraction(1, 1) / (Fraction(b) ** -e)
        return b ** e
    if op in ("Equality",):
        return v[0] == v[1]
    if op in ("Unequality",):
        return v[0] != v[1]
    if op == "StrictLessThan":
        return v[0] < v[1]
    if op == "LessThan":
        return v[0] <= v[1]
    if op == "StrictGreaterThan":
        return v[0] > v[1]
    if op == "GreaterThan":
        return v[0] >= v[1]
    if op in ("FloorDiv",):
        x, y = _int(v[0]), _int(v[1])
        if y == 0:
            raise Undefined("// 0")
        return x // y
    if op in ("Mod", "PythonMod"):
        x, y = _int(v[0]), _int(v[1])
        if y == 0:
            raise Undefined("% 0")
        return x % y
    if op == "CleanDiv":
        x, y = _int(v[0]), _int(v[1])
        if y == 0:
            raise Undefined("/ 0")
        if x % y:
            raise NotEvaluable("CleanDiv of non-divisible values")
        return x // y
    if op in ("IntTrueDiv", "FloatTrueDiv"):
        if v[1] == 0:
            raise Undefined("/ 0")
        return Fraction(v[0]) / Fraction(v[1])
    if op == "Max":
        return max(v)
    if op == "Min":
        return min(v)
    if op == "Abs":
        return abs(v[0])
    if op == "FloorToInt":
        return int(Fraction(v[0]).__floor__())
    if op == "CeilToInt":
        return int(Fraction(v[0]).__ceil__())
    if op == "TruncToInt":
        return int(Fraction(v[0]))
    if op == "ToFloat":
        return v[0]
    raise NotEvaluable(f"operator {op}")


def symbols_of(t, out=None):
    out = set() if out is None else out
    if t[0] == "Symbol":
        out.add(t[1])
    else:
        for x in t[1:]:
            if isinstance(x, list):
                symbols_of(x, out)
    return out


def is_unbacked(sym):
    return bool(re.match(r"^(u|zuf|zub|ub)\d+$", sym))


# --------------------------------------------------------------------------- traced expressions
_TOK = re.compile(r"\s*(\d+|[A-Za-z_]\w*|\*\*|//|[-+*/()%,])")


def parse_expr(text):
    """A placeholder's size expression as torch prints it ("s77", "2*s77", "s17 + s77", "4",
    "((s77//2))", "Mod(s77, 4)") -> tree."""
    toks = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOK.match(text, pos)
        if not m:
            raise NotEvaluable(f"cannot parse {text!r}")
        toks.append(m.group(1))
        pos = m.end()
    i = 0

    def peek():
        return toks[i] if i < len(toks) else None

    def take():
        nonlocal i
        i += 1
        return toks[i - 1]

    def expr():
        t = term()
        while peek() in ("+", "-"):
            o = take()
            u = term()
            t = ["Add", t, u if o == "+" else ["Mul", ["Integer", -1], u]]
        return t

    def term():
        t = unary()
        while peek() in ("*", "//", "%", "/"):
            o = take()
            u = unary()
            t = {"*": ["Mul", t, u], "//": ["FloorDiv", t, u], "%": ["PythonMod", t, u],
                 "/": ["IntTrueDiv", t, u]}[o]
        return t

    def unary():
        if peek() == "-":
            take()
            return ["Mul", ["Integer", -1], unary()]
        return power()

    def power():
        b = atom()
        if peek() == "**":
            take()
            return ["Pow", b, unary()]
        return b

    def atom():
        tok = take()
        if tok == "(":
            t = expr()
            take()
            return t
        if tok.isdigit():
            return ["Integer", int(tok)]
        if peek() == "(":
            take()
            args = [expr()]
            while peek() == ",":
                take()
                args.append(expr())
            take()
            return [{"Mod": "PythonMod", "FloorDiv": "FloorDiv", "Max": "Max", "Min": "Min"}.get(tok, tok)] + args
        return ["Symbol", tok]

    return expr()


# --------------------------------------------------------------------------- the trace model
def spec_rows(case, tensors):
    """case.json dynamic_shapes_flat rows grouped per tensor input, in the order of `tensors` (the
    tensor leaves of inputs.flat).  The rows follow the same pytree order, one per dim; their own
    paths are the spec's (positional specs print "[0]", dataclass fields lose their names), so
    they are matched by order and checked against the example shapes."""
    rows = [r for r in case.get("dynamic_shapes_flat") or [] if r.get("dim") is not None]
    groups, i = [], 0
    for lf in tensors:
        n = len(lf["tensor"])
        gr = rows[i:i + n]
        i += n
        if [r["dim"] for r in gr] != list(range(n)) or [r["size"] for r in gr] != list(lf["tensor"]):
            break
        groups.append(gr)
    if len(groups) == len(tensors) and i == len(rows):
        return groups
    # fall back on the paths (a spec of None over a whole container has no rows for its tensors)
    by_path = {}
    for r in rows:
        by_path.setdefault(r["path"], []).append(r)
    out = []
    for lf in tensors:
        out.append(by_path.get(lf["path"]) or [{"path": lf["path"], "dim": i, "size": n, "spec": None}
                                               for i, n in enumerate(lf["tensor"])])
    return out




def _evaluate_or_why(tree, env, what):
    """(value, None), or (None, (verdict, reason)) when `tree` cannot be evaluated: not
    evaluable is no verdict (None), undefined (a division by zero) is False."""
    try:
        return evaluate(tree, env), None
    except NotEvaluable as e:
        return None, (None, f"{what}: {e}")
    except Undefined as e:
        return None, (False, f"{what} undefined: {e}")

class Trace:
    def __init__(self):
        self.inputs = []        # [{path, dim, size, spec, traced (tree), traced_text}]
        self.constraints = []   # [{text, tree, kind}]
        self.skipped = []       # [(text, why)]
        self.reached = False    # produce_guards ran (the ShapeEnv is complete enough to judge)
        self.replacements = {}  # symbol -> {"expr", "tree"}: torch replaced it by that expression
        self.ranges = {}        # backed symbol -> (lo, hi): its traced range (var_to_range; None = unbounded)

    @classmethod
    def from_capture(cls, folder):
        self = cls()
        with open(os.path.join(folder, "case.json"), encoding="utf-8") as fh:
            case = json.load(fh)
        with open(os.path.join(folder, "guards.json"), encoding="utf-8") as fh:
            g = json.load(fh)
        self.case = case
        leaves = (case.get("inputs") or {}).get("flat") or []
        tensors = [lf for lf in leaves if "tensor" in lf]
        main = g.get("main_shape_env_index")
        se = g["shape_envs"][main] if main is not None and g.get("shape_envs") else None
        pgs = [c for c in g.get("produce_guards_calls") or [] if c.get("shape_env_index") == main] \
            or (g.get("produce_guards_calls") or [])
        shapes = None
        if pgs:
            # produce_guards sees the tensor inputs only, in pytree order
            phs = [p.get("tensor") for p in pgs[-1].get("placeholders") or [] if "tensor" in p]
            if len(phs) == len(tensors):
                shapes = phs
            self.reached = True
        for k, (lf, rows) in enumerate(zip(tensors, spec_rows(case, tensors))):
            for row in rows:
                ent = dict(row)
                ent["path"] = lf["path"]          # canonical: the pytree path of the input leaf
                ent["spec_path"] = row["path"]    # as dynamic_shapes_flat prints it
                traced_text = None
                if shapes is not None and shapes[k] is not None and row["dim"] < len(shapes[k]):
                    traced_text = shapes[k][row["dim"]]
                ent["traced_text"] = traced_text
                ent["traced"] = parse_expr(traced_text) if traced_text is not None else None
                self.inputs.append(ent)
        if se is not None:
            for sym, rep in (se.get("replacements") or {}).items():
                if not is_unbacked(sym) and not any(is_unbacked(x) for x in symbols_of(rep["tree"])):
                    self.replacements[sym] = rep
            for sym, (lo, hi) in (se.get("var_to_range") or {}).items():
                if not is_unbacked(sym):
                    self.ranges[sym] = (None if lo in ("-oo", None) else int(lo), None if hi in ("oo", None) else int(hi))
            for gd in se.get("guards") or []:
                self._add(gd["expr"], gd["tree"], "guard")
            for key, lst in (se.get("deferred_runtime_asserts") or {}).items():
                for ra in lst:
                    self._add(ra["expr"], ra["tree"], "runtime_assert")
        return self

    def _add(self, text, tree, kind):
        syms = symbols_of(tree)
        unb = sorted(s for s in syms if is_unbacked(s))
        if unb:
            self.skipped.append((text, f"names unbacked {', '.join(unb)}"))
            return
        self.constraints.append({"text": text, "tree": tree, "kind": kind})

    # sizes: {(path, dim): int} for every tensor dim
    def check(self, sizes):
        """(ok, why): does the shape pass every binding and constraint?"""
        env = {}
        pending = []
        for ent in self.inputs:
            t = ent["traced"]
            if t is None:
                continue
            v = sizes[(ent["path"], ent["dim"])]
            if t[0] == "Symbol":
                s = t[1]
                if s in env and env[s] != v:
                    return False, f"{ent['path']}.size()[{ent['dim']}] = {v} but {s} = {env[s]} (traced equal)"
                env[s] = v
            else:
                pending.append((ent, v))
        # replaced symbols (s77 -> s17) take the value of their replacement
        for _ in range(len(self.replacements) + 1):
            progress = False
            for sym, rep in self.replacements.items():
                try:
                    w = evaluate(rep["tree"], env)
                except (NotEvaluable, Undefined):
                    # s77 -> 2*s96 with s77 known and s96 a phantom root no input sizes: s96 is
                    # (s77 - b) / a when the replacement is affine in it
                    unknown = [t for t in symbols_of(rep["tree"]) if t not in env]
                    if sym not in env or len(unknown) != 1:
                        continue
                    t = unknown[0]
                    try:
                        b = evaluate(rep["tree"], dict(env, **{t: 0}))
                        a = evaluate(rep["tree"], dict(env, **{t: 1})) - b
                        linear = evaluate(rep["tree"], dict(env, **{t: 2})) == 2 * a + b
                    except (NotEvaluable, Undefined):
                        continue
                    if not linear or a == 0:
                        continue
                    if (env[sym] - b) % a != 0:
                        return False, f"{sym} = {env[sym]} is not of the form {rep['expr']}"
                    env[t] = (env[sym] - b) // a
                    progress = True
                    continue
                if sym in env:
                    if env[sym] != w:
                        return False, f"{sym} = {env[sym]} but torch replaced it by {rep['expr']} = {w}"
                    continue
                env[sym] = w
                progress = True
            if not progress:
                break
        for ent, v in pending:
            w, failed = _evaluate_or_why(ent["traced"], env, f"binding of {ent['path']}.size()[{ent['dim']}]")
            if failed:
                return failed
            if w != v:
                return False, f"{ent['path']}.size()[{ent['dim']}] = {v} but torch traced it as {ent['traced_text']} = {w}"
        for sym, (lo, hi) in self.ranges.items():
            if sym not in env:
                continue   # a symbol no input dim sizes: nothing the shape decides
            v = env[sym]
            if (lo is not None and v < lo) or (hi is not None and v > hi):
                return False, f"{sym} = {v} outside its traced range [{lo}, {'oo' if hi is None else hi}]"
        for c in self.constraints:
            ok, failed = _evaluate_or_why(c["tree"], env, f"{c['kind']} {c['text']}")
            if failed:
                return failed
            if not ok:
                return False, f"{c['kind']} {c['text']} is false"
        return True, None
