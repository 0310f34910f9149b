"""Scale a recorded sweep trace up by tiling its groups: the sweep sizes torch cannot export in
reasonable time here (torch 2.14's export of the sweep model grows as about n^1.9: 101 s at
1,000 inputs, hours at 10,000).

    python3 bench/gen/tile.py SRC_DIR N OUT.json

SRC_DIR is a recorded capture folder of the sweep model (bench/gen/models.py `_Mixed`, e.g.
build/scale-traces/sweep1000); the result is a single-file trace (docs/trace-format.md) of N
inputs. The sweep model's inputs come in independent groups of four (g = i // 4) whose guards
depend on g only through the slice offset 1 + g % 8 and the bound 2000 + g. Target group g is
copied from the recorded group h with h = g (mod 8) (so the offset, and with it the guard forms
torch chose, are the same), with
  - symbols renamed (t<i> for input i; torch's names are hashes of the source),
  - sources, paths and Dim names moved from input 4h + r to 4g + r,
  - the literal 2000 + h (the bound, in guards and traced ranges) replaced by 2000 + g,
  - the example sizes recomputed as the model's (sizes.mixed_sizes).
Every tiled group is therefore exactly what torch recorded for a group with the same offset and a
bound shifted by g - h. With --check the tiler also rebuilds the recorded trace itself from its
own groups (N = its size) and reports any guard that differs: the tiling is faithful when that
reports nothing.
"""

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from sizes import mixed_sizes  # noqa: E402
from tracefile import write_trace  # noqa: E402

SRC_RE = re.compile(r"L\['xs'\]\[(\d+)\]\.size\(\)\[0\]")


def load(src):
    with open(os.path.join(src, "guards.json")) as fh:
        g = json.load(fh)
    with open(os.path.join(src, "case.json")) as fh:
        c = json.load(fh)
    se = g["shape_envs"][g["main_shape_env_index"]]
    return se, c


def groups_of(se):
    """symbol -> input index; group -> (symbols, guards, replacements)."""
    sym_input = {}
    for s, srcs in se["var_to_sources"].items():
        for src in srcs:
            m = SRC_RE.fullmatch(src)
            if m:
                sym_input.setdefault(s, int(m.group(1)))
    groups = {}
    for s, i in sym_input.items():
        groups.setdefault(i // 4, {"syms": [], "guards": [], "repl": {}})["syms"].append(s)
    sym_re = re.compile(r"\bs\d+\b")
    for gd in se["guards"]:
        syms = set(sym_re.findall(gd["expr"]))
        gs = {sym_input[s] // 4 for s in syms}
        if len(gs) != 1:
            raise SystemExit(f"tile: guard {gd['expr']} spans groups {sorted(gs)}: not a sweep trace")
        groups[gs.pop()]["guards"].append(gd)
    for s, r in se["replacements"].items():
        groups[sym_input[s] // 4]["repl"][s] = r["expr"]
    return sym_input, groups


def rename(text, names, h, g):
    text = re.sub(r"\bs\d+\b", lambda m: names[m.group(0)], text)
    return re.sub(r"(?<![\w.])%d(?![\w.])" % (2000 + h), str(2000 + g), text)


def tile(se, case, n):
    sym_input, groups = groups_of(se)
    ngroups_src = max(groups) + 1
    if ngroups_src < 8:
        raise SystemExit("tile: the source needs at least 8 groups (32 inputs)")
    full = [h for h in range(ngroups_src) if len(groups[h]["syms"]) == 4]
    sizes = mixed_sizes(n)
    symbols, guards, inputs, ds, flat, args = [], [], [], [], [], []
    spec_of = {d["path"]: d["spec"] for d in case["dynamic_shapes_flat"]}
    for g in range((n + 3) // 4):
        cands = [h for h in full if h % 8 == g % 8]
        h = cands[(g // 8) % len(cands)]
        src_group = groups[h]
        names = {}
        for s in src_group["syms"]:
            i = 4 * g + sym_input[s] - 4 * h
            names[s] = f"t{i}"
        order = sorted(src_group["syms"], key=lambda s: sym_input[s])
        for s in order:
            i = 4 * g + sym_input[s] - 4 * h
            if i >= n:
                continue
            lo, hi = se["var_to_range"][s]
            hi = 2000 + g if hi == 2000 + h else hi
            src = f"L['xs'][{i}].size()[0]"
            repl = src_group["repl"].get(s)
            symbols.append({"name": names[s], "range": [lo, hi], "hint": sizes[i], "unbacked": False,
                            "size_like": False, "replacement": rename(repl, names, h, g) if repl else None,
                            "sources": [src]})
            spec = dict(spec_of[f"['xs'][{sym_input[s]}]"])
            spec["name"] = f"d{i}"
            value = names[s] if not repl else rename(repl, names, h, g)
            inputs.append({"path": f"['xs'][{i}]", "dim": 0, "size": sizes[i], "source": src,
                           "traced_source": src, "value": value, "spec": dict(spec, kind="dim")})
            ds.append({"0": spec})
            flat.append({"path": f"['xs'][{i}]", "tensor": [sizes[i]], "dtype": "float32"})
            args.append({"tensor": [sizes[i]], "dtype": "float32"})
        if 4 * g + 3 < n:
            for gd in src_group["guards"]:
                guards.append({"origin": "shape", "expr": rename(gd["expr"], names, h, g)})
    return {
        "format": "shapegate-trace", "version": 1, "torch_version": case.get("torch_version", ""),
        "strict": False, "shape_env": True, "symbols": symbols, "guards": guards, "inputs": inputs,
        "spec": {"flat": True, "dynamic_shapes": {"xs": ds},
                 "inputs": {"arg_names": ["xs"], "args": [{"list": args}], "kwargs": {}, "flat": flat,
                            "signature": "(xs)"}},
    }


def check_faithful(se, case):
    """Tile the source onto its own size (h = g for every group) and compare guard texts up to
    the renaming; returns the differing guards."""
    sym_input, groups = groups_of(se)
    n = len(case["dynamic_shapes_flat"])
    t = tile(se, case, n)
    got = sorted(gd["expr"] for gd in t["guards"])
    names = {s: f"t{i}" for s, i in sym_input.items()}
    want = sorted(re.sub(r"\bs\d+\b", lambda m: names[m.group(0)], gd["expr"]) for gd in se["guards"])
    return [x for x in set(got) ^ set(want)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="also compare a self-tiling with the source")
    ap.add_argument("src")
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    a = ap.parse_args()
    se, case = load(a.src)
    if a.check:
        diff = check_faithful(se, case)
        print(f"tile: self-tiling of {a.src}: {len(diff)} differing guards{': ' + str(diff[:5]) if diff else ''}")
    t = tile(se, case, a.n)
    write_trace(a.out, t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
