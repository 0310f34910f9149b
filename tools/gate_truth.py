#!/usr/bin/env python3
"""gate_truth.py: brute-force ground truth for the gate fixture pairs, in real torch.

    /work/shared/refenv/run.sh /root/refenv/forky  python3 tools/gate_truth.py --torch 2.14 [PAIR...]
    /work/shared/refenv/run.sh /root/refenv/trixie python3 tools/gate_truth.py --torch 2.6  [PAIR...]

For every pair directory tests/data/gate/<pair>/ (old.pt2, new.pt2, pair.json) this torch can
load — `--torch 2.14`: the `-2.14` pairs and the `-2.6to2.14` pairs (torch 2.14 reads both
layouts); `--torch 2.6`: the `-2.6` pairs — both archives are loaded with torch.export.load and
`ep.module()` is called on a grid of input shapes, recording which version accepts each one:

- the shapes come from both archives' own symbols (gatelib.Archive.grid: the base point, each
  symbol over its declared bounds, bound +- 1, 0..9, multiples and non-multiples, large sizes
  when unbounded, corners, pairs of symbols), so they keep each version's traced relations;
- then every candidate that one version declares is perturbed by +-1 on each dynamic dim,
  one dim at a time (this breaks relations: x.size(0) == y.size(0), y = 2*x);
- every call uses OLD's input structure (what OLD's callers send), with the same tensors for
  both versions; a NEW with another signature therefore rejects them.

Writes tests/data/gate/<pair>/truth.json: the inputs (paths, symbolic shapes of each version),
per row the shapes, "ok" or an error id for OLD and NEW, whether each version's declared
ranges admit the shapes; the error table (type, kind, first line of the message); counts
(OLD accepts / NEW rejects = regression witnesses, the reverse = widening witnesses) and the
outcome they show. The pair's `witness_example` is run too. Under `--torch 2.6`, the
cross-version pairs' truth.json also gets OLD re-run in torch 2.6, the torch that wrote it
(column `old_2.6`). This is the oracle a `shapegate gate` witness is held to: OLD accepts, NEW rejects.
"""
import argparse
import hashlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gatelib  # noqa: E402
import torch  # noqa: E402

GATE = os.path.join("tests", "data", "gate")
MAX_NUMEL = 1 << 21          # input elements per call; larger shapes are not tried (pair.json
                             # "truth": {"max_numel": N} lowers it: deep48's big calls take seconds)
MAX_ROWS = 4000
DENSE_UPTO = 600             # every size 0 .. max + 2 of a symbol whose declared max is <= this


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Errors:
    def __init__(self):
        self.table, self.index = {}, {}

    def id(self, res):
        if res["ok"]:
            return "ok"
        key = (res["type"], res["kind"], res["message"])
        if key not in self.index:
            eid = "E%d" % len(self.index)
            self.index[key] = eid
            self.table[eid] = {"type": res["type"], "kind": res["kind"], "message": res["message"]}
        return self.index[key]


def candidates(old, new, max_numel):
    """Shapes in OLD's leaf order: both grids, then +-1 perturbations of declared ones."""
    paths = [l.path for l in old.leaves]
    new_by_path = {l.path: l for l in new.leaves}
    out, seen = [], set()
    skipped = [0]

    def add(shapes):
        if shapes is None:
            return
        key = json.dumps(shapes)
        if key in seen:
            return
        seen.add(key)
        if sum(_numel(s) for s in shapes if s is not None) <= max_numel:
            out.append(shapes)
        else:
            skipped[0] += 1

    for a in old.grid(dense_upto=DENSE_UPTO):
        add(old.shapes(a))
    same_paths = set(new_by_path) == set(paths)
    if same_paths:
        for a in new.grid(dense_upto=DENSE_UPTO):
            sh = new.shapes(a)
            if sh is not None:
                by = {l.path: s for l, s in zip(new.leaves, sh)}
                add([by[p] for p in paths])
    dyn = []
    for i, leaf in enumerate(old.leaves):
        if not leaf.tensor:
            continue
        other = new_by_path.get(leaf.path)
        for d in range(len(leaf.dims)):
            sym_old = not isinstance(leaf.dims[d], int)
            sym_new = other is not None and other.tensor and d < len(other.dims) and not isinstance(other.dims[d], int)
            if sym_old or sym_new:
                dyn.append((i, d))
    base = list(out)
    for shapes in base:
        if not (old.declared(shapes) or (same_paths and new.declared(to_new(new, old, shapes)))):
            continue
        for i, d in dyn:
            for delta in (-1, 1):
                s = [list(x) if x is not None else None for x in shapes]
                s[i][d] += delta
                if s[i][d] >= 0:
                    add(s)
    return out[:MAX_ROWS], dyn, max(0, len(out) - MAX_ROWS), skipped[0]


def _numel(shape):
    n = 1
    for v in shape:
        n *= v
    return n


def to_new(new, old, shapes):
    by = {l.path: s for l, s in zip(old.leaves, shapes)}
    try:
        return new.shapes_by_path(by)
    except KeyError:
        return None


def outcome(c):
    if c["old_ok_new_rejects"] and c["new_ok_old_rejects"]:
        return "regression+widening"
    if c["old_ok_new_rejects"]:
        return "regression"
    if c["new_ok_old_rejects"]:
        return "widening"
    return "equal"


def tally(rows):
    c = dict(tried=0, old_ok=0, new_ok=0, old_ok_new_rejects=0, new_ok_old_rejects=0, both_ok=0, neither=0)
    for r in rows:
        o, n = r["old"] == "ok", r["new"] == "ok"
        c["tried"] += 1
        c["old_ok"] += o
        c["new_ok"] += n
        key = "both_ok" if o and n else "old_ok_new_rejects" if o else "new_ok_old_rejects" if n else "neither"
        c[key] += 1
    return c


def agrees(expected, also, observed, rows, errors):
    if expected == "signature":
        # the structure changed, or a constant input's value (torch checks it on every call)
        return all(r["new"] != "ok" and errors[r["new"]]["kind"] in ("signature", "constant")
                   for r in rows if r["old"] == "ok")
    want = {expected} | set(also)
    got = set(observed.split("+")) if observed != "equal" else {"equal"}
    return want == got


def truth_for(d):
    pj = os.path.join(d, "pair.json")
    with open(pj) as f:
        pair = json.load(f)
    t0 = time.time()
    old = gatelib.Archive(os.path.join(d, "old.pt2"))
    new = gatelib.Archive(os.path.join(d, "new.pt2"))
    max_numel = pair.get("truth", {}).get("max_numel", MAX_NUMEL)
    shapes_list, dyn, truncated, skipped = candidates(old, new, max_numel)
    errors = Errors()
    rows = []
    for shapes in shapes_list:
        args, kwargs = old.inputs(shapes)
        ro = gatelib.run(old.module, args, kwargs)
        rn = gatelib.run(new.module, args, kwargs)
        nshapes = to_new(new, old, shapes)
        rows.append({"shapes": shapes, "old": errors.id(ro), "new": errors.id(rn),
                     "old_declared": old.declared(shapes),
                     "new_declared": new.declared(nshapes) if nshapes is not None else None})
    ge2 = [r for r in rows if all(r["shapes"][i][dd] >= 2 for i, dd in dyn)]
    counts = {"all": tally(rows), "ge2": tally(ge2),
              "old_declared": tally([r for r in ge2 if r["old_declared"]])}
    # The outcome is read on sizes >= 2: torch specialises 0 and 1, and a spec's range says
    # nothing about them; `all` shows what the loaded modules do on 0 and 1 as well.
    observed = outcome(counts["ge2"])
    if pair["expected"] == "signature" and counts["all"]["old_ok"] and counts["all"]["new_ok"] == 0:
        observed = "signature"
    witness = None
    if pair.get("witness_example"):
        by = {w["path"]: w["shape"] for w in pair["witness_example"]}
        try:
            shapes = old.shapes_by_path(by)
            args, kwargs = old.inputs(shapes)
            ro, rn = gatelib.run(old.module, args, kwargs), gatelib.run(new.module, args, kwargs)
            witness = {"witness": pair["witness_example"], "old": ro, "new": rn,
                       "holds": ro["ok"] != rn["ok"]}
        except KeyError as e:
            witness = {"witness": pair["witness_example"], "error": "no shape for %s" % e}
    truth = {
        "pair": pair["pair"], "expected": pair["expected"], "also": pair.get("also", []),
        "observed": observed,
        "agrees": agrees(pair["expected"], pair.get("also", []), observed, rows, errors.table),
        "runner": {"torch": torch.__version__, "tool": "tools/gate_truth.py"},
        "old": {"file": "old.pt2", "sha256": sha256(os.path.join(d, "old.pt2")), "torch_version": pair["torch"]["old"],
                "inputs": old.describe(), "range_constraints": old.ranges_text(), "guards_code": old.guards_code()},
        "new": {"file": "new.pt2", "sha256": sha256(os.path.join(d, "new.pt2")), "torch_version": pair["torch"]["new"],
                "inputs": new.describe(), "range_constraints": new.ranges_text(), "guards_code": new.guards_code()},
        "paths": [l.path for l in old.leaves],
        "dynamic_dims": ["%s.size()[%d]" % (old.leaves[i].path, dd) for i, dd in dyn],
        "counts": counts, "rows_dropped_over_max_rows": truncated, "max_numel": max_numel,
        "shapes_skipped_over_max_numel": skipped,
        "witness_example": witness,
        "regression_examples": [r["shapes"] for r in rows if r["old"] == "ok" and r["new"] != "ok"][:5],
        "widening_examples": [r["shapes"] for r in rows if r["new"] == "ok" and r["old"] != "ok"][:5],
        "errors": errors.table,
        "rows": rows,
        "seconds": round(time.time() - t0, 2),
    }
    return truth


def write(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=None, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, path)


def pretty(path, truth):
    """One row per line: readable diffs, small files."""
    head = {k: v for k, v in truth.items() if k != "rows"}
    lines = json.dumps(head, indent=1)[:-2] + ',\n "rows": [\n'
    lines += ",\n".join("  " + json.dumps(r) for r in truth["rows"]) + "\n ]\n}\n"
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(lines)
    os.replace(tmp, path)


def rerun_old_26(d):
    """Cross-version pair under torch 2.6: OLD (written by 2.6) on the rows of truth.json."""
    tp = os.path.join(d, "truth.json")
    if not os.path.exists(tp):
        print("%-28s no truth.json yet (run --torch 2.14 first)" % os.path.basename(d))
        return
    with open(tp) as f:
        truth = json.load(f)
    old = gatelib.Archive(os.path.join(d, "old.pt2"))
    errors = Errors()
    for eid, e in truth["errors"].items():
        errors.index[(e["type"], e["kind"], e["message"])] = eid
        errors.table[eid] = e
    differ = 0
    for r in truth["rows"]:
        args, kwargs = old.inputs(r["shapes"])
        r["old_2.6"] = errors.id(gatelib.run(old.module, args, kwargs))
        differ += (r["old_2.6"] == "ok") != (r["old"] == "ok")
    truth["errors"] = errors.table
    truth["old_2.6"] = {"torch": torch.__version__, "rows_where_acceptance_differs_from_2.14": differ,
                        "old_ok": sum(r["old_2.6"] == "ok" for r in truth["rows"])}
    pretty(tp, truth)
    print("%-28s OLD under torch %s: %d ok, acceptance differs from 2.14's on %d rows"
          % (os.path.basename(d), torch.__version__, truth["old_2.6"]["old_ok"], differ))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--torch", required=True, choices=["2.14", "2.6"])
    ap.add_argument("--dir", default=GATE)
    ap.add_argument("pairs", nargs="*")
    a = ap.parse_args()
    gatelib.quiet()
    names = a.pairs or sorted(os.listdir(a.dir))
    bad = 0
    for name in names:
        d = os.path.join(a.dir, name)
        if not os.path.exists(os.path.join(d, "pair.json")):
            continue
        if a.torch == "2.6" and name.endswith("-2.6to2.14"):
            rerun_old_26(d)
            continue
        if not name.endswith("-" + a.torch) and not (a.torch == "2.14" and name.endswith("-2.6to2.14")):
            continue
        truth = truth_for(d)
        pretty(os.path.join(d, "truth.json"), truth)
        c, g = truth["counts"]["all"], truth["counts"]["ge2"]
        w = truth["witness_example"]
        bad += not truth["agrees"]
        print("%-26s %5d shapes  OLD ok %4d  NEW ok %4d  OLD-only %4d (>=2: %4d)  NEW-only %4d (>=2: %4d)  "
              "observed %-19s expected %-10s %s  witness %s  %.1fs"
              % (name, c["tried"], c["old_ok"], c["new_ok"], c["old_ok_new_rejects"], g["old_ok_new_rejects"],
                 c["new_ok_old_rejects"], g["new_ok_old_rejects"], truth["observed"], truth["expected"],
                 "agrees" if truth["agrees"] else "DISAGREES",
                 "-" if not w else ("holds" if w.get("holds") else "FAILS"), truth["seconds"]), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
