"""shapegate for Python: capture what torch.export recorded, check it, get the answer as objects.

    with shapegate.capture(out="sg"):          # or: python3 -m shapegate capture --out sg -- train.py
        torch.export.export(model, args, dynamic_shapes=spec)
    report = shapegate.check("sg/1-export.json")
    report.verdict, report.violations, report.verified_fix

    ep = shapegate.export(model, args, dynamic_shapes=spec)   # torch.export.export, plus
                                                              # shapegate's diagnosis when it raises

The capture part needs torch only (importing this package does not import torch). ``check`` and
``spec`` run the C engine through libshapegate.so (ctypes) when it is found, else the ``shapegate``
binary's ``--json`` (``shapegate._backend``); each report names the backend. See docs/capture.md.
"""

__version__ = "0.1.0"

import os

from . import trace
from ._backend import (BackendError, BackendNotFound, InternalError, InvalidInput, UsageError)
from .report import (CapturedCall, CheckReport, CoreItem, DimResult, Fixes, Inferred, SpecReport, Stats,
                     TorchFixes, Violation)
from .trace import TraceError

__all__ = [
    "capture", "check", "spec", "export", "load_trace", "write_trace",
    "CapturedCall", "CheckReport", "SpecReport", "Violation", "DimResult", "CoreItem", "Inferred", "Fixes",
    "TorchFixes", "Stats", "TraceError", "BackendError", "BackendNotFound", "UsageError",
    "InvalidInput", "InternalError", "__version__",
]


def capture(out=None, *, quiet=False, dynamic_shapes=None):
    """Context manager: every torch.export.export / export_for_training / draft_export call in
    the block writes ``out/<n>-<function>.json`` (a v1 trace), whether it succeeds or raises.
    ``out=None`` keeps the traces in memory only (``.calls``). See ``shapegate._capture.Capture``."""
    from ._capture import Capture
    return Capture(out, quiet=quiet, dynamic_shapes=dynamic_shapes)


def load_trace(path):
    """Read and validate a v1 trace file; returns the dict."""
    return trace.load(path)


def write_trace(t, path):
    """Validate and write a v1 trace atomically."""
    trace.dump(t, path)


def _input_of(trace_or_path):
    """(object for TempInput, display name)."""
    path = getattr(trace_or_path, "path", None)
    tr = getattr(trace_or_path, "trace", None)
    if path is not None or tr is not None:        # a CapturedCall
        return (path, path) if path is not None else (tr, "(captured trace)")
    if isinstance(trace_or_path, (str, os.PathLike)):
        return os.fspath(trace_or_path), os.fspath(trace_or_path)
    if isinstance(trace_or_path, dict):
        return trace_or_path, "(trace)"
    raise TypeError(f"expected a path, a trace dict or a captured call, got {type(trace_or_path).__name__}")


def _run(command, trace_or_path, spec_obj, backend, options):
    from ._backend import TempInput, select
    be, note = select(backend)
    obj, shown = _input_of(trace_or_path)
    with TempInput(obj, "trace.json", trace.dumps) as path:
        if spec_obj is not None:
            with TempInput(spec_obj, "spec.json") as spec_path:
                options["spec_file"] = spec_path
                j, code = getattr(be, command)(path, options)
        else:
            j, code = getattr(be, command)(path, options)
    return j, code, be.describe() + (f" ({note})" if note else ""), shown


def check(trace_or_path, *, spec=None, dims=None, timeout_ms=None, query_timeout_ms=None, rlimit=None,
          infer=True, minimize=True, fix=True, backend=None, frame=None):
    """Decide a trace against its dynamic_shapes spec (docs/check.md); returns a CheckReport.

    ``trace_or_path``: a trace file, a capture folder, a trace dict or a captured call.
    ``spec``: a replacement spec in the structured form (a dict, or a JSON file's path);
    ``dims``: ``--dim`` items (``"x.0=dx:16..100"``); budgets in milliseconds and Z3 rlimit;
    ``backend``: None (best available), "cli" or "ctypes"; ``frame``: the export frame (from 1)
    of a TORCH_TRACE folder or log holding several."""
    opts = dict(dims=list(dims or ()), timeout_ms=timeout_ms, query_timeout_ms=query_timeout_ms,
                rlimit=rlimit, infer=infer, minimize=minimize, fix=fix, frame=frame)
    j, code, used, shown = _run("check", trace_or_path, spec, backend, opts)
    return CheckReport.from_json(j, backend=used, input=shown, exit_code=code)


def spec(trace_or_path, *, spec=None, dims=None, timeout_ms=None, query_timeout_ms=None, rlimit=None,
         backend=None, frame=None):
    """The widest valid dynamic_shapes for a trace, verified (``shapegate spec``); a SpecReport."""
    opts = dict(dims=list(dims or ()), timeout_ms=timeout_ms, query_timeout_ms=query_timeout_ms, rlimit=rlimit,
                frame=frame)
    j, code, used, shown = _run("spec", trace_or_path, spec, backend, opts)
    return SpecReport.from_json(j, backend=used, input=shown, exit_code=code)


def export(mod, args, kwargs=None, *, dynamic_shapes=None, **options):
    """``torch.export.export`` with the same arguments and result. When torch raises, the
    exception gains shapegate's diagnosis and its verified fix as a note (printed under torch's
    message in the traceback) and is re-raised. Extra keywords: ``shapegate_backend`` (None,
    "cli", "ctypes") and ``shapegate_out`` (a folder to keep the trace in)."""
    from ._export import export as _export
    return _export(mod, args, kwargs, dynamic_shapes=dynamic_shapes, **options)
