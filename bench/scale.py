#!/usr/bin/env python3
"""shapegate check on model-sized traces, whole process, against torch's own time (issue 14).

    bench/scale.sh [--shapegate PATH] [--traces DIR] [--timeout MS] [--runs N] [--corpus | --batch] [--jobs J,...] [NAME...]

For each trace (default: every one listed in bench/traces.tsv that is present in --traces),
runs `shapegate check --json --timeout MS TRACE` N times (default 1) as a child process and
reports the median wall time, the CPU time (user + system) and the peak RSS of the child (wait4; CPU
is the steadier figure on a shared machine), the verdict, how many dims
were proved / refuted / unknown (and the commonest reason), the suggested-fix lines printed and
whether they were verified, and the Z3 query count. Side by side: torch's time on the same trace
(produce_guards_s + dim_constraints_total_s of case.json, the time torch spent deciding these
constraints) and its whole export_s, and the ratio torch / shapegate (> 1: shapegate is faster).
The issue's target is a ratio >= 10 against torch's solve time.

--phases adds two rows per trace: the same check with --no-infer --no-fix (the decision alone)
and with --no-fix (decision and inference), so the three rows split the cost.

--corpus adds two rows (alone when no NAME is given): every case of tests/corpus/cases and cases-2.6 with a ShapeEnv, one
process each, the sum of the medians against the sum of torch's times; and the same cases in one batch process
(`shapegate check --json INPUT...`: median wall and CPU of N runs, the CPU of the whole process tree, and
the CPU of its busiest child process, sampled from /proc every 5 ms: on a loaded machine, what the batch's
wall would be with a free core per worker), and the median CPU the rest of the machine used during a run
(/proc/stat busy less ours; near 0: the run had the machine to itself).
--batch gives the batch row without the one-process-each row; --jobs 1,2 gives one batch row per
value (`check --json --jobs J INPUT...`).

Traces are capture folders (case.json + guards.json) or single-file JSON traces. A name of
bench/traces.tsv that is missing from --traces is extracted from bench/traces/NAME.tar.gz when
that exists (a synth trace is simply made again), else skipped with the command that
regenerates it (bench/gen/regen.sh NAME).
A run that exceeds the hard limit (timeout * 3 + 30 s: check, then fixes) is killed and shown as
such. Nothing here is a test: it prints figures and ratios, and always exits 0 unless misused.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def read_table():
    rows = []
    with open(os.path.join(HERE, "traces.tsv")) as fh:
        for ln in fh:
            ln = ln.rstrip("\n")
            if not ln or ln.startswith("#"):
                continue
            name, kind, what = ln.split("\t")[:3]
            rows.append((name, kind, what))
    return rows


def torch_times(path):
    """(solve_s, export_s, fix_lines) from case.json, or Nones for a single-file trace."""
    cj = os.path.join(path, "case.json")
    if not os.path.isfile(cj):
        return None, None, None
    with open(cj) as fh:
        c = json.load(fh)
    t = c.get("timing") or {}
    if "produce_guards_s" not in t:
        return None, None, None
    return (t.get("produce_guards_s", 0.0) + t.get("dim_constraints_total_s", 0.0), t.get("export_s"),
            len(c.get("suggested_fixes") or []))


def has_shape_env(path):
    with open(os.path.join(path, "guards.json")) as fh:
        return json.load(fh).get("main_shape_env_index") is not None


def machine_busy():
    """CPU-seconds the whole machine has been busy (/proc/stat: user, nice, system, irq, softirq, steal)."""
    try:
        with open("/proc/stat") as fh:
            v = [int(x) for x in fh.readline().split()[1:9]]
        return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def proc_cpu(pid):
    """utime + stime of a live process in seconds (/proc/PID/stat), or None."""
    try:
        with open("/proc/%d/stat" % pid) as fh:
            f = fh.read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def watch_workers(cmd, limit_s):
    """Run `cmd` sampling its children's CPU every 5 ms (/proc): wall seconds, exit code (None:
    killed at the limit), stdout, and each child's last CPU figure, largest first. On a loaded
    machine the busiest worker's CPU is what the batch's wall would be on idle cores."""
    import tempfile
    seen = {}
    with tempfile.TemporaryFile() as out:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, start_new_session=True)
        killed = False
        while p.poll() is None:
            if time.monotonic() - t0 > limit_s:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                killed = True
                break
            try:
                with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as fh:
                    kids = [int(x) for x in fh.read().split()]
            except OSError:
                kids = []
            for k in kids:
                v = proc_cpu(k)
                if v is not None:
                    seen[k] = v
            time.sleep(0.005)
        wall = time.monotonic() - t0
        out.seek(0)
        data = out.read()
    return wall, p.returncode if not killed else None, data, sorted(seen.values(), reverse=True)


def run_once(cmd, limit_s):
    """Wall seconds, peak RSS (KiB), exit code (None: killed at the limit), stdout."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    out = b""
    killed = False
    try:
        out, _ = p.communicate(timeout=limit_s)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        killed = True
    wall = time.monotonic() - t0
    return wall, p.returncode if not killed else None, out


def children_usage():
    """(peak RSS in KiB, user CPU s, system CPU s) of the waited-for children: here, the one run."""
    import resource
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_maxrss, ru.ru_utime, ru.ru_stime


def measure(cmd, runs, limit, watch=False):
    """Run `cmd` `runs` times: the last run's info with the median wall and CPU (user + system);
    with `watch`, also "busiest": the median of the busiest child's CPU (watch_workers)."""
    walls, users, busiest, others, res = [], [], [], [], None
    for _ in range(runs):
        # each run in a fresh helper process so that RUSAGE_CHILDREN's maximum is this run's
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            kids = []
            busy0 = machine_busy()
            if watch:
                wall, rc, out, kids = watch_workers(cmd, limit)
            else:
                wall, rc, out = run_once(cmd, limit)
            peak, user, sys_s = children_usage()
            busy1 = machine_busy()
            others = busy1 - busy0 - user - sys_s if busy0 is not None and busy1 is not None else None
            info = {"others": others, "wall": wall, "rc": rc, "peak_kib": peak, "user": user, "sys": sys_s,
                    "out": out.decode("utf-8", "replace"), "busiest": kids[0] if kids else None}
            with os.fdopen(w, "w") as fh:
                json.dump(info, fh)
            os._exit(0)
        os.close(w)
        with os.fdopen(r) as fh:
            data = fh.read()
        os.waitpid(pid, 0)
        info = json.loads(data)
        walls.append(info["wall"])
        users.append(info["user"] + info["sys"])
        if info["busiest"] is not None:
            busiest.append(info["busiest"])
        if info["others"] is not None:
            others.append(max(0.0, info["others"]))
        res = info
    walls.sort()
    users.sort()
    res["wall"] = walls[len(walls) // 2]
    res["cpu"] = users[len(users) // 2]
    busiest.sort()
    res["busiest"] = busiest[len(busiest) // 2] if busiest else None
    others.sort()
    res["others"] = others[len(others) // 2] if others else None
    return res


def check(shapegate, path, timeout_ms, runs, extra=()):
    cmd = [shapegate, "check", "--json", "--timeout", str(timeout_ms)] + list(extra) + [path]
    limit = timeout_ms / 1000.0 * 3 + 30 if timeout_ms else 3600
    return measure(cmd, runs, limit)


def summarise(info):
    s = {"verdict": "killed" if info["rc"] is None else "exit %d" % info["rc"], "proved": 0, "refuted": 0,
         "unknown": 0, "reason": "", "fixes": 0, "verified": None, "queries": None, "cheap": None}
    line = info["out"].strip().splitlines()[-1] if info["out"].strip() else ""
    try:
        j = json.loads(line)
    except ValueError:
        return s
    s["verdict"] = j.get("verdict", s["verdict"])
    reasons = Counter()
    for d in j.get("dims", []):
        st = d.get("status")
        if st in ("proved", "refuted", "unknown"):
            s[st] += 1
        if st == "unknown":
            reasons[d.get("reason") or "?"] += 1
    if reasons:
        why, n = reasons.most_common(1)[0]
        s["reason"] = f"{n}x {why}"
    s["fixes"] = len(j.get("suggested_fixes") or [])
    s["verified"] = (j.get("fixes") or {}).get("verified")
    st = j.get("stats") or {}
    s["queries"], s["cheap"] = st.get("queries"), st.get("decided_cheaply")
    return s


def ensure(traces, name, kind, args):
    path = os.path.join(traces, name)
    for cand in (path, path + ".json"):
        if os.path.exists(cand):
            return cand
    if kind == "synth":  # milliseconds to make: never committed
        os.makedirs(traces, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(HERE, "gen", "synth.py")] + args.split() + [path + ".json"],
                       check=True, stdout=subprocess.DEVNULL)
        return path + ".json"
    if kind == "tile":  # from a recorded sweep trace (bench/gen/tile.py), seconds to make
        src, n = args.split()
        srcpath = ensure(traces, src, "torch", src)
        if srcpath:
            subprocess.run([sys.executable, os.path.join(HERE, "gen", "tile.py"), srcpath, n, path + ".json"],
                           check=True, stdout=subprocess.DEVNULL)
            return path + ".json"
    tgz = os.path.join(HERE, "traces", name + ".tar.gz")
    if os.path.isfile(tgz):
        os.makedirs(traces, exist_ok=True)
        with tarfile.open(tgz) as tf:
            tf.extractall(traces)
        for cand in (path, path + ".json"):
            if os.path.exists(cand):
                return cand
    return None


def corpus_paths():
    """Every case of tests/corpus/cases and cases-2.6 with a ShapeEnv, in name order."""
    paths = []
    for sub in ("cases", "cases-2.6"):
        base = os.path.join(ROOT, "tests", "corpus", sub)
        for case in sorted(os.listdir(base)):
            path = os.path.join(base, case)
            if os.path.isdir(path) and has_shape_env(path):
                paths.append(path)
    return paths


def fmt(v, spec="%.3f", none="-"):
    return none if v is None else spec % v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapegate", default=os.path.join(ROOT, "build", "shapegate"))
    ap.add_argument("--traces", default=os.path.join(ROOT, "build", "scale-traces"))
    ap.add_argument("--timeout", type=int, default=60000, help="shapegate's --timeout (ms; the CLI default)")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--corpus", action="store_true", help="add the corpus row (87 processes)")
    ap.add_argument("--batch", action="store_true",
                    help="add the corpus's batch row alone (one `check --json INPUT...` process)")
    ap.add_argument("--jobs", default="",
                    help="batch rows with these --jobs values (comma-separated; default: the binary's default)")
    ap.add_argument("--phases", action="store_true",
                    help="also run --no-infer --no-fix and --no-fix: the cost of check, inference, fixes")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    if not os.access(a.shapegate, os.X_OK):
        print(f"scale: no shapegate binary at {a.shapegate} (build it, or give --shapegate)", file=sys.stderr)
        return 2
    table = read_table()
    names = a.names or ([] if a.corpus or a.batch else [n for n, _, _ in table])
    known = {n for n, _, _ in table}
    bad = [n for n in names if n not in known]
    if bad:
        print(f"scale: not in bench/traces.tsv: {' '.join(bad)}", file=sys.stderr)
        return 2
    print(f"shapegate {a.shapegate}, --timeout {a.timeout} ms, median of {a.runs} run(s) per trace, whole process")
    hdr = ("trace", "verdict", "prv", "ref", "unk", "fixes", "qry", "sg s", "cpu s", "peak MiB", "torch s",
           "export s", "torch/sg", "unknown reason")
    print("%-12s %-10s %5s %5s %5s %6s %6s %9s %7s %8s %8s %9s %9s  %s" % hdr)
    rows = {n: (k, w) for n, k, w in table}
    for name in names:
        path = ensure(a.traces, name, *rows[name])
        if not path:
            print("%-12s not present: bench/gen/regen.sh %s" % (name, name))
            continue
        ts, ex, tfix = torch_times(path)
        info = check(a.shapegate, path, a.timeout, a.runs)
        s = summarise(info)
        fixes = "%d%s" % (s["fixes"], "v" if s["verified"] else "")
        ratio = ts / info["wall"] if ts else None
        print("%-12s %-10s %5d %5d %5d %6s %6s %9.3f %7.2f %8.1f %8s %9s %9s  %s" % (
            name, s["verdict"], s["proved"], s["refuted"], s["unknown"], fixes, fmt(s["queries"], "%d"),
            info["wall"], info["cpu"], info["peak_kib"] / 1024.0, fmt(ts), fmt(ex, "%.1f"), fmt(ratio, "%.2f"),
            s["reason"]), flush=True)
        if tfix is not None:
            print("%-12s torch printed %d fix lines" % ("", tfix))
        if a.phases:
            for extra in (["--no-infer", "--no-fix"], ["--no-fix"]):
                pi = check(a.shapegate, path, a.timeout, a.runs, extra)
                ps = summarise(pi)
                print("%-12s %-10s %5d %5d %5d %6s %6s %9.3f %7.2f %8.1f  (%s)" % (
                    "", ps["verdict"], ps["proved"], ps["refuted"], ps["unknown"], "-", fmt(ps["queries"], "%d"),
                    pi["wall"], pi["cpu"], pi["peak_kib"] / 1024.0, " ".join(extra)), flush=True)
    if a.corpus or a.batch:
        paths = corpus_paths()
        total_torch = sum(torch_times(p)[0] or 0.0 for p in paths)
    if a.corpus:
        total_sg = 0.0
        for path in paths:
            total_sg += check(a.shapegate, path, a.timeout, a.runs)["wall"]
        print("%-12s %d traces, one process each: shapegate %.3f s, torch %.3f s, torch/sg %.2f" % (
            "corpus", len(paths), total_sg, total_torch, total_torch / total_sg if total_sg else 0))
    if a.corpus or a.batch:
        # the same traces in one batch process (shapegate check --json INPUT...), --jobs as asked
        for jobs in (a.jobs.split(",") if a.jobs else [None]):
            cmd = [a.shapegate, "check", "--json", "--timeout", str(a.timeout)]
            cmd += ["--jobs", jobs] if jobs else []
            info = measure(cmd + paths, a.runs, 3600, watch=True)
            lines = len(info["out"].splitlines())
            label = "batch" + ("/j" + jobs if jobs else "")
            if lines != len(paths):
                print("%-12s this binary does not check several INPUTs in one process (%d lines for %d traces)" % (
                    label, lines, len(paths)))
            else:
                print("%-12s %d traces in one command: shapegate %.3f s wall, %.3f s CPU (busiest process %s s), "
                      "torch %.3f s, torch/sg %.2f; the rest of the machine meanwhile %s CPU-s" % (
                          label, len(paths), info["wall"], info["cpu"], fmt(info["busiest"]), total_torch,
                          total_torch / info["wall"] if info["wall"] else 0, fmt(info["others"], "%.2f")),
                      flush=True)
    print("torch s = produce_guards_s + dim_constraints_total_s (case.json); torch/sg >= 10 is the issue's target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
