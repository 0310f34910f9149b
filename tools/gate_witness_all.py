#!/usr/bin/env python3
"""gate_witness_all.py: gate_witness.py over every pair of tests/data/gate/, in one torch process.

    for each pair: ./build/shapegate gate --json OLD NEW > tests/data/gate/witness/<pair>.gate.json  # outside
    /work/shared/refenv/run.sh /root/refenv/forky python3 tools/gate_witness_all.py                 # inside

Runs gate_witness.main on each <pair>.gate.json that holds a witness (pairs the gate passes without
a widening have none and are listed as such), prints every line and a summary, and writes them to
tests/data/gate/witness/RESULTS.txt. Exit 0 when every witness holds.
"""
import contextlib
import glob
import io
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gate_witness  # noqa: E402

ROOT = os.path.dirname(HERE)
WDIR = os.path.join("tests", "data", "gate", "witness")


def main():
    os.chdir(ROOT)
    lines, bad, held, none = [], 0, 0, 0
    for gj in sorted(glob.glob(os.path.join(WDIR, "*.gate.json"))):
        pair = os.path.basename(gj)[:-len(".gate.json")]
        d = os.path.join("tests", "data", "gate", pair)
        with open(gj) as f:
            verdict = json.load(f).get("verdict")
        if not gate_witness.witnesses(json.load(open(gj))):
            none += 1
            lines.append("%s: %s, no witness (nothing to run)" % (pair, verdict))
            continue
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = gate_witness.main([gj, os.path.join(d, "old.pt2"), os.path.join(d, "new.pt2")])
        lines.append("%s: %s, gate_witness exit %d" % (pair, verdict, rc))
        lines += ["  " + l for l in buf.getvalue().splitlines()]
        if rc == 0:
            held += 1
        else:
            bad += 1
    lines.append("%d pairs: %d with every witness holding in torch, %d failing, %d without a witness"
                 % (held + bad + none, held, bad, none))
    lines.append("%d passed, %d failed" % (held, bad))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(os.path.join(WDIR, "RESULTS.txt"), "w") as f:
        f.write(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
