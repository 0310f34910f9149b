"""A synthetic single-file trace (docs/trace-format.md, "shapegate-trace" version 1) of a given
number of symbols with ten guards each: the "10,000 guards / 1,000 symbols" target of issue 14.

    python3 bench/gen/synth.py [--symbols N] [--violations K] [--linear] OUT.json

Plain Python 3, no torch. The symbols come in groups of four list inputs xs[4g .. 4g+3]:

    a = Dim('r<g>', min=2, max=M_g)        M_g = 512 + g
    b = the same Dim r<g>                  (so b == a)
    c = 2*r<g> + 1                         (a derived Dim)
    d = Dim('t<g>', min=2, max=256)

each traced as its own symbol (no replacements: the equalities are guards), with 40 guards per
group that hold for every shape of that spec: bounds, Ne, Eq between symbols, affine relations,
Mod / FloorDiv by constants and by symbols, Max / Min / Or, and products (5 of the 40 are
non-linear; --linear replaces them with linear guards of the same symbols). So with --violations 0 (the default) every dim must be proved. --violations K
widens the spec of every K-th group's root to M_g + 100 beyond its guard `a <= M_g` and traced
range, so those groups are refuted and fixed (r<g> max narrowed back to M_g).
"""

import argparse
import sys

from tracefile import write_trace


def group_guards(a, b, c, d, M, linear=False):
    """The 40 guards of one group, sympy str() form; all hold when b = a, c = 2a + 1,
    2 <= a <= M, 2 <= d <= 256."""
    nonlinear = {f"{a}*{d} >= 4": f"2*{a} + 2*{d} >= 8", f"{a}*{d} <= {256 * M}": f"{a} + {d} <= {M + 256}",
                 f"{d}**2 >= 4": f"2*{d} >= 4", f"(({c}//{a})) >= 2": f"-2*{a} + {c} >= 1",
                 f"Eq(Mod({c}, {a}), 1)": f"Eq(-2*{a} + {c}, 1)"}
    g = _group_guards(a, b, c, d, M)
    return [nonlinear.get(e, e) for e in g] if linear else g


def _group_guards(a, b, c, d, M):
    return [
        f"{a} >= 2", f"{a} <= {M}", f"Ne({a}, 1)", f"Eq({a}, {b})", f"Eq(2*{a} + 1, {c})",
        f"{b} >= 2", f"{b} <= {M}", f"Ne({b}, 0)", f"Eq(Mod({c}, 2), 1)", f"(({c}//2)) >= 2",
        f"Eq((({c}//2)), {a})", f"{c} <= {2 * M + 1}", f"{c} >= 5", f"Ne({c}, 3)", f"{d} >= 2",
        f"{d} <= 256", f"Ne({d}, 1)", f"{a} + {d} >= 4", f"-{b} + {c} >= 3", f"Max({a}, {d}) >= 2",
        f"Min({a}, {d}) <= 256", f"({d} <= 256) | ({a} <= 3)", f"Eq(Mod(4*{d}, 4), 0)",
        f"8*(({d}//8)) <= {d}", f"{a}*{d} >= 4", f"{a}*{d} <= {256 * M}", f"((({a} + {d})//2)) >= 2",
        f"Ne({a}, {c})", f"Ne(2*{b}, {c})", f"{a} <= {c}", f"Eq(Mod(-{a} - {b} + {c}, 2), 1)",
        f"3*{a} + {d} >= 8", f"{b} + 1 <= {c}", f"Ne({d}, 257)", f"{d}**2 >= 4",
        f"Max({b}, {c}) <= {2 * M + 1}", f"(({c}//{a})) >= 2", f"Eq(Mod({c}, {a}), 1)",
        f"{a} + {b} + {c} + {d} >= 11", f"Ne({a} + {d}, 3)",
    ]


def make(nsyms, violations, linear=False):
    groups = (nsyms + 3) // 4
    symbols, guards, inputs, ds, flat, args = [], [], [], [], [], []
    for g in range(groups):
        M = 512 + g
        wide = violations and g % violations == 0
        root = {"name": f"r{g}", "min": 2, "max": M + 100 if wide else M}
        ha, hd = 4 + g % 50, 8 + g % 64
        derived = f"2*r{g} + 1"
        rows = [  # (symbol range, hint, spec leaf of dynamic_shapes, inputs[].spec)
            ([2, M], ha, dict(root), dict(root, kind="dim")),
            ([2, M], ha, dict(root), dict(root, kind="dim")),
            ([5, 2 * M + 1], 2 * ha + 1, {"derived": derived, "expr": derived, "root": dict(root),
                                          "min": 5, "max": 2 * root["max"] + 1},
             {"kind": "derived", "name": derived, "expr": derived, "root": dict(root), "min": 5,
              "max": 2 * root["max"] + 1}),
            ([2, 256], hd, {"name": f"t{g}", "min": 2, "max": 256}, {"kind": "dim", "name": f"t{g}", "min": 2, "max": 256}),
        ]
        names = [f"s{4 * g + k}" for k in range(4)]
        for k, (rng, hint, leaf, spec) in enumerate(rows):
            i = 4 * g + k
            if i >= nsyms:
                break
            src = f"L['xs'][{i}].size()[0]"
            symbols.append({"name": names[k], "range": rng, "hint": hint, "unbacked": False, "size_like": False,
                            "replacement": None, "sources": [src]})
            inputs.append({"path": f"['xs'][{i}]", "dim": 0, "size": hint, "source": src, "traced_source": src,
                           "value": names[k], "spec": spec})
            ds.append({"0": leaf})
            flat.append({"path": f"['xs'][{i}]", "tensor": [hint], "dtype": "float32"})
            args.append({"tensor": [hint], "dtype": "float32"})
        if 4 * g + 3 < nsyms:
            for e in group_guards(*names, M, linear):
                guards.append({"origin": "shape", "expr": e})
    return {
        "format": "shapegate-trace", "version": 1, "torch_version": "synthetic", "strict": False,
        "shape_env": True, "symbols": symbols, "guards": guards, "inputs": inputs,
        "spec": {"flat": True, "dynamic_shapes": {"xs": ds},
                 "inputs": {"arg_names": ["xs"], "args": [{"list": args}], "kwargs": {}, "flat": flat,
                            "signature": "(xs)"}},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--symbols", type=int, default=1000)
    ap.add_argument("--violations", type=int, default=0, help="widen every K-th group's spec (0: none)")
    ap.add_argument("--linear", action="store_true", help="no non-linear guards")
    ap.add_argument("out")
    a = ap.parse_args()
    if a.symbols < 4 or a.symbols % 4:
        print("synth.py: --symbols must be a positive multiple of 4", file=sys.stderr)
        return 2
    t = make(a.symbols, a.violations, a.linear)
    write_trace(a.out, t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
