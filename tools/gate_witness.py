#!/usr/bin/env python3
"""gate_witness.py GATE.json OLD.pt2 NEW.pt2: check `shapegate gate --json` witnesses in real torch.

    ./build/shapegate gate --json OLD.pt2 NEW.pt2 > out/gate.json           # outside
    /work/shared/refenv/run.sh /root/refenv/forky \\
        python3 tools/gate_witness.py out/gate.json OLD.pt2 NEW.pt2          # inside

A witness is a list `[{"path": "['x']", "shape": [8, 3]}, ...]` covering every tensor input (issue
17). Every such list anywhere in GATE.json is checked: the regression witness at the top level
(`"witness"`) and any nested one (findings, per-dim results). A witness is a *widening* witness
(NEW accepts it, OLD rejects it) when the object holding it, or a key on the way to it, says
"widen" (`"kind": "widening"`, `"widenings": [...]`); otherwise it is a regression witness: OLD
must run and NEW must raise. Both archives get the same call: OLD's input structure with tensors
of the witness's shapes (seeded random floats; integer inputs repeat the example values).

Prints one line per witness and a summary line; exit 0 when every witness holds, 1 when one does
not, 3 when GATE.json is unreadable, has no witness, or a witness is malformed or misses a tensor
input. Run it with a torch that reads both archives (torch 2.14 reads both layouts).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def is_witness(v):
    return isinstance(v, list) and v and all(
        isinstance(w, dict) and isinstance(w.get("path"), str) and isinstance(w.get("shape"), list)
        and all(isinstance(n, int) and not isinstance(n, bool) for n in w["shape"]) for w in v)


def witnesses(node, where="$", widen=False):
    """(location, witness, widening?) for every witness list in the JSON."""
    out = []
    if isinstance(node, dict):
        here = widen or any("widen" in str(node.get(k, "")).lower() for k in ("kind", "direction", "type", "finding"))
        for k, v in node.items():
            sub = "%s.%s" % (where, k)
            if k == "witness" and isinstance(v, list):
                out.append((sub, v, here))
            else:
                out.extend(witnesses(v, sub, here or "widen" in k.lower()))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(witnesses(v, "%s[%d]" % (where, i), widen))
    return out


def main(argv):
    if len(argv) != 3:
        print("usage: gate_witness.py GATE.json OLD.pt2 NEW.pt2", file=sys.stderr)
        return 2
    try:
        with open(argv[0]) as f:
            gate = json.load(f)
    except (OSError, ValueError) as e:
        print("gate_witness: %s: %s" % (argv[0], e), file=sys.stderr)
        return 3
    found = witnesses(gate)
    if not found:
        print("gate_witness: %s: no witness in the JSON" % argv[0], file=sys.stderr)
        return 3
    for where, w, _ in found:
        if not is_witness(w):
            print("gate_witness: %s: %s is not a list of {path, shape}" % (argv[0], where), file=sys.stderr)
            return 3
    import gatelib
    gatelib.quiet()
    old, new = gatelib.Archive(argv[1]), gatelib.Archive(argv[2])
    held = failed = 0
    for where, w, widen in found:
        by = {x["path"]: x["shape"] for x in w}
        try:
            shapes = old.shapes_by_path(by)
        except KeyError as e:
            print("gate_witness: %s: no shape for OLD's tensor input %s" % (where, e), file=sys.stderr)
            return 3
        extra = sorted(set(by) - {l.path for l in old.leaves})
        args, kwargs = old.inputs(shapes)
        ro = gatelib.run(old.module, args, kwargs)
        rn = gatelib.run(new.module, args, kwargs)
        ok = (rn["ok"] and not ro["ok"]) if widen else (ro["ok"] and not rn["ok"])
        held += ok
        failed += not ok
        desc = " ".join("%s=%s" % (x["path"], x["shape"]) for x in w)

        def res(r):
            return "runs" if r["ok"] else "raises %s (%s: %s)" % (r["type"], r["kind"], r["message"])
        print("%s %s [%s]: %s; OLD %s; NEW %s%s" % (
            "HOLDS" if ok else "FAILS", where, "widening" if widen else "regression", desc, res(ro), res(rn),
            ("; paths not in OLD: %s" % extra) if extra else ""))
    print("%d witnesses: %d hold, %d fail (torch %s)" % (held + failed, held, failed, gatelib.torch.__version__))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
