#!/usr/bin/env python3
"""shapegate against the raw z3 binary on the residual it asks Z3 (issue 14).

    bench/z3ref.py [--shapegate PATH] [--shim PATH] [--traces DIR] [--runs N] [--keep DIR] [NAME...]

For each trace (default: the model traces of bench/traces.tsv present in --traces, which are
extracted from bench/traces/NAME.tar.gz as bench/scale.py does), runs
`shapegate check --json TRACE` with the LD_PRELOAD library build/bench/libsg_z3shim.so
(bench/z3shim.c), which writes every satisfiability question the process hands Z3 as a
stand-alone SMT-LIB file (the solver's assertions, then check-sat or check-sat-assuming) with the
seconds Z3 spent on it in-process. That set of files is the residual: what the presolve, the
enumerations and the witnesses left to Z3. Then runs the `z3` binary (`z3 -smt2 FILE`) on each
file (best of --runs, default 3) and nets out its start-up (the time on an empty file).

Printed per trace: shapegate's whole process (wall and CPU, best of --runs without the shim), the
queries (one more run, under the shim: writing the files is outside the timed calls), the seconds inside Z3
in-process, the z3 binary's net seconds on the same questions, and the overhead of shapegate over
the raw binary: shapegate whole process / z3 binary on the residual. An overhead below 1 means the
whole diagnosis (loading, presolve, explanations, fixes, rendering) costs less than z3 alone spends
on the questions shapegate still asks; a trace with no residual has no ratio (nothing for z3 to do).

Not like for like, on purpose: the binary parses the SMT-LIB text and solves each question from
scratch (no incremental state, its default tactic, no time or resource limit), where shapegate
builds terms through the C API and asks an incremental solver. Answers are compared: a z3 answer
that differs from the in-process one (other than unknown) is printed as a mismatch.
"""

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import scale  # noqa: E402  (trace table and extraction)

MODEL_TRACES = ["kv48", "eq1000", "chain500", "view800", "prod300", "sweep1000"]


def z3_time(path, runs):
    """(best seconds, answer line) of `z3 -smt2 path`."""
    best, answer = None, ""
    for _ in range(runs):
        t0 = time.monotonic()
        p = subprocess.run(["z3", "-smt2", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        dt = time.monotonic() - t0
        best = dt if best is None else min(best, dt)
        answer = p.stdout.decode(errors="replace").strip().splitlines()[:1]
        answer = answer[0] if answer else ""
    return best, answer


def time_shapegate(sg, trace, runs):
    """Best (wall, cpu) seconds of `shapegate check --json trace` without the shim."""
    best = None
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        subprocess.run([sg, "check", "--json", trace], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.monotonic() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = (wall, cpu) if best is None or wall < best[0] else best
    return best


def record_queries(sg, shim, trace, qdir):
    """[(file, seconds inside Z3, answer)] of one run under the shim (which writes the files)."""
    env = dict(os.environ, SG_Z3SHIM_DIR=qdir, LD_PRELOAD=shim)
    subprocess.run([sg, "check", "--json", trace], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    rows = []
    log = os.path.join(qdir, "log")
    if os.path.exists(log):
        with open(log) as fh:
            for ln in fh:
                name, secs, ans = ln.split()
                rows.append((name, float(secs), ans))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapegate", default=os.path.join(ROOT, "build", "shapegate"))
    ap.add_argument("--shim", default=os.path.join(ROOT, "build", "bench", "libsg_z3shim.so"))
    ap.add_argument("--traces", default=os.path.join(ROOT, "build", "scale-traces"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="write the SMT-LIB files under this folder (kept)")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    if not shutil.which("z3"):
        sys.exit("z3ref: the z3 binary is missing (Debian package z3)")
    for f in (a.shapegate, a.shim):
        if not os.path.exists(f):
            sys.exit(f"z3ref: {f} is missing: build it (cmake --build build --target shapegate sg_z3shim)")
    os.makedirs(a.traces, exist_ok=True)
    table = scale.read_table()
    empty = tempfile.NamedTemporaryFile("w", suffix=".smt2", delete=False)
    empty.close()
    startup, _ = z3_time(empty.name, 5)
    os.unlink(empty.name)
    print(f"z3 binary start-up (empty file): {startup * 1000:.1f} ms, netted out below")
    print(f"{'trace':<10} {'sg wall s':>9} {'sg cpu s':>8} {'queries':>7} {'in Z3 s':>8} "
          f"{'z3 bin s':>8} {'sg/z3bin':>8}  mismatches")
    for name in a.names or MODEL_TRACES:
        row = next((r for r in table if r[0] == name), None)
        trace = scale.ensure(a.traces, name, row[1], row[2]) if row else None
        if not trace:
            print(f"{name:<10} (missing)")
            continue
        base = a.keep or tempfile.mkdtemp(prefix="z3ref-")
        qdir = os.path.join(base, name)
        shutil.rmtree(qdir, ignore_errors=True)
        os.makedirs(qdir)
        wall, cpu = time_shapegate(a.shapegate, trace, a.runs)
        rows = record_queries(a.shapegate, a.shim, trace, qdir)
        inz3 = sum(r[1] for r in rows)
        zbin, bad = 0.0, []
        for fname, _, ans in rows:
            t, zans = z3_time(os.path.join(qdir, fname), a.runs)
            zbin += max(t - startup, 0.0)
            if zans != ans and "unknown" not in (zans, ans):
                bad.append(f"{fname}: z3 {zans!r}, in-process {ans}")
        ratio = f"{wall / zbin:8.2f}" if zbin > 0 else f"{'-':>8}"
        print(f"{name:<10} {wall:9.3f} {cpu:8.3f} {len(rows):7d} {inz3:8.3f} {zbin:8.3f} {ratio}  "
              f"{len(bad)}{'' if not bad else ' (' + bad[0] + ')'}")
        if not a.keep:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
