"""``shapegate.export``: torch.export.export that explains its own failures. (``diagnosis`` needs
no torch: it reads a captured call's trace.)"""

import sys

from ._backend import BackendError


def export(mod, args, kwargs=None, *, dynamic_shapes=None, shapegate_backend=None, shapegate_out=None,
           **options):
    from ._capture import Capture, original
    with Capture(shapegate_out, quiet=True) as cap:
        try:
            return cap._record("export", original("export"),
                               (mod, args, kwargs), dict(options, dynamic_shapes=dynamic_shapes),
                               sys._getframe(1))
        except Exception as e:
            call = cap.calls[-1] if cap.calls else None
            note = diagnosis(call, shapegate_backend)
            if hasattr(e, "add_note"):
                e.add_note(note)
            else:  # Python < 3.11: no exception notes
                print(note, file=sys.stderr)
            raise


def diagnosis(call, backend=None):
    """The text added under torch's message: shapegate's verdict, the failing dims with their
    counterexamples and guards, and the verified fix (or why there is none)."""
    from . import check
    if call is None or call.trace is None:
        return "shapegate: no diagnosis (the export call was not captured)"
    try:
        report = check(call, backend=backend)
    except (BackendError, NotImplementedError) as e:
        return f"shapegate: no diagnosis: {e}"
    lines = ["", report.text()]
    if report.verdict == "ok" and call.error is not None:
        lines.append("shapegate proves every dim of dynamic_shapes valid for the guards torch recorded: "
                     "the failure is not in the spec (see torch's message above)")
    return "\n".join(lines)
