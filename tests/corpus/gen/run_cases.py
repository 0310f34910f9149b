"""Run named scenarios of a scenario module through the recording harness, as the corpus was made.

Runs INSIDE a reference chroot (from the top of the checkout):

    /work/shared/refenv/run.sh /root/refenv/forky  python3 tests/corpus/gen/run_cases.py [options] [NAME...]
    /work/shared/refenv/run.sh /root/refenv/trixie python3 tests/corpus/gen/run_cases.py [options] [NAME...]

Options:
    --module MOD     scenario module in this folder, registry style (default scenarios_12)
    --out DIR        output root (default tests/corpus/staging/cases for torch 2.14,
                     tests/corpus/staging/cases-<major.minor> for any other torch)
    --no-trace       skip the TORCH_TRACE pass (torch_trace.log.gz is not written)
    --plain-trace    store torch_trace.log instead of torch_trace.log.gz
    --real-paths     keep the scenario files' real paths in stack traces (default: /corpus/gen/...)
    --list           print the module's scenario names and exit
    NAME...          scenarios to run (default: all of the module's); `index.json` of DIR is
                     rewritten from every case folder in DIR afterwards

Per case, two fresh processes (as in the corpus, README "Structured trace"):
  1. the recording pass: harness.run_case(name, spec, DIR) writes case.json, guards.json and, for an
     export that succeeds, model.pt2, range_constraints.json, graph.txt; no TORCH_TRACE;
  2. the TORCH_TRACE pass: a process started with TORCH_TRACE=<fresh empty directory> builds the
     scenario and exports once (harness.trace_export: no warm-up, no patches); whatever torch wrote
     there (files concatenated in mtime order) becomes DIR/NAME/torch_trace.log.gz (gzip with mtime
     0, so equal logs give equal bytes); a case that never reaches export gets a gzip of 0 bytes.

Source paths: the harness, the registry and the scenario module are compiled under the names
/corpus/gen/<file> (their text registered with linecache), so the stack traces, `user_loc`s and
torch messages in the output read as in the corpus, whatever the checkout's path is.
"""

import gzip
import importlib.util
import json
import linecache
import os
import shutil
import subprocess
import sys
import tempfile

# a child process runs this file's text compiled as /corpus/gen/run_cases.py (BOOT below), so its
# folder comes from the environment there
HERE = os.environ.get("SG_CORPUS_GEN_DIR") or os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.dirname(HERE)
VIRTUAL_DIR = "/corpus/gen"
CASE_TIMEOUT_S = 900

# `python3 -c BOOT PATH ARG...`: run PATH's text as __main__ under the name /corpus/gen/<file>
BOOT = ("import linecache, sys\n"
        "path, fname = sys.argv[1], sys.argv[2]\n"
        "src = open(path, encoding='utf-8').read()\n"
        "linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)\n"
        "sys.argv = [fname] + sys.argv[3:]\n"
        "exec(compile(src, fname, 'exec'), {'__name__': '__main__', '__file__': fname})\n")


def load_module(modname, real_paths):
    """Import HERE/<modname>.py as module `modname` (compiled under /corpus/gen/<modname>.py unless
    real_paths)."""
    if modname in sys.modules:
        return sys.modules[modname]
    path = os.path.join(HERE, modname + ".py")
    with open(path, encoding="utf-8") as fh:
        src = fh.read()
    fname = path if real_paths else f"{VIRTUAL_DIR}/{modname}.py"
    if not real_paths:
        # mtime None: linecache.checkcache never drops the entry (the file does not exist there)
        linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    spec = importlib.util.spec_from_loader(modname, loader=None, origin=fname)
    mod = importlib.util.module_from_spec(spec)
    mod.__file__ = fname
    sys.modules[modname] = mod
    exec(compile(src, fname, "exec"), mod.__dict__)  # noqa: S102 - our own scenario files
    return mod


def default_out():
    import torch
    ver = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    sub = "cases" if ver == "2.14" else f"cases-{ver}"
    return os.path.join(CORPUS, "staging", sub)


def child(mode, modname, name, outroot, real_paths):
    """One case in this process: mode "record" (harness.run_case) or "trace" (harness.trace_export)."""
    sys.path.insert(0, HERE)
    load_module("registry", real_paths)
    harness = load_module("harness", real_paths)
    mod = load_module(modname, real_paths)
    spec = mod.CASES[name]
    if mode == "record":
        case = harness.run_case(name, spec, outroot)
        print(f"{name}: {case.get('outcome')} {case.get('error_type') or ''}".rstrip(), flush=True)
    else:
        harness.trace_export(name, spec)


def write_index(outroot):
    rows = []
    for n in sorted(os.listdir(outroot)):
        p = os.path.join(outroot, n, "case.json")
        if not os.path.isfile(p):
            continue
        with open(p, encoding="utf-8") as fh:
            c = json.load(fh)
        rows.append({"name": n, "outcome": c.get("outcome"), "error_type": c.get("error_type"),
                     "description": c.get("description"), "strict": c.get("strict"),
                     "tags": c.get("tags", [])})
    with open(os.path.join(outroot, "index.json"), "w", encoding="utf-8") as fh:
        json.dump(rows, fh, indent=1, ensure_ascii=False)
        fh.write("\n")
    return len(rows)


def store_trace(tdir, dest, plain):
    files = sorted((os.path.join(tdir, f) for f in os.listdir(tdir)), key=os.path.getmtime)
    data = b"".join(open(f, "rb").read() for f in files if os.path.isfile(f))
    if plain:
        with open(dest, "wb") as fh:
            fh.write(data)
        return len(data)
    with open(dest, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        gz.write(data)
    return len(data)


def main(argv):
    args = list(argv)

    def opt(flag, default=None, has_value=True):
        if flag not in args:
            return default
        i = args.index(flag)
        if not has_value:
            del args[i]
            return True
        if i + 1 >= len(args):
            sys.exit(f"run_cases: {flag} needs a value")
        v = args[i + 1]
        del args[i:i + 2]
        return v

    if "-h" in args or "--help" in args:
        print(__doc__)
        return 0
    if args and args[0] in ("--child-record", "--child-trace"):
        mode = "record" if args[0] == "--child-record" else "trace"
        child(mode, args[1], args[2], args[3], args[4] == "1")
        return 0
    modname = opt("--module", "scenarios_12")
    outroot = opt("--out")
    no_trace = opt("--no-trace", False, False)
    plain = opt("--plain-trace", False, False)
    real_paths = opt("--real-paths", False, False)
    list_only = opt("--list", False, False)
    unknown = [a for a in args if a.startswith("--")]
    if unknown:
        sys.exit(f"run_cases: unknown option {unknown[0]} (see the docstring)")
    sys.path.insert(0, HERE)
    load_module("registry", real_paths)
    mod = load_module(modname, real_paths)
    names = list(mod.CASES)
    if list_only:
        print("\n".join(names))
        return 0
    if args:
        bad = [a for a in args if a not in mod.CASES]
        if bad:
            sys.exit(f"run_cases: {modname} has no scenario {', '.join(bad)}")
        names = [n for n in names if n in args]
    outroot = os.path.abspath(outroot or default_out())
    os.makedirs(outroot, exist_ok=True)
    me = os.path.join(HERE, "run_cases.py")
    boot = [sys.executable, me] if real_paths else [sys.executable, "-c", BOOT, me, f"{VIRTUAL_DIR}/run_cases.py"]
    failed = []
    for name in names:
        env = {k: v for k, v in os.environ.items() if k != "TORCH_TRACE"}
        env["SG_CORPUS_GEN_DIR"] = HERE
        p = subprocess.run(boot + ["--child-record", modname, name, outroot, "1" if real_paths else "0"],
                           env=env, capture_output=True, text=True, timeout=CASE_TIMEOUT_S)
        line = (p.stdout.strip().splitlines() or [""])[-1]
        if p.returncode != 0 or not os.path.isfile(os.path.join(outroot, name, "case.json")):
            failed.append(name)
            print(f"{name}: RECORDING FAILED (exit {p.returncode})\n{p.stderr[-3000:]}", flush=True)
            continue
        msg = line
        if not no_trace:
            tdir = tempfile.mkdtemp(prefix="torch_trace_")
            try:
                env["TORCH_TRACE"] = tdir
                t = subprocess.run(boot + ["--child-trace", modname, name, outroot, "1" if real_paths else "0"],
                                   env=env, capture_output=True, text=True, timeout=CASE_TIMEOUT_S)
                dest = os.path.join(outroot, name, "torch_trace.log" if plain else "torch_trace.log.gz")
                n = store_trace(tdir, dest, plain)
                msg += f"; trace {n} bytes" + ("" if t.returncode == 0 else f" (trace pass exit {t.returncode})")
            finally:
                shutil.rmtree(tdir, ignore_errors=True)
        print(msg, flush=True)
    total = write_index(outroot)
    print(f"{len(names) - len(failed)} of {len(names)} scenarios recorded into {outroot} ({total} cases in index.json)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
