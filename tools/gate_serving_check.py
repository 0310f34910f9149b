#!/usr/bin/env python3
"""gate_serving_check.py: is the dynamic_shapes `shapegate gate --emit dynamic-shapes` prints for
NEW accepted by real torch? (issue 17: "verified" means torch re-exports it)

  emit [--torch V] [--shapegate BIN]   outside the chroot: for each tests/data/gate/<pair>-V
                           (V 2.14, the default, or 2.6), the spec of its new.pt2 into
                           tests/data/gate/serving/specs-V.json
  run [--torch V]          inside the chroot of torch V (forky: 2.14, trixie: 2.6): re-export each
                           pair's NEW model (tools/make_gate_pairs.py) with that spec;
                           RESULTS-V.txt says which torch accepted
  check [--torch V] [--shapegate BIN]  what emit would write equals specs-V.json (test_gate_cli
                           runs it: the committed torch results stay about today's output)
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GATE = os.path.join(ROOT, "tests", "data", "gate")
OUT = os.path.join(GATE, "serving")


def emitted(sg, tag):
    """{pair: the dynamic_shapes text shapegate emits for the pair's NEW archive of torch `tag`}"""
    specs = {}
    for d in sorted(os.listdir(GATE)):
        if not d.endswith("-" + tag) or not os.path.exists(os.path.join(GATE, d, "new.pt2")):
            continue
        new = os.path.join(GATE, d, "new.pt2")
        p = subprocess.run([sg, "gate", "--emit", "dynamic-shapes", new, new], capture_output=True, text=True)
        specs[d[:-len(tag) - 1]] = p.stdout if p.returncode == 0 else None
    return specs


def cmd_emit(sg, tag):
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "specs-%s.json" % tag), "w") as f:
        json.dump(emitted(sg, tag), f, indent=1)
        f.write("\n")


def cmd_check(sg, tag):
    with open(os.path.join(OUT, "specs-%s.json" % tag)) as f:
        want = json.load(f)
    got = emitted(sg, tag)
    bad = [n for n in sorted(set(want) | set(got)) if want.get(n) != got.get(n)]
    for n in bad:
        print("%s-%s: emitted %r, specs-%s.json has %r" % (n, tag, got.get(n), tag, want.get(n)))
    print("%d of %d specs as committed" % (len(want) - len(bad), len(want)))
    return 1 if bad else 0


def cmd_run(tag):
    sys.path.insert(0, HERE)
    import make_gate_pairs as mg
    torch = mg.need_torch()
    if not torch.__version__.startswith(tag + "."):
        sys.exit("torch %s here, not %s: run inside its chroot" % (torch.__version__, tag))
    with open(os.path.join(OUT, "specs-%s.json" % tag)) as f:
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
    with open(os.path.join(OUT, "RESULTS-%s.txt" % tag), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


if __name__ == "__main__":
    what, tag, sg = sys.argv[1] if len(sys.argv) > 1 else "", arg("--torch", "2.14"), arg("--shapegate", "build/shapegate")
    if tag not in ("2.14", "2.6"):
        sys.exit("--torch %s: expected 2.14 or 2.6" % tag)
    if what == "emit":
        cmd_emit(sg, tag)
    elif what == "check":
        sys.exit(cmd_check(sg, tag))
    elif what == "run":
        cmd_run(tag)
    else:
        print(__doc__)
        sys.exit(2)
