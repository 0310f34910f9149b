#!/usr/bin/env python3
"""gate_witness_all.py: gate_witness.py over every pair of tests/data/gate/, in one torch process.

    python3 tools/gate_witness_all.py gen [--shapegate BIN]                              # outside
    /work/shared/refenv/run.sh /root/refenv/forky  python3 tools/gate_witness_all.py run --torch 2.14
    /work/shared/refenv/run.sh /root/refenv/trixie python3 tools/gate_witness_all.py run --torch 2.6

`gen` runs `shapegate gate --json` (BIN, default build/shapegate) on every pair: the archives into
tests/data/gate/witness/<pair>.gate.json and, for a pair with captured traces, the traces into
<pair>.trace.gate.json (a witness the gate finds from the traces must hold on the archives too).

`run --torch V` runs gate_witness.main on each of those files whose pair torch V can load (2.14:
every pair, it reads both archive layouts; 2.6: the `-2.6` pairs) and that holds a witness (pairs the
gate passes without a widening have none and are listed as such): every regression witness must run
in OLD and raise in NEW, every widening witness the other way. Prints every line and a summary and
writes them to tests/data/gate/witness/RESULTS-V.txt. Exit 0 when every witness holds.
"""
import contextlib
import glob
import io
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gate_witness  # noqa: E402

ROOT = os.path.dirname(HERE)
GATE = os.path.join("tests", "data", "gate")
WDIR = os.path.join(GATE, "witness")


def pairs():
    return sorted(d for d in os.listdir(GATE)
                  if os.path.exists(os.path.join(GATE, d, "old.pt2")) and os.path.exists(os.path.join(GATE, d, "new.pt2")))


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def cmd_gen(sg):
    os.makedirs(WDIR, exist_ok=True)
    n = 0
    for pair in pairs():
        d = os.path.join(GATE, pair)
        jobs = [("", "old.pt2", "new.pt2")]
        if os.path.exists(os.path.join(d, "old.trace.json")) and os.path.exists(os.path.join(d, "new.trace.json")):
            jobs.append((".trace", "old.trace.json", "new.trace.json"))
        for suffix, old, new in jobs:
            p = subprocess.run([sg, "gate", "--json", os.path.join(d, old), os.path.join(d, new)],
                               capture_output=True, text=True)
            if p.returncode not in (0, 1):
                print("%s%s: gate exit %d: %s" % (pair, suffix, p.returncode, p.stderr.strip()), file=sys.stderr)
                return 1
            write(os.path.join(WDIR, pair + suffix + ".gate.json"), p.stdout)
            n += 1
    print("%d gate reports written to %s" % (n, WDIR))
    return 0


def loads(tag, pair):
    return tag == "2.14" or pair.endswith("-" + tag)


def cmd_run(tag):
    lines, bad, held, none, nwit = [], 0, 0, 0, 0
    for gj in sorted(glob.glob(os.path.join(WDIR, "*.gate.json"))):
        name = os.path.basename(gj)[:-len(".gate.json")]
        pair = name[:-len(".trace")] if name.endswith(".trace") else name
        if not loads(tag, pair):
            continue
        d = os.path.join(GATE, pair)
        with open(gj) as f:
            rep = json.load(f)
        label = "%s (%s)" % (pair, "traces" if name.endswith(".trace") else "archives")
        if not gate_witness.witnesses(rep):
            none += 1
            lines.append("%s: %s, no witness (nothing to run)" % (label, rep.get("verdict")))
            continue
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = gate_witness.main([gj, os.path.join(d, "old.pt2"), os.path.join(d, "new.pt2")])
        out = buf.getvalue().splitlines()
        nwit += sum(1 for l in out if l.startswith(("HOLDS", "FAILS")))
        lines.append("%s: %s, gate_witness exit %d" % (label, rep.get("verdict"), rc))
        lines += ["  " + l for l in out]
        if rc == 0:
            held += 1
        else:
            bad += 1
    import torch
    lines.append("torch %s: %d gate reports: %d with every witness holding in torch (%d witnesses), %d failing, "
                 "%d without a witness" % (torch.__version__, held + bad + none, held, nwit, bad, none))
    lines.append("%d passed, %d failed" % (held, bad))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    write(os.path.join(WDIR, "RESULTS-%s.txt" % tag), text)
    return 1 if bad else 0


def main(argv):
    os.chdir(ROOT)
    if argv[:1] == ["gen"]:
        return cmd_gen(argv[argv.index("--shapegate") + 1] if "--shapegate" in argv else "build/shapegate")
    if argv[:1] == ["run"] and "--torch" in argv:
        return cmd_run(argv[argv.index("--torch") + 1])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
