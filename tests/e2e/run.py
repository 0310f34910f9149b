"""End-to-end: real user scripts, captured in real torch, checked by shapegate, fixed, re-exported.

    python3 tests/e2e/run.py [--bin SHAPEGATE] [--out DIR] [--versions 2.14,2.6] [SCRIPT...]

Run from anywhere on the host (it works from the top of the checkout); needs root for the chroots
(tools/refenv_run.sh) and the shapegate binary (--bin, $SHAPEGATE_BIN, else build/shapegate).
For each torch version (chroot: $SG_REFENV_2_14 / $SG_REFENV_2_6, defaults in expected.json):

1. inside the chroot: every script of tests/e2e/scripts runs as
   ``TORCH_TRACE=OUT/V/NAME/torch_trace python3 -m shapegate capture --out OUT/V/NAME/capture -- SCRIPT``
   (its exit status, the traces written and the TORCH_TRACE log are kept);
2. outside: ``shapegate check --json`` on every trace; the verdict must be the expected one
   (expected.json) and, where the script is a corpus scenario run with the same strictness,
   the verdict of ``shapegate check --json`` on that corpus folder; the verified fix's Python is
   written to OUT/V/NAME/fix-N.py;
3. inside: the script runs again under ``capture --dynamic-shapes fix-N.py --call N``: the export
   must now succeed (exit 0 when it was the failing call), and outside, the new trace must check ok;
4. TORCH_TRACE: each run must leave a non-empty log, and ``shapegate check --spec S [--frame N]``
   on it must give the capture's verdict (S: the user's spec, ``log_spec``). A binary without the
   TORCH_TRACE adapter (``shapegate trace --help`` fails) has the comparison reported as skipped,
   by count, never as passed.

A (version, script) pair passes when every step above holds for it. A chroot that is missing or
whose torch does not import fails every pair of that version, loudly. Prints a table, the
figures, and ends with ``N passed, N failed``; exit 1 when anything failed.

``--inside capture|refix OUT VERSION [SCRIPT...]`` is the part that runs in the chroot.
"""

import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join("tests", "e2e", "scripts")
EXPECTED = os.path.join(HERE, "expected.json")
RUN_SH = os.path.join("tools", "refenv_run.sh")
SCRIPT_TIMEOUT = 600


def per_version(value, version):
    return value.get(version) if isinstance(value, dict) else value


def load_expected():
    with open(EXPECTED) as fh:
        return json.load(fh)


def rel(path):
    return os.path.relpath(path, ROOT)


def write_json(path, obj):
    with open(path, "w") as fh:
        json.dump(obj, fh, indent=1)
        fh.write("\n")


def read_json(path, default=None):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return default


def log_spec(trace, log_trace):
    """The capture's dynamic_shapes in the form the TORCH_TRACE trace of the same export matches:
    as given, unless the log names its arguments by position only (torch 2.6 non-strict
    ``L['args'][0][k]``, strict ``L['flat_args'][k]``; ``shapegate trace`` names them arg0, arg1,
    ...), where a dict keyed by argument names becomes a list in argument order, a ``*varargs``
    entry spread over its positions."""
    ds = (trace.get("spec") or {}).get("dynamic_shapes")
    names = (((log_trace or {}).get("spec") or {}).get("inputs") or {}).get("arg_names") or []
    if not (names[:1] == ["arg0"] and isinstance(ds, dict)):
        return ds
    inp = (trace.get("spec") or {}).get("inputs") or {}
    sig = inp.get("signature") or ""
    out = []
    for n in inp.get("arg_names") or []:
        v = ds.get(n)
        if "*" + n in sig and "**" + n not in sig:
            v = v.get("__tuple__") if isinstance(v, dict) else v
            out.extend(v or [])
        else:
            out.append(v)
    return out


def tail(text, n=12):
    return "\n".join(text.rstrip().split("\n")[-n:])


# ============================================================================ inside the chroot

def _capture_cmd(out, script, extra=()):
    return [sys.executable, "-m", "shapegate", "capture", "--out", out, *extra, "--", script]


def inside(mode, out, version, names):
    import torch
    exp = load_expected()
    names = names or sorted(exp["scripts"])
    env = dict(os.environ, PYTHONPATH="python")
    for name in names:
        d = os.path.join(out, name)
        script = os.path.join(SCRIPTS, name + ".py")
        if mode == "capture":
            tt = os.path.join(d, "torch_trace")
            os.makedirs(tt, exist_ok=True)
            for f in os.listdir(tt):
                os.unlink(os.path.join(tt, f))
            cap = os.path.join(d, "capture")
            os.makedirs(cap, exist_ok=True)
            for f in os.listdir(cap):
                os.unlink(os.path.join(cap, f))
            t0 = time.time()
            p = subprocess.run(_capture_cmd(cap, script), capture_output=True, text=True,
                               env=dict(env, TORCH_TRACE=tt), timeout=SCRIPT_TIMEOUT)
            write_json(os.path.join(d, "run.json"), {
                "exit": p.returncode, "seconds": round(time.time() - t0, 2), "torch": torch.__version__,
                "traces": sorted(os.listdir(cap)), "stderr_tail": tail(p.stderr, 30),
                "summary_lines": [l for l in p.stderr.split("\n") if l.startswith("shapegate capture: ")]})
            print(f"{version} {name}: exit {p.returncode}, {len(os.listdir(cap))} trace(s)", flush=True)
        else:
            fixes = [f for f in os.listdir(d) if f.startswith("fix-") and f.endswith((".py", ".json"))]
            for fix in sorted(fixes):
                n = fix[4:].rsplit(".", 1)[0]
                rd = os.path.join(d, f"refix-{n}")
                os.makedirs(rd, exist_ok=True)
                for f in os.listdir(rd):
                    os.unlink(os.path.join(rd, f))
                p = subprocess.run(_capture_cmd(rd, script, ["--dynamic-shapes", os.path.join(d, fix), "--call", n]),
                                   capture_output=True, text=True, env=env, timeout=SCRIPT_TIMEOUT)
                write_json(os.path.join(d, f"refix-{n}.json"), {
                    "exit": p.returncode, "traces": sorted(os.listdir(rd)), "stderr_tail": tail(p.stderr, 30)})
                print(f"{version} {name}: re-export with fix of call {n}: exit {p.returncode}", flush=True)


# ============================================================================ on the host

class Host:
    def __init__(self, binary, out):
        self.bin = binary
        self.out = out
        self.adapter = subprocess.run([binary, "trace", "--help"], capture_output=True).returncode == 0

    def check(self, path, *extra):
        p = subprocess.run([self.bin, "check", "--json", *extra, path], capture_output=True, text=True, timeout=600)
        try:
            j = json.loads(p.stdout)
        except ValueError:
            j = None
        return j, p.returncode, p.stderr.strip()

    def chroot(self, version, exp):
        env_key = "SG_REFENV_" + version.replace(".", "_")
        return os.environ.get(env_key) or exp["versions"][version]["chroot"]

    def in_chroot(self, chroot, *cmd, timeout=None):
        return subprocess.run(["bash", RUN_SH, chroot, *cmd], capture_output=True, text=True, timeout=timeout)


def chroot_problem(host, chroot, version):
    """None when the chroot runs this torch version, else why not."""
    try:
        p = host.in_chroot(chroot, "python3", "-c", "import torch; print(torch.__version__)", timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"cannot run {RUN_SH} {chroot}: {e}"
    if p.returncode != 0:
        return f"{RUN_SH} {chroot} python3 -c 'import torch' failed (exit {p.returncode}): {tail(p.stderr, 2)}"
    got = p.stdout.strip()
    if ".".join(got.split("+")[0].split(".")[:2]) != version:
        return f"{chroot} has torch {got}, expected {version}"
    return None


def evaluate(host, version, name, spec, vdir, corpus_root, fig):
    """(passed, [problems], row) for one script on one torch version."""
    probs = []
    run = read_json(os.path.join(vdir, name, "run.json"))
    calls = spec["calls"]
    row = {"name": name, "cells": []}
    if run is None:
        return False, ["no run.json: the capture step did not run"], row
    want_exit = 0 if all(per_version(c["torch"], version) == "ok" for c in calls) else 1
    if run["exit"] != want_exit:
        probs.append(f"script exit {run['exit']}, expected {want_exit}: {tail(run['stderr_tail'], 3)}")
    want_files = [f"{i}-{per_version(c['function'], version)}.json" for i, c in enumerate(calls, 1)]
    if run["traces"] != want_files:
        probs.append(f"traces {run['traces']}, expected {want_files}")
    if len(run["summary_lines"]) != len(calls):
        probs.append(f"{len(run['summary_lines'])} capture summary lines on stderr, expected {len(calls)}")

    # TORCH_TRACE log of the same run
    tt = os.path.join(vdir, name, "torch_trace")
    logs = [f for f in os.listdir(tt) if os.path.getsize(os.path.join(tt, f)) > 0] if os.path.isdir(tt) else []
    want_log = per_version(spec.get("torch_trace_log", True), version)
    if not logs and want_log:
        probs.append("no TORCH_TRACE log written")
    elif logs and not want_log:
        probs.append(f"a TORCH_TRACE log was written, expected none ({spec.get('torch_trace_why')})")
    elif logs:
        fig["tt_logs"] += 1
    else:
        fig["notes"].append(f"{version} {name}: no TORCH_TRACE log, as expected: {spec.get('torch_trace_why')}")

    for i, c in enumerate(calls, 1):
        cell = {}
        row["cells"].append(cell)
        tpath = os.path.join(vdir, name, "capture", want_files[i - 1])
        if not os.path.exists(tpath):
            continue
        trace = read_json(tpath) or {}
        outcome = (trace.get("capture") or {}).get("outcome")
        cell["torch"] = outcome
        if outcome != per_version(c["torch"], version):
            probs.append(f"call {i}: torch outcome {outcome}, expected {per_version(c['torch'], version)}")
        j, code, err = host.check(tpath)
        fig["checked"] += 1
        if j is None:
            probs.append(f"call {i}: shapegate check gave no JSON (exit {code}): {err}")
            continue
        verdict = j["verdict"]
        cell["verdict"] = verdict
        write_json(os.path.join(vdir, name, f"check-{i}.json"), j)
        want = per_version(c["verdict"], version)
        if verdict != want:
            probs.append(f"call {i}: verdict {verdict}, expected {want}")
        else:
            fig["verdict_ok"] += 1

        # the TORCH_TRACE log of the same run (check --spec S [--frame N] DIR), with the spec the
        # user gave, in the form the log's trace matches (log_spec: by position where the log
        # names arguments by position only)
        if host.adapter and logs:
            spec_file = os.path.join(vdir, name, f"spec-{i}.json")
            frame = ["--frame", str(i)] if len(calls) > 1 else []
            p = subprocess.run([host.bin, "trace", *frame, tt], capture_output=True, text=True, timeout=600)
            try:
                log_trace = json.loads(p.stdout)
            except ValueError:
                log_trace = None
            write_json(spec_file, log_spec(trace, log_trace))
            extra = ["--spec", spec_file] + frame
            tj, tcode, terr = host.check(tt, *extra)
            fig["tt_compared"] += 1
            log_gap = c.get("log_known_gap")
            if (tj or {}).get("verdict") != verdict and log_gap:
                fig["known_gaps"].append(f"{version} {name} call {i}: TORCH_TRACE log checks "
                                         f"{(tj or {}).get('verdict')}, the capture {verdict}: {log_gap}")
            elif (tj or {}).get("verdict") != verdict:
                probs.append(f"call {i}: TORCH_TRACE log checks {(tj or {}).get('verdict')} (exit {tcode}: {terr}), "
                             f"the capture {verdict}")
            else:
                if log_gap:
                    probs.append(f"call {i}: known gap closed (the log agrees now): update expected.json")
                fig["tt_agree"] += 1

        # the corpus folder of the same scenario
        if spec.get("corpus") and i == 1:
            folder = os.path.join(corpus_root, spec["corpus"])
            case = read_json(os.path.join(folder, "case.json")) or {}
            if not case:
                probs.append(f"corpus case {folder} missing")
            elif bool(case.get("strict")) != bool(trace.get("strict")):
                cell["corpus"] = "strict differs"
                fig["corpus_strict_differs"] += 1
            else:
                cj, ccode, cerr = host.check(folder)
                fig["corpus_compared"] += 1
                cv = (cj or {}).get("verdict")
                if cv != verdict:
                    probs.append(f"call {i}: verdict {verdict}, the corpus folder {spec['corpus']} gives {cv}")
                    cell["corpus"] = f"DIFFERS ({cv})"
                else:
                    fig["corpus_agree"] += 1
                    cell["corpus"] = "="
                mine = sorted(v["dim"] for v in j.get("violations", []))
                theirs = sorted(v["dim"] for v in (cj or {}).get("violations", []))
                fig["corpus_dims_agree"] += mine == theirs
                if mine != theirs:
                    fig["notes"].append(f"{version} {name}: refuted dims {mine}, corpus {theirs}")
                if j.get("suggested_fixes") == (cj or {}).get("suggested_fixes"):
                    fig["corpus_fix_agree"] += 1
                else:
                    fig["notes"].append(f"{version} {name}: fix {j.get('suggested_fixes')}, corpus {(cj or {}).get('suggested_fixes')}")
                g_mine = sorted(g["expr"] for g in trace.get("guards", []))
                g_corpus = corpus_guard_exprs(folder)
                fig["corpus_guards_agree"] += g_mine == g_corpus
                if g_mine != g_corpus:
                    fig["notes"].append(f"{version} {name}: guards {g_mine}, corpus {g_corpus}")

        # the printed fix, re-exported in torch
        fx = j.get("fixes") or {}
        want_fix = per_version(c.get("fix", False), version)
        from_report = c.get("reexport_from") == "report"
        fix_file = os.path.join(vdir, name, f"fix-{i}.json" if from_report else f"fix-{i}.py")
        for stale in (f"fix-{i}.json", f"fix-{i}.py"):
            if os.path.join(vdir, name, stale) != fix_file and os.path.exists(os.path.join(vdir, name, stale)):
                os.unlink(os.path.join(vdir, name, stale))
        gap = c.get("known_gap")
        if want_fix and gap:
            if fx.get("verified"):
                probs.append(f"call {i}: known gap closed (a verified fix is offered now): update expected.json")
            else:
                cell["fix"] = "known gap"
                fig["known_gaps"].append(f"{version} {name} call {i}: {gap}")
        elif want_fix:
            fig["fix_expected"] += 1
            if not (fx.get("verified") and fx.get("python")):
                probs.append(f"call {i}: no verified fix (notes: {fx.get('notes')})")
            else:
                if from_report:
                    write_json(fix_file, j)
                    fig["notes"].append(f"{version} {name} call {i}: re-exported from the report, not the printed "
                                        f"Python: {c.get('why')}")
                else:
                    with open(fix_file, "w") as fh:
                        fh.write(fx["python"])
                cell["fix"] = "pending"
        elif os.path.exists(fix_file):
            os.unlink(fix_file)
    return not probs, probs, row


def corpus_guard_exprs(folder):
    g = read_json(os.path.join(folder, "guards.json")) or {}
    i = g.get("main_shape_env_index")
    if i is None:
        return []
    se = g["shape_envs"][i]
    out = [x["expr"] for x in se.get("guards", [])]
    for lst in (se.get("deferred_runtime_asserts") or {}).values():
        out += [x["expr"] for x in lst]
    return sorted(out)


def evaluate_refix(host, version, name, spec, vdir, fig):
    probs = []
    for i, c in enumerate(spec["calls"], 1):
        if not any(os.path.exists(os.path.join(vdir, name, f"fix-{i}{ext}")) for ext in (".py", ".json")):
            continue
        r = read_json(os.path.join(vdir, name, f"refix-{i}.json"))
        if r is None:
            probs.append(f"call {i}: the fix was not re-exported")
            continue
        later_fail = any(per_version(x["torch"], version) == "error" for x in spec["calls"][i:])
        if r["exit"] != 0 and not later_fail:
            probs.append(f"call {i}: re-export with the fix exited {r['exit']}: {tail(r['stderr_tail'], 4)}")
            continue
        fn = per_version(c["function"], version)
        tpath = os.path.join(vdir, name, f"refix-{i}", f"{i}-{fn}.json")
        trace = read_json(tpath) or {}
        if (trace.get("capture") or {}).get("outcome") != "ok":
            probs.append(f"call {i}: re-export with the fix did not succeed in torch: {tail(r['stderr_tail'], 4)}")
            continue
        fig["fix_reexported"] += 1
        j, code, err = host.check(tpath)
        if (j or {}).get("verdict") != "ok":
            probs.append(f"call {i}: the re-exported trace checks {(j or {}).get('verdict')} (exit {code}) {err}")
        else:
            fig["fix_recheck_ok"] += 1
    return probs


def host_main(argv):
    args = list(argv)

    def opt(flag, default=None):
        if flag in args:
            k = args.index(flag)
            v = args[k + 1]
            del args[k:k + 2]
            return v
        return default
    binary = opt("--bin") or os.environ.get("SHAPEGATE_BIN") or os.path.join(ROOT, "build", "shapegate")
    out = opt("--out", os.path.join("build", "e2e"))
    os.chdir(ROOT)
    out = rel(os.path.abspath(out))
    if out.startswith(".."):
        sys.exit("e2e: --out must be inside the checkout (the chroot sees only the checkout)")
    exp = load_expected()
    versions = (opt("--versions") or ",".join(exp["versions"])).split(",")
    names = args or sorted(exp["scripts"])
    unknown = [n for n in names if n not in exp["scripts"]]
    if unknown:
        sys.exit(f"e2e: unknown script(s): {', '.join(unknown)}")
    missing = sorted(set(f[:-3] for f in os.listdir(SCRIPTS) if f.endswith(".py")) - set(exp["scripts"]))
    if missing:
        sys.exit(f"e2e: scripts without an entry in expected.json: {', '.join(missing)}")
    binary = os.path.abspath(binary)
    p = subprocess.run([binary, "--version"], capture_output=True, text=True) if os.path.exists(binary) else None
    if p is None or p.returncode != 0:
        print(f"e2e: FAIL: the shapegate binary {binary} does not run; build it or pass --bin")
        print(f"0 passed, {len(names) * len(versions)} failed")
        return 1
    host = Host(binary, out)
    print(f"e2e: {len(names)} scripts x torch {', '.join(versions)}; {p.stdout.strip()} ({rel(binary)}); "
          f"outputs in {out}/", flush=True)

    passed = failed = 0
    table = []
    figures = {}
    for v in versions:
        fig = {k: 0 for k in ("checked", "verdict_ok", "corpus_compared", "corpus_agree", "corpus_dims_agree",
                              "corpus_fix_agree", "corpus_guards_agree", "corpus_strict_differs", "fix_expected",
                              "fix_reexported", "fix_recheck_ok", "tt_logs", "tt_compared", "tt_agree")}
        fig["notes"] = []
        fig["known_gaps"] = []
        figures[v] = fig
        chroot = host.chroot(v, exp)
        why = chroot_problem(host, chroot, v)
        if why:
            print(f"e2e: FAIL: torch {v}: chroot unusable: {why}")
            print(f"e2e:   build it with: SUITE={exp['versions'][v]['suite']} tools/refenv_build.sh {chroot}")
            failed += len(names)
            continue
        vdir = os.path.join(out, v)
        os.makedirs(vdir, exist_ok=True)
        t0 = time.time()
        p = host.in_chroot(chroot, "env", "PYTHONPATH=python", "python3", "tests/e2e/run.py", "--inside",
                           "capture", vdir, v, *names)
        if p.returncode != 0:
            print(f"e2e: FAIL: torch {v}: the capture step failed (exit {p.returncode}):\n{tail(p.stderr, 20)}")
            failed += len(names)
            continue
        t_capture = time.time() - t0
        results = {}
        for n in names:
            results[n] = evaluate(host, v, n, exp["scripts"][n], vdir, exp["versions"][v]["corpus"], fig)
        t0 = time.time()
        p = host.in_chroot(chroot, "env", "PYTHONPATH=python", "python3", "tests/e2e/run.py", "--inside",
                           "refix", vdir, v, *names)
        if p.returncode != 0:
            print(f"e2e: FAIL: torch {v}: the re-export step failed (exit {p.returncode}):\n{tail(p.stderr, 20)}")
        t_refix = time.time() - t0
        for n in names:
            ok, probs, row = results[n]
            probs = probs + evaluate_refix(host, v, n, exp["scripts"][n], vdir, fig)
            for i, cell in enumerate(row["cells"], 1):
                if cell.get("fix") == "pending":
                    cell["fix"] = "FAIL" if any(s.startswith(f"call {i}: re-export") or
                                                s.startswith(f"call {i}: the re-exported") or
                                                s.startswith(f"call {i}: the fix") for s in probs) else "ok"
            if probs:
                failed += 1
                for s in probs:
                    print(f"FAIL torch {v} {n}: {s}")
            else:
                passed += 1
            table.append((v, n, row, not probs))
        fig["seconds"] = (round(t_capture), round(t_refix))

    print()
    print(f"{'torch':6} {'script':28} {'call':>4}  {'torch':6} {'verdict':11} {'corpus':16} {'fix re-export':13} result")
    for v, n, row, ok in table:
        for i, cell in enumerate(row["cells"] or [{}], 1):
            print(f"{v:6} {n:28} {i:>4}  {cell.get('torch', '-'):6} {cell.get('verdict', '-'):11} "
                  f"{cell.get('corpus', '-'):16} {cell.get('fix', '-'):13} {'ok' if ok else 'FAIL'}")
    print()
    for v, fig in figures.items():
        if not fig["checked"]:
            continue
        print(f"torch {v}: {fig['verdict_ok']} of {fig['checked']} captured calls have the expected verdict; "
              f"corpus: {fig['corpus_agree']} of {fig['corpus_compared']} verdicts agree "
              f"(refuted dims {fig['corpus_dims_agree']}, fix lines {fig['corpus_fix_agree']}, "
              f"guards {fig['corpus_guards_agree']} identical; {fig['corpus_strict_differs']} not compared: "
              f"strictness differs); fixes: {fig['fix_reexported']} of {fig['fix_expected']} re-export in torch, "
              f"{fig['fix_recheck_ok']} of those check ok again; capture {fig['seconds'][0]} s, re-export {fig['seconds'][1]} s")
        for note in fig["notes"]:
            print(f"  note: {note}")
        for gap in fig["known_gaps"]:
            print(f"  KNOWN GAP (asserted, not a pass of the product): {gap}")
        if host.adapter:
            print(f"torch {v}: TORCH_TRACE: {fig['tt_agree']} of {fig['tt_compared']} verdicts on the TORCH_TRACE "
                  f"log agree with the capture's")
        else:
            print(f"torch {v}: TORCH_TRACE: skipped: no TORCH_TRACE adapter yet ('shapegate trace' absent); "
                  f"{fig['tt_logs']} logs kept in {out}/{v}/*/torch_trace for it")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--inside":
        if len(sys.argv) < 5 or sys.argv[2] not in ("capture", "refix"):
            sys.exit("usage: run.py --inside capture|refix OUT VERSION [SCRIPT...]")
        inside(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    else:
        sys.exit(host_main(sys.argv[1:]))
