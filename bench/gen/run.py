"""Record the scale scenarios of bench/gen/models.py with real torch.

Usage (from the repository root, inside the reference chroot):

    /work/shared/refenv/run.sh /root/refenv/forky python3 bench/gen/run.py [--out DIR] NAME...
    ... python3 bench/gen/run.py --list

Each NAME is exported by the corpus's recording harness (tests/corpus/gen/harness.py, run_case):
DIR/NAME/case.json and guards.json are the capture folder `shapegate check` reads (plus
model.pt2, graph.txt and range_constraints.json when the export succeeds). One summary line of
JSON per case goes to stdout: guard and symbol counts, suggested-fix lines, and torch's own
timings (produce_guards_s, dim_constraints_total_s, export_s). Run one case per process when the
timings matter: torch caches and the allocator carry state from one export to the next.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "corpus", "gen"))
sys.path.insert(0, HERE)

import harness  # noqa: E402
import models  # noqa: E402


def summary(name, out):
    with open(os.path.join(out, name, "case.json")) as fh:
        case = json.load(fh)
    with open(os.path.join(out, name, "guards.json")) as fh:
        g = json.load(fh)
    main = g.get("main_shape_env_index")
    se = g["shape_envs"][main] if main is not None else {}
    nra = sum(len(v) for v in (se.get("deferred_runtime_asserts") or {}).values())
    t = case.get("timing", {})
    refined = case.get("refined") or {}
    return {
        "name": name,
        "torch": case.get("torch_version"),
        "outcome": case.get("outcome"),
        "guards": len(se.get("guards") or []),
        "runtime_asserts": nra,
        "symbols": len(se.get("var_to_range") or {}),
        "replacements": len(se.get("replacements") or {}),
        "dims": sum(1 for d in (case.get("dynamic_shapes_flat") or []) if d.get("spec") not in (None, "STATIC")),
        "fix_lines": len(case.get("suggested_fixes") or []),
        "refine_rounds": len(refined.get("rounds") or []),
        "refine_final": refined.get("final_outcome"),
        "produce_guards_s": t.get("produce_guards_s"),
        "dim_constraints_total_s": t.get("dim_constraints_total_s"),
        "export_s": t.get("export_s"),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "scale-traces"), help="output folder")
    ap.add_argument("--list", action="store_true", help="list the scenarios")
    ap.add_argument("--no-refine", action="store_true",
                    help="skip the harness's re-export from torch's suggested fixes (case.json then says "
                         "refine 'not available'); halves the time of the biggest exports")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    if a.list:
        for n, s in models.SCENARIOS.items():
            print(f"{n}: {s['description']}")
        return 0
    unknown = [n for n in a.names if n not in models.SCENARIOS]
    if unknown or not a.names:
        print(f"run.py: unknown or no scenario: {' '.join(unknown)} (see --list)", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    if a.no_refine:  # the harness looks the function up with getattr(..., None) and then skips the rounds
        harness.tdyn.refine_dynamic_shapes_from_suggested_fixes = None
    for n in a.names:
        t0 = time.perf_counter()
        harness.run_case(n, models.SCENARIOS[n], a.out)
        s = summary(n, a.out)
        s["wall_s"] = time.perf_counter() - t0
        print(json.dumps(s), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
