"""Runs the shapegate package's unit tests:
    python3 python/tests/run.py [--bin SHAPEGATE | --no-binary] [--no-ctypes] [MODULE...]

Each test_*.py here holds functions test_*(); a function passes when it returns without raising.
Modules that declare ``NEEDS_TORCH = True`` run only where torch imports (inside the reference
chroots); elsewhere they are listed as skipped, by name, never counted as passed. Modules that
declare ``NEEDS_BINARY = True`` run the shapegate binary (--bin, $SHAPEGATE_BIN, or
build/shapegate of this checkout) and fail when it is missing; --no-binary (inside a chroot,
where the Debian 12 binary cannot run) lists them as skipped instead.
Modules that need the binary run once per backend: the CLI, then ctypes over the libshapegate.so
next to the binary ($SHAPEGATE_BACKEND set for each run); --no-ctypes (a sanitizer build, whose
library cannot load into an uninstrumented python) runs the CLI only and says so.
Ends with the summary line ``N passed, N failed``; exit 1 when anything failed.
"""

import importlib
import os
import re
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main(argv):
    args = list(argv)
    no_binary = "--no-binary" in args
    if no_binary:
        args.remove("--no-binary")
    no_ctypes = "--no-ctypes" in args
    if no_ctypes:
        args.remove("--no-ctypes")
        os.environ["SHAPEGATE_NO_CTYPES"] = "1"
    if "--bin" in args:
        i = args.index("--bin")
        os.environ["SHAPEGATE_BIN"] = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    elif not os.environ.get("SHAPEGATE_BIN") and os.path.exists(os.path.join(ROOT, "build", "shapegate")):
        os.environ["SHAPEGATE_BIN"] = os.path.join(ROOT, "build", "shapegate")
    sys.path.insert(0, os.path.join(ROOT, "python"))
    sys.path.insert(0, HERE)
    try:
        import torch  # noqa: F401
        have_torch = True
    except Exception:  # noqa: BLE001
        have_torch = False
    names = args or sorted(f[:-3] for f in os.listdir(HERE) if f.startswith("test_") and f.endswith(".py"))
    passed = failed = 0
    skipped = []
    t0 = time.perf_counter()
    for name in names:
        with open(os.path.join(HERE, name + ".py"), encoding="utf-8") as fh:
            flags = set(re.findall(r"^(NEEDS_TORCH|NEEDS_BINARY) = True", fh.read(), re.M))
        if "NEEDS_TORCH" in flags and not have_torch:
            skipped.append(f"{name} (torch not importable here)")
            continue
        if "NEEDS_BINARY" in flags and no_binary:
            skipped.append(f"{name} (--no-binary)")
            continue
        mod = importlib.import_module(name)
        tests = [(n, f) for n, f in vars(mod).items() if n.startswith("test_") and callable(f)]
        backends = [None]
        if "NEEDS_BINARY" in flags:
            backends = ["cli"] + ([] if no_ctypes else ["ctypes"])
            if no_ctypes:
                skipped.append(f"{name} through ctypes (--no-ctypes)")
        for be in backends:
            if be:
                os.environ["SHAPEGATE_BACKEND"] = be
            for n, f in tests:
                label = f"{name}.{n}" + (f" [{be}]" if be else "")
                try:
                    f()
                except Exception:  # noqa: BLE001
                    failed += 1
                    print(f"FAIL {label}")
                    traceback.print_exc(limit=6, file=sys.stdout)
                else:
                    passed += 1
                    if os.environ.get("VERBOSE"):
                        print(f"ok   {label}")
            os.environ.pop("SHAPEGATE_BACKEND", None)
    where = "torch " + __import__("torch").__version__ if have_torch else "no torch"
    print(f"python {sys.version.split()[0]}, {where}, {time.perf_counter() - t0:.1f} s")
    if skipped:
        print(f"skipped: {', '.join(skipped)}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
