#!/usr/bin/env python3
"""oracle.py - the independent side of the differential test (tests/test_diff.c).

Reads cases from stdin, one per line, tab-separated:

    id <TAB> sympy-form text <TAB> python-form text <TAB> s0=V;s1=V;...

and writes one answer line per case to stdout:

    id <TAB> status <TAB> value <TAB> flags <TAB> pycheck

It knows nothing of the C code: the sympy-form text is parsed with Python's own
`ast` module and evaluated by a small interpreter that uses Python's integers,
`//`, `%`, `**`, `fractions.Fraction` for exact real division and rationals,
and `math.floor/ceil/trunc`, following the semantics table of the guard language
(docs/guard-language.md):

* Evaluation is strict: every argument is evaluated, and a node is defined only
  when all of its arguments are defined and its own condition holds (division or
  modulo by zero, a negative PowByNatural exponent, no true Piecewise branch and
  whatever makes Python raise are undefined).
* Values are exact and unbounded; the C evaluator computes in signed 128 bits,
  so every intermediate value is also checked against that range.

status is one of
  value     defined, every intermediate value within [-2**127, 2**127 - 1]
  overflow  defined, but some intermediate value is outside that range
            (value is still the exact final value)
  undef     undefined (Python would raise)
  huge      the exact value is too large to compute (a power of more than
            HUGE_BITS bits): only "not a normal value" can be asserted
  error     the text could not be evaluated (unknown syntax, sort error);
            value holds the reason
value is formatted like sg_value_format(): "7", "True", "7/2" (non-integral
real), "3/1" (integral real), "int_oo", "-oo"; "-" when there is none, "big"
when it does not fit in 128 bits (flag f absent).
flags is a string of letters ("-" when empty):
  g  grey zone: some magnitude reached 2**126 (or a product of real parts that
     exact rational arithmetic in 128 bits would form reached it), so a 128-bit
     evaluator may legitimately report overflow depending on operation order
  o  some intermediate value was out of the 128-bit range (also set for undef)
  f  the final value fits in 128 bits (numerator and denominator for reals)
  h  some power was too large to compute (see huge), even if the result is undef
pycheck is "ok" when the python-form text, run through Python's real eval(),
gives the same value; "skip" when it was not run (the sympy evaluation was not
a defined value); otherwise "bad: ..." with what it gave. In the python form a
true division `/` is evaluated exactly (the `ast` is rewritten so that `a / b`
calls Fraction division), because float division would make floor/ceil and
comparisons of large values inexact; everything else is Python's own eval().
"""

import ast
import math
import sys
from fractions import Fraction

LO = -(1 << 127)
HI = (1 << 127) - 1
GREY = 1 << 126
HUGE_BITS = 1 << 16


class Undefined(Exception):
    """Python would raise here (strict guard semantics)."""


class Huge(Exception):
    """The exact value is too large to be worth computing."""


class OracleError(Exception):
    """The text is outside what the oracle understands (reported as 'error')."""


class Inf:
    """int_oo / -int_oo (integer=True) or oo / -oo."""

    def __init__(self, sign, integer):
        self.sign = sign
        self.integer = integer

    def __neg__(self):
        return Inf(-self.sign, self.integer)

    def __repr__(self):
        return ("-" if self.sign < 0 else "") + ("int_oo" if self.integer else "oo")


def is_bool(v):
    return isinstance(v, bool)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return is_int(v) or isinstance(v, (Fraction, Inf))


def is_finite_num(v):
    return is_int(v) or isinstance(v, Fraction)


def fmt(v):
    """sg_value_format() of a Python value."""
    if is_bool(v):
        return "True" if v else "False"
    if is_int(v):
        return str(v)
    if isinstance(v, Fraction):
        return "%d/%d" % (v.numerator, v.denominator)
    if isinstance(v, Inf):
        return repr(v)
    raise OracleError("unexpected value %r" % (v,))


def fits(v):
    if is_int(v):
        return LO <= v <= HI
    if isinstance(v, Fraction):
        return LO <= v.numerator <= HI and v.denominator <= HI
    return True


def magnitude(v):
    """Largest absolute integer a 128-bit evaluator holds for v."""
    if is_int(v):
        return abs(v)
    if isinstance(v, Fraction):
        return max(abs(v.numerator), v.denominator)
    return 0


def num_lt(a, b):
    """a < b over ints, Fractions and infinities."""
    if isinstance(a, Inf) or isinstance(b, Inf):
        sa = a.sign if isinstance(a, Inf) else 0
        sb = b.sign if isinstance(b, Inf) else 0
        if isinstance(a, Inf) and isinstance(b, Inf):
            return sa < sb
        if isinstance(a, Inf):
            return sa < 0
        return sb > 0
    return a < b


def num_eq(a, b):
    if isinstance(a, Inf) or isinstance(b, Inf):
        return (isinstance(a, Inf) and isinstance(b, Inf) and a.sign == b.sign)
    return a == b


class Evaluator:
    """Strict interpreter of the sympy-form ast."""

    def __init__(self, env):
        self.env = env
        self.overflow = False
        self.grey = False
        self.huge = False

    # -- bookkeeping ---------------------------------------------------------

    def note(self, v):
        """Record range facts about an intermediate value and return it."""
        if is_finite_num(v):
            if not fits(v):
                self.overflow = True
            if magnitude(v) >= GREY:
                self.grey = True
        return v

    def note_real(self, args):
        """An operation on reals: exact rational arithmetic in 128 bits forms
        products of the operands' parts (cross-multiplication)."""
        if not any(isinstance(a, Fraction) for a in args):
            return
        mags = sorted((magnitude(a) for a in args if is_finite_num(a)), reverse=True)
        if len(mags) >= 2 and mags[0] * mags[1] >= GREY:
            self.grey = True
        elif mags and mags[0] >= GREY:
            self.grey = True

    def eval_all(self, nodes):
        """Evaluate every node (strictly), then raise the most decisive failure:
        Undefined beats Huge, which beats an OracleError."""
        vals, undef, huge, err = [], False, False, None
        for n in nodes:
            try:
                vals.append(self.ev(n))
            except Undefined:
                undef = True
                vals.append(None)
            except Huge:
                huge = True
                vals.append(None)
            except OracleError as e:
                err = err or e
                vals.append(None)
        if err is not None:
            raise err
        if undef:
            raise Undefined()
        if huge:
            raise Huge()
        return vals

    # -- type helpers ----------------------------------------------------------

    @staticmethod
    def want_int(v, what):
        if not is_int(v):
            raise OracleError("%s needs an integer, got %r" % (what, v))
        return v

    @staticmethod
    def want_num(v, what):
        if not is_num(v):
            raise OracleError("%s needs a number, got %r" % (what, v))
        return v

    @staticmethod
    def want_bool(v, what):
        if not is_bool(v):
            raise OracleError("%s needs a boolean, got %r" % (what, v))
        return v

    @staticmethod
    def promote(result, args):
        """Real if any argument is real (Add, Mul, Max, Min, Where, Piecewise)."""
        if is_int(result) and any(isinstance(a, Fraction) for a in args):
            return Fraction(result)
        return result

    # -- arithmetic --------------------------------------------------------------

    def add(self, a, b):
        self.want_num(a, "+")
        self.want_num(b, "+")
        if isinstance(a, Inf) or isinstance(b, Inf):
            if isinstance(a, Inf) and isinstance(b, Inf):
                if a.sign != b.sign:
                    raise Undefined()
                return Inf(a.sign, a.integer and b.integer)
            inf = a if isinstance(a, Inf) else b
            other = b if inf is a else a
            return Inf(inf.sign, inf.integer and is_int(other))
        self.note_real([a, b])
        return self.note(a + b)

    def mul(self, a, b):
        self.want_num(a, "*")
        self.want_num(b, "*")
        if isinstance(a, Inf) or isinstance(b, Inf):
            sa = a.sign if isinstance(a, Inf) else (a > 0) - (a < 0)
            sb = b.sign if isinstance(b, Inf) else (b > 0) - (b < 0)
            if sa == 0 or sb == 0:
                raise Undefined()  # 0 * oo is nan
            integer = all(x.integer if isinstance(x, Inf) else is_int(x) for x in (a, b))
            return Inf(sa * sb, integer)
        self.note_real([a, b])
        return self.note(a * b)

    def truediv(self, a, b):
        self.want_num(a, "/")
        self.want_num(b, "/")
        if isinstance(a, Inf) or isinstance(b, Inf):
            raise OracleError("division involving an infinity")
        if b == 0:
            raise Undefined()
        self.note_real([Fraction(a), Fraction(b)])
        return self.note(Fraction(a) / Fraction(b))

    def floordiv(self, a, b):
        self.want_int(a, "//")
        self.want_int(b, "//")
        if b == 0:
            raise Undefined()
        return self.note(a // b)

    def ceildiv(self, a, b):
        self.want_int(a, "CeilDiv")
        self.want_int(b, "CeilDiv")
        if b == 0:
            raise Undefined()
        self.note(-a)
        return self.note(-((-a) // b))

    def mod(self, a, b):
        self.want_int(a, "%")
        self.want_int(b, "%")
        if b == 0:
            raise Undefined()
        return self.note(a % b)

    def power(self, base, exp, natural):
        """base ** exp; `natural` for PowByNatural (ints, exp >= 0, 0**0 = 1)."""
        if natural:
            self.want_int(base, "PowByNatural")
            self.want_int(exp, "PowByNatural")
            if exp < 0:
                raise Undefined()
        else:
            self.want_num(base, "**")
            self.want_int(exp, "** exponent")
            if isinstance(base, Inf):
                raise OracleError("power of an infinity")
        if exp < 0:
            if base == 0:
                raise Undefined()
            return self.note(Fraction(1) / self.power(base, -exp, False))
        mag = magnitude(base)
        if mag >= 2 and exp > 1 and (mag.bit_length() - 1) * exp > HUGE_BITS:
            self.overflow = True
            self.grey = True
            self.huge = True
            raise Huge()
        return self.note(base ** exp)

    def rounding(self, fn, x, what):
        self.want_num(x, what)
        if isinstance(x, Inf):
            raise OracleError("%s of an infinity" % what)
        return self.note(fn(x))

    def minmax(self, args, pick_max):
        for a in args:
            self.want_num(a, "Max/Min")
        if not args:
            raise OracleError("Max/Min of nothing")
        self.note_real(args)
        best = args[0]
        for a in args[1:]:
            if (num_lt(best, a) if pick_max else num_lt(a, best)):
                best = a
        return self.promote(best, args)

    def relation(self, op, a, b):
        if op in ("==", "!="):
            if is_bool(a) != is_bool(b):
                raise OracleError("equality of a boolean and a number")
            eq = (a == b) if is_bool(a) else num_eq(a, b)
            if not is_bool(a):
                self.note_real([a, b])
            return eq if op == "==" else not eq
        self.want_num(a, op)
        self.want_num(b, op)
        self.note_real([a, b])
        if op == "<":
            return num_lt(a, b)
        if op == "<=":
            return num_lt(a, b) or num_eq(a, b)
        if op == ">":
            return num_lt(b, a)
        if op == ">=":
            return num_lt(b, a) or num_eq(a, b)
        raise OracleError("unknown relation " + op)

    # -- the ast -------------------------------------------------------------------

    BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
              ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|"}
    CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
              ast.GtE: ">="}
    REL_FUNCS = {"Eq": "==", "Ne": "!=", "Lt": "<", "Le": "<=", "Gt": ">", "Ge": ">=",
                 "StrictLessThan": "<", "LessThan": "<=", "StrictGreaterThan": ">",
                 "GreaterThan": ">=", "Equality": "==", "Unequality": "!="}

    def ev(self, node):
        if isinstance(node, ast.Expression):
            return self.ev(node.body)
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool) or is_int(v):
                return self.note(v)
            raise OracleError("unsupported constant %r" % (v,))
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.UnaryOp):
            (v,) = self.eval_all([node.operand])
            if isinstance(node.op, ast.USub):
                self.want_num(v, "unary -")
                return -v if isinstance(v, Inf) else self.note(-v)
            if isinstance(node.op, ast.UAdd):
                return self.want_num(v, "unary +")
            if isinstance(node.op, (ast.Invert, ast.Not)):
                return not self.want_bool(v, "~")
            raise OracleError("unsupported unary operator")
        if isinstance(node, ast.BinOp):
            op = self.BINOPS.get(type(node.op))
            if op is None:
                raise OracleError("unsupported binary operator")
            a, b = self.eval_all([node.left, node.right])
            if op == "+":
                return self.add(a, b)
            if op == "-":
                self.want_num(b, "-")
                return self.add(a, -b if isinstance(b, Inf) else self.note(-b))
            if op == "*":
                return self.mul(a, b)
            if op == "/":
                return self.truediv(a, b)
            if op == "//":
                return self.floordiv(a, b)
            if op == "%":
                return self.mod(a, b)
            if op == "**":
                return self.power(a, b, False)
            self.want_bool(a, op)
            self.want_bool(b, op)
            return (a and b) if op == "&" else (a or b)
        if isinstance(node, ast.BoolOp):
            vals = self.eval_all(node.values)
            for v in vals:
                self.want_bool(v, "and/or")
            return all(vals) if isinstance(node.op, ast.And) else any(vals)
        if isinstance(node, ast.Compare):
            vals = self.eval_all([node.left] + list(node.comparators))
            result = True
            for i, op in enumerate(node.ops):
                name = self.CMPOPS.get(type(op))
                if name is None:
                    raise OracleError("unsupported comparison")
                result = self.relation(name, vals[i], vals[i + 1]) and result
            return result
        if isinstance(node, ast.Call):
            return self.call(node)
        raise OracleError("unsupported syntax %s" % type(node).__name__)

    def name(self, ident):
        if ident in self.env:
            return self.note(self.env[ident])
        if ident == "int_oo":
            return Inf(1, True)
        if ident == "oo":
            return Inf(1, False)
        if ident in ("true", "True"):
            return True
        if ident in ("false", "False"):
            return False
        raise OracleError("unknown name " + ident)

    def call(self, node):
        if not isinstance(node.func, ast.Name) or node.keywords:
            raise OracleError("unsupported call")
        f = node.func.id
        if f == "Piecewise":
            return self.piecewise(node.args)
        args = self.eval_all(node.args)
        n = len(args)

        def arity(k):
            if n != k:
                raise OracleError("%s takes %d arguments, got %d" % (f, k, n))

        if f in self.REL_FUNCS:
            arity(2)
            return self.relation(self.REL_FUNCS[f], args[0], args[1])
        if f in ("Mod", "PythonMod"):
            arity(2)
            return self.mod(args[0], args[1])
        if f in ("FloorDiv", "CleanDiv"):
            arity(2)
            return self.floordiv(args[0], args[1])
        if f == "CeilDiv":
            arity(2)
            return self.ceildiv(args[0], args[1])
        if f == "ModularIndexing":
            arity(3)
            a, b, c = (self.want_int(x, f) for x in args)
            if b == 0 or c == 0:
                raise Undefined()
            return self.note(self.note(a // b) % c)
        if f in ("IntTrueDiv", "FloatTrueDiv"):
            arity(2)
            return self.truediv(args[0], args[1])
        if f == "TruncToInt":
            arity(1)
            return self.rounding(math.trunc, args[0], f)
        if f in ("FloorToInt", "floor"):
            arity(1)
            return self.rounding(math.floor, args[0], f)
        if f in ("CeilToInt", "ceiling"):
            arity(1)
            return self.rounding(math.ceil, args[0], f)
        if f == "PowByNatural":
            arity(2)
            return self.power(args[0], args[1], True)
        if f in ("Pow", "IntPow"):
            arity(2)
            return self.power(args[0], args[1], False)
        if f in ("Max", "Min"):
            return self.minmax(args, f == "Max")
        if f == "Where":
            arity(3)
            c, p, q = args
            self.want_bool(c, f)
            if is_bool(p) != is_bool(q):
                raise OracleError("Where branches of different sorts")
            if is_bool(p):
                return p if c else q
            return self.promote(p if c else q, [p, q])
        if f == "Identity":
            arity(1)
            return args[0]
        if f in ("And", "Or"):
            for v in args:
                self.want_bool(v, f)
            return all(args) if f == "And" else any(args)
        if f == "Not":
            arity(1)
            return not self.want_bool(args[0], f)
        if f in ("Integer",):
            arity(1)
            return self.want_int(args[0], f)
        if f == "Rational":
            arity(2)
            return self.truediv(self.want_int(args[0], f), self.want_int(args[1], f))
        raise OracleError("unknown function " + f)

    def piecewise(self, pairs):
        nodes = []
        for p in pairs:
            if not isinstance(p, ast.Tuple) or len(p.elts) != 2:
                raise OracleError("Piecewise arguments must be (expr, cond) pairs")
            nodes.extend(p.elts)
        vals = self.eval_all(nodes)
        exprs, conds = vals[0::2], vals[1::2]
        for c in conds:
            self.want_bool(c, "Piecewise condition")
        if any(is_bool(e) for e in exprs) and not all(is_bool(e) for e in exprs):
            raise OracleError("Piecewise branches of different sorts")
        for e, c in zip(exprs, conds):
            if c:
                return e if is_bool(e) else self.promote(e, exprs)
        raise Undefined()


# ---- the python form, through Python's real eval() ----------------------------------


def exact_truediv(a, b):
    """`a / b` of the python form, exactly."""
    if isinstance(a, float) or isinstance(b, float):
        return a / b
    return Fraction(a) / Fraction(b)


class ExactDivision(ast.NodeTransformer):
    """Rewrite `a / b` into `__truediv__(a, b)`; everything else stays Python."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Div):
            call = ast.Call(func=ast.Name(id="__truediv__", ctx=ast.Load()),
                            args=[node.left, node.right], keywords=[])
            return ast.copy_location(call, node)
        return node


PY_BUILTINS = {"max": max, "min": min, "abs": abs, "int": int, "float": float, "bool": bool,
               "round": round, "pow": pow, "True": True, "False": False}


def py_piecewise(*pairs):
    """sympy's Piecewise for the one case the Python printer keeps in call form (no final
    True branch, so no Python ternary says it): the first true condition's value, and
    an error (Python would raise) when none holds."""
    for value, cond in pairs:
        if cond:
            return value
    raise ValueError("no Piecewise branch holds")


def python_check(text, env, expected):
    """Evaluate the python-form `text` with Python's eval(); return "ok" or "bad: ..."."""
    try:
        tree = ast.parse(text, mode="eval")
        tree = ast.fix_missing_locations(ExactDivision().visit(tree))
        code = compile(tree, "<python-form>", "eval")
        glb = {"__builtins__": PY_BUILTINS, "math": math, "int_oo": math.inf, "oo": math.inf,
               "__truediv__": exact_truediv, "Piecewise": py_piecewise}
        glb.update(env)
        got = eval(code, glb)  # noqa: S307 - the point is Python's own evaluation
    except Exception as e:  # pylint: disable=broad-except
        return "bad: raised %s: %s" % (type(e).__name__, str(e)[:80])
    if is_bool(expected):
        ok = is_bool(got) and got == expected
    elif isinstance(expected, Inf):
        ok = (isinstance(got, (float, Inf)) and not is_bool(got)
              and (got == math.inf * expected.sign if isinstance(got, float)
                   else got.sign == expected.sign))
    elif is_bool(got) or not isinstance(got, (int, float, Fraction)):
        ok = False
    elif isinstance(got, float):
        ok = math.isfinite(got) and math.isclose(got, float(expected), rel_tol=1e-12, abs_tol=1e-12)
    else:
        ok = got == expected
    return "ok" if ok else "bad: gave %r" % (got,)


# ---- driver ------------------------------------------------------------------------


def parse_assignment(text):
    env = {}
    for item in text.split(";"):
        if item:
            k, v = item.split("=", 1)
            env[k] = int(v)
    return env


def answer(line):
    fields = line.rstrip("\n").split("\t")
    if len(fields) != 4:
        return "%s\terror\tmalformed input line\t-\tskip" % (fields[0] if fields else "?")
    cid, sympy_text, python_text, assignment = fields
    env = parse_assignment(assignment)
    ev = Evaluator(env)
    status, value, pycheck = "value", "-", "skip"
    try:
        tree = ast.parse(sympy_text, mode="eval")
        v = ev.ev(tree)
        value = fmt(v) if fits(v) else "big"
        if ev.overflow:
            status = "overflow"
        pycheck = python_check(python_text, env, v)
        flags = ("f" if fits(v) else "")
    except Undefined:
        status, flags = "undef", ""
    except Huge:
        status, flags = "huge", ""
    except (OracleError, SyntaxError, RecursionError, ValueError, TypeError) as e:
        status, value, flags = "error", str(e).replace("\t", " ")[:200], ""
    if ev.grey:
        flags += "g"
    if ev.overflow:
        flags += "o"
    if ev.huge:
        flags += "h"
    return "%s\t%s\t%s\t%s\t%s" % (cid, status, value, flags or "-", pycheck)


def main():
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)  # exact values may be long; HUGE_BITS bounds them
    out = sys.stdout
    for line in sys.stdin:
        if line.strip():
            out.write(answer(line) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
