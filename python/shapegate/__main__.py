"""python3 -m shapegate: capture a script's torch.export calls; check or spec a trace.

    python3 -m shapegate capture --out DIR [--quiet] [--dynamic-shapes FILE [--call N]] -- SCRIPT.py [ARGS...]
    python3 -m shapegate check [--json] [--dim ITEM]... [--spec FILE] [--backend cli|ctypes] TRACE
    python3 -m shapegate spec [--json] [--backend cli|ctypes] TRACE

``capture`` runs SCRIPT.py as ``python3 SCRIPT.py ARGS`` would (``__main__``, ``sys.argv``,
``sys.path[0]``), writes one trace per export call into DIR and exits with the script's own
status, printing its traceback as Python would when it raises. ``--dynamic-shapes FILE``
replaces the ``dynamic_shapes`` of export call N (default 1) by FILE's: a Python file that
defines ``dynamic_shapes`` (what ``shapegate check --python`` prints), or a JSON file holding a
structured spec, ``{"dynamic_shapes": ...}`` or a whole ``check --json`` report (its fixed spec).

Exit codes of capture: the script's; 2 for a usage error or when torch cannot be imported.
check / spec: the engine's (0 ok, 1 refuted, 4 unknown, 2 usage, 3 unreadable input, 5 internal).
"""

import argparse
import json
import os
import runpy
import sys


def _parser():
    p = argparse.ArgumentParser(prog="python3 -m shapegate", description=__doc__.split("\n\n")[0])
    p.add_argument("--version", action="store_true", help="print the package version")
    sub = p.add_subparsers(dest="command")

    c = sub.add_parser("capture", help="run a script and write one trace per torch.export call")
    c.add_argument("--out", required=True, metavar="DIR", help="folder for <n>-<function>.json")
    c.add_argument("--quiet", action="store_true", help="no summary line per capture")
    c.add_argument("--dynamic-shapes", metavar="FILE", help="replace call N's dynamic_shapes by FILE's")
    c.add_argument("--call", type=int, default=1, metavar="N", help="the export call --dynamic-shapes applies to")
    c.add_argument("script", metavar="SCRIPT.py")
    c.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS")

    for name in ("check", "spec"):
        k = sub.add_parser(name, help=f"shapegate {name} a trace, through the Python API")
        k.add_argument("input", metavar="TRACE")
        k.add_argument("--json", action="store_true", help="print the engine's JSON")
        k.add_argument("--backend", choices=("cli", "ctypes"))
        k.add_argument("--dim", action="append", default=[], metavar="ITEM")
        k.add_argument("--spec", metavar="FILE")
    return p


def _load_replacement(path):
    """The replacement spec of --dynamic-shapes FILE: an object, or a function of the call's
    own spec (JSON: the structured form follows the original's containers)."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if path.endswith(".py"):
        ns = {"__name__": "__shapegate_spec__", "__file__": path}
        exec(compile(text, path, "exec"), ns)  # noqa: S102 - the user's own spec file
        if "dynamic_shapes" not in ns:
            raise ValueError(f"{path}: defines no 'dynamic_shapes'")
        return ns["dynamic_shapes"]
    j = json.loads(text)
    if isinstance(j, dict) and isinstance(j.get("fixes"), dict):
        if not j["fixes"].get("verified"):
            raise ValueError(f"{path}: the report has no verified fix")
        j = j["fixes"]["spec"]
    elif isinstance(j, dict) and "dynamic_shapes" in j and len(j) == 1:
        j = j["dynamic_shapes"]
    from ._pyspec import from_structured
    return lambda like: from_structured(j, like=like)


def _user_traceback(tb, script):
    """The traceback as ``python3 SCRIPT.py`` would print it: from the script's first frame on,
    without shapegate's own frames (the export wrapper) in between."""
    target = os.path.abspath(script)
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    t = tb
    while t is not None and os.path.abspath(t.tb_frame.f_code.co_filename) != target:
        t = t.tb_next
    if t is None:
        return tb
    head = t
    while t is not None:
        nxt = t.tb_next
        while nxt is not None and os.path.abspath(nxt.tb_frame.f_code.co_filename).startswith(here):
            nxt = nxt.tb_next
        t.tb_next = nxt
        t = nxt
    return head


def cmd_capture(a):
    if a.args and a.args[0] == "--":
        a.args = a.args[1:]
    if not os.path.isfile(a.script):
        print(f"shapegate capture: {a.script}: no such file", file=sys.stderr)
        return 2
    try:
        import torch.export  # noqa: F401 - the capture needs it before the script runs (a bare
        # "import torch" also succeeds on any folder named torch in the working directory)
    except Exception as e:  # noqa: BLE001
        print(f"shapegate capture: torch cannot be imported in this Python ({sys.executable}): "
              f"{type(e).__name__}: {e}", file=sys.stderr)
        return 2
    from ._capture import Capture
    replacements = {}
    if a.dynamic_shapes:
        try:
            replacements[a.call] = _load_replacement(a.dynamic_shapes)
        except Exception as e:  # noqa: BLE001
            print(f"shapegate capture: --dynamic-shapes {a.dynamic_shapes}: {type(e).__name__}: {e}", file=sys.stderr)
            return 2

    sys.argv = [a.script] + list(a.args)
    sys.path[0] = os.path.dirname(os.path.abspath(a.script))
    cap = Capture(a.out, quiet=a.quiet, dynamic_shapes=replacements)
    status = 0
    with cap:
        try:
            runpy.run_path(a.script, run_name="__main__")
        except SystemExit as e:
            status = e.code
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: BLE001 - the script's own failure, reported as Python would
            tb = _user_traceback(e.__traceback__, a.script)
            sys.excepthook(type(e), e.with_traceback(tb), tb)
            status = 1
    if not cap.calls and not a.quiet:
        print(f"shapegate capture: {a.script} made no torch.export call; nothing written to {a.out}",
              file=sys.stderr)
    return status


def cmd_check_or_spec(a):
    import shapegate
    fn = shapegate.check if a.command == "check" else shapegate.spec
    try:
        report = fn(a.input, spec=a.spec, dims=a.dim, backend=a.backend)
    except shapegate.BackendError as e:
        print(f"shapegate {a.command}: {e}", file=sys.stderr)
        return {shapegate.UsageError: 2, shapegate.InvalidInput: 3}.get(type(e), 5)
    except NotImplementedError as e:
        print(f"shapegate {a.command}: {e}", file=sys.stderr)
        return 5
    print(json.dumps(report.raw) if a.json else report.text())
    return report.exit_code


def main(argv=None):
    a = _parser().parse_args(argv)
    if a.version:
        from . import __version__
        print(f"shapegate-python {__version__}")
        return 0
    if a.command == "capture":
        return cmd_capture(a)
    if a.command in ("check", "spec"):
        return cmd_check_or_spec(a)
    _parser().print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
