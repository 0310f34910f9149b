#!/usr/bin/env python3
"""gate_serving_check.py: is the dynamic_shapes `shapegate gate --emit dynamic-shapes` prints for
NEW accepted by real torch? (issue 17: "verified" means torch re-exports it)

  emit [--shapegate BIN]   outside the chroot: for each tests/data/gate/<pair>-2.14, the spec of
                           its new.pt2 into tests/data/gate/serving/specs.json
  run                      inside the forky chroot (torch 2.14): re-export each pair's NEW model
                           (tools/make_gate_pairs.py) with that spec; RESULTS.txt says which
                           torch accepted
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GATE = os.path.join(ROOT, "tests", "data", "gate")
OUT = os.path.join(GATE, "serving")


def cmd_emit(sg):
    specs = {}
    for d in sorted(os.listdir(GATE)):
        if not d.endswith("-2.14"):
            continue
        new = os.path.join(GATE, d, "new.pt2")
        p = subprocess.run([sg, "gate", "--emit", "dynamic-shapes", new, new], capture_output=True, text=True)
        specs[d[:-5]] = p.stdout if p.returncode == 0 else None
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "specs.json"), "w") as f:
        json.dump(specs, f, indent=1)
        f.write("\n")


def cmd_run():
    sys.path.insert(0, HERE)
    import make_gate_pairs as mg
    torch = mg.need_torch()
    with open(os.path.join(OUT, "specs.json")) as f:
        specs = json.load(f)
    P = mg.pairs()
    lines, ok = [], 0
    for name, text in sorted(specs.items()):
        if text is None or name not in P:
            lines.append("%-12s no spec" % name)
            continue
        v = P[name]["new"]
        env = {}
        exec(text, env)  # our own generated text: Dim(...) definitions and dynamic_shapes
        torch.manual_seed(0)
        model = v.model()
        model.eval()
        torch.manual_seed(1)
        args, kwargs = v.inputs()
        try:
            torch.export.export(model, args, kwargs, dynamic_shapes=env["dynamic_shapes"], strict=False)
            ok += 1
            lines.append("%-12s accepted  %s" % (name, text.strip().splitlines()[-1]))
        except Exception as e:  # noqa: BLE001 - recorded
            lines.append("%-12s REFUSED   %s: %s" % (name, type(e).__name__, str(e).splitlines()[0][:200]))
    lines.append("%d of %d specs accepted by torch %s on re-export" % (ok, len(specs), torch.__version__))
    with open(os.path.join(OUT, "RESULTS.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "emit":
        cmd_emit(sys.argv[sys.argv.index("--shapegate") + 1] if "--shapegate" in sys.argv else "build/shapegate")
    elif len(sys.argv) > 1 and sys.argv[1] == "run":
        cmd_run()
    else:
        print(__doc__)
        sys.exit(2)
