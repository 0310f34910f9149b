"""How ``shapegate.check`` / ``shapegate.spec`` reach the C engine.

Two backends, one interface (``check(path, options) -> (json, exit)``, ``spec(...)``):

- ``CliBackend``: runs the ``shapegate`` binary (``SHAPEGATE_BIN``, else ``shapegate`` on PATH)
  with ``--json`` and reads its output contract (docs/check.md "Output"). Exit codes 0, 1 and 4
  are answers; 2, 3 and 5 raise ``UsageError``, ``InvalidInput`` and ``InternalError`` with the
  binary's one-line message.
- ``CtypesBackend``: libshapegate.so through ctypes (``$SHAPEGATE_LIB``, else next to the
  binary, else the linker's search): the same library calls the CLI makes, in this process, the
  same JSON and exit codes. ``select()`` prefers it when the library loads; ``$SHAPEGATE_BACKEND``
  (``cli`` / ``ctypes``) forces one. Every report says which backend answered (``backend``).

Standard library only.
"""

import ctypes.util
import json
import os
import shutil
import subprocess
import tempfile

ENV_BIN = "SHAPEGATE_BIN"
ENV_LIB = "SHAPEGATE_LIB"


class BackendError(RuntimeError):
    """shapegate could not answer (no backend, a crash, output that is not the contract)."""


class BackendNotFound(BackendError):
    pass


class UsageError(BackendError):
    """Exit 2: an option the engine rejects (a bad --dim item, a spec that does not fit)."""


class InvalidInput(BackendError):
    """Exit 3: the trace or spec file cannot be read (missing, malformed, over a limit)."""


class InternalError(BackendError):
    """Exit 5, or an answer that is not the JSON contract."""


_EXIT_ERRORS = {2: UsageError, 3: InvalidInput, 5: InternalError}
ANSWER_EXITS = (0, 1, 4)


def options_to_argv(options, command):
    """CLI arguments for the options of ``shapegate.check`` / ``shapegate.spec``."""
    argv = []
    if options.get("spec_file") is not None:
        argv += ["--spec", os.fspath(options["spec_file"])]
    if options.get("frame"):
        argv += ["--frame", str(int(options["frame"]))]
    for item in options.get("dims") or ():
        argv += ["--dim", str(item)]
    for key, flag in (("timeout_ms", "--timeout"), ("query_timeout_ms", "--query-timeout"), ("rlimit", "--rlimit")):
        if options.get(key) is not None:
            v = options[key]
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{key} must be a non-negative integer, got {v!r}")
            argv += [flag, str(v)]
    if options.get("infer") is False:
        argv.append("--no-infer")
    if options.get("minimize") is False:
        argv.append("--no-minimize")
    if command == "check" and options.get("fix") is False:
        argv.append("--no-fix")
    return argv


def find_binary():
    """The shapegate binary: $SHAPEGATE_BIN, else ``shapegate`` on PATH; None if neither."""
    env = os.environ.get(ENV_BIN)
    if env:
        return env
    return shutil.which("shapegate")


def find_library():
    """libshapegate.so: $SHAPEGATE_LIB, else next to the shapegate binary (a build folder, or
    ../lib of an installed one), else the dynamic linker's search; None if absent."""
    env = os.environ.get(ENV_LIB)
    if env:
        return env if os.path.isfile(env) else None
    binary = find_binary()
    if binary:
        here = os.path.dirname(os.path.realpath(shutil.which(binary) or binary))
        for cand in (os.path.join(here, "libshapegate.so"), os.path.join(here, "..", "lib", "libshapegate.so")):
            if os.path.isfile(cand):
                return os.path.normpath(cand)
    return ctypes.util.find_library("shapegate")


class CliBackend:
    name = "cli"

    def __init__(self, binary):
        self.binary = binary

    def describe(self):
        return f"cli: {self.binary}"

    def version(self):
        p = subprocess.run([self.binary, "--version"], capture_output=True, text=True, timeout=30)
        return p.stdout.strip()

    def _run(self, command, path, options):
        argv = [self.binary, command, "--json"] + options_to_argv(options, command) + [os.fspath(path)]
        budget = options.get("timeout_ms")
        wait = None if budget == 0 else (budget if budget else 60000) / 1000 * 2 + 30
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=wait)
        except FileNotFoundError:
            raise BackendNotFound(f"shapegate binary not found: {self.binary}") from None
        except PermissionError:
            raise BackendNotFound(f"shapegate binary not executable: {self.binary}") from None
        except subprocess.TimeoutExpired:
            raise InternalError(f"shapegate {command} did not finish within {wait:.0f} s") from None
        err = (p.stderr.strip().splitlines() or [""])[-1]
        if p.returncode in _EXIT_ERRORS:
            raise _EXIT_ERRORS[p.returncode](err or f"shapegate {command} exited {p.returncode}")
        if p.returncode not in ANSWER_EXITS:
            raise InternalError(f"shapegate {command} exited {p.returncode}: {err}")
        try:
            j = json.loads(p.stdout)
        except ValueError:
            raise InternalError(f"shapegate {command} printed no JSON (exit {p.returncode}): {err}") from None
        if not isinstance(j, dict):
            raise InternalError(f"shapegate {command} printed JSON that is not an object")
        return j, p.returncode

    def check(self, path, options):
        return self._run("check", path, options)

    def spec(self, path, options):
        return self._run("spec", path, options)


class _Error(ctypes.Structure):
    """sg_error (include/shapegate/error.h)."""
    _fields_ = [("code", ctypes.c_int), ("col", ctypes.c_int), ("msg", ctypes.c_char * 256)]


class _CheckOptions(ctypes.Structure):
    """sg_check_options, version 2 (include/shapegate/engine.h); filled by sg_check_options_init,
    which refuses a version the library does not know."""
    _fields_ = [("version", ctypes.c_uint), ("timeout_ms", ctypes.c_uint), ("query_timeout_ms", ctypes.c_uint),
                ("query_rlimit", ctypes.c_uint64), ("infer", ctypes.c_bool), ("minimize_cores", ctypes.c_bool),
                ("fixes", ctypes.c_bool), ("torch_fixes", ctypes.c_bool), ("torch_message", ctypes.c_bool),
                ("cancel", ctypes.c_void_p)]


_OPTIONS_VERSION = 2
# include/shapegate/error.h status codes, and sg_verdict (report.h)
_ENOMEM, _EINVALID, _ELIMIT, _EUNSUPPORTED, _EIO = -4, -2, -3, -7, -8
_VERDICT_OK, _VERDICT_VIOLATIONS, _VERDICT_UNKNOWN, _VERDICT_INVALID_SPEC = 0, 1, 2, 3


class CtypesBackend:
    """libshapegate.so through ctypes: the same calls the CLI makes (sg_trace_load_frame, the spec
    overrides, sg_engine_check / sg_engine_spec, sg_report_to_json), in this process, with the
    CLI's exit codes and error classes. No hard wall-clock limit beyond the engine's own budgets
    (the CLI also runs a watchdog process)."""

    name = "ctypes"
    ENABLED = True

    def __init__(self, library):
        self.library = library
        try:
            lib = ctypes.CDLL(library)
        except OSError as e:
            raise BackendNotFound(f"libshapegate.so cannot be loaded: {e}") from None
        p, vp, err = ctypes.POINTER, ctypes.c_void_p, ctypes.POINTER(_Error)
        sigs = {
            "sg_version": ([], ctypes.c_char_p),
            "sg_free": ([vp], None),
            "sg_trace_load_frame": ([p(vp), ctypes.c_char_p, ctypes.c_uint, err], ctypes.c_int),
            "sg_trace_with_spec_file": ([p(vp), vp, ctypes.c_char_p, err], ctypes.c_int),
            "sg_trace_with_dims": ([p(vp), vp, p(ctypes.c_char_p), ctypes.c_size_t, err], ctypes.c_int),
            "sg_trace_free": ([vp], None),
            "sg_check_options_init": ([p(_CheckOptions), ctypes.c_uint], ctypes.c_int),
            "sg_engine_new": ([p(vp), vp, err], ctypes.c_int),
            "sg_engine_free": ([vp], None),
            "sg_engine_check": ([vp, vp, p(_CheckOptions), p(vp), err], ctypes.c_int),
            "sg_engine_spec": ([vp, vp, p(_CheckOptions), p(vp), err], ctypes.c_int),
            "sg_report_free": ([vp], None),
            "sg_report_verdict": ([vp], ctypes.c_int),
            "sg_report_fixes_verified": ([vp], ctypes.c_bool),
            "sg_report_fixes_recheck": ([vp], ctypes.c_int),
            "sg_report_to_json": ([p(vp), vp, ctypes.c_uint, err], ctypes.c_int),
        }
        for fname, (args, res) in sigs.items():
            try:
                fn = getattr(lib, fname)
            except AttributeError:
                raise BackendNotFound(f"{library} is not a shapegate library this package can use (no {fname})") from None
            fn.argtypes, fn.restype = args, res
        probe = _CheckOptions()
        if lib.sg_check_options_init(ctypes.byref(probe), _OPTIONS_VERSION) != 0:
            raise BackendNotFound(f"{library} does not know check options version {_OPTIONS_VERSION}")
        self._lib = lib

    def describe(self):
        return f"ctypes: {self.library}"

    def version(self):
        return "shapegate " + self._lib.sg_version().decode()

    @staticmethod
    def _fail(cls, err, what=""):
        msg = err.msg.decode("utf-8", "replace")
        raise cls(f"{what}{msg}" if msg else f"{what}error {err.code}")

    def _options(self, command, options):
        o = _CheckOptions()
        self._lib.sg_check_options_init(ctypes.byref(o), _OPTIONS_VERSION)
        for key, field in (("timeout_ms", "timeout_ms"), ("query_timeout_ms", "query_timeout_ms"),
                           ("rlimit", "query_rlimit")):
            v = options.get(key)
            if v is not None:
                if isinstance(v, bool) or not isinstance(v, int) or v < 0 or (field != "query_rlimit" and v > 0xFFFFFFFF):
                    raise ValueError(f"{key} must be a non-negative integer, got {v!r}")
                setattr(o, field, v)
        if options.get("infer") is False:
            o.infer = False
        if options.get("minimize") is False:
            o.minimize_cores = False
        o.fixes = not (command == "check" and options.get("fix") is False)
        o.torch_fixes = o.torch_message = True   # what the CLI's --json asks for
        return o

    def _run(self, command, path, options):
        lib = self._lib
        opts = self._options(command, options)
        err = _Error()
        t, t2, eng, rep, text = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        frame = options.get("frame") or 0
        try:
            rc = lib.sg_trace_load_frame(ctypes.byref(t), os.fsencode(os.fspath(path)), frame, ctypes.byref(err))
            if rc:
                self._fail(InternalError if rc == _ENOMEM else InvalidInput, err, f"{os.fspath(path)}: ")
            if options.get("spec_file") is not None:
                rc = lib.sg_trace_with_spec_file(ctypes.byref(t2), t, os.fsencode(os.fspath(options["spec_file"])),
                                                 ctypes.byref(err))
                if rc:
                    cls = InternalError if rc == _ENOMEM else InvalidInput if rc in (_EIO, _ELIMIT) else UsageError
                    self._fail(cls, err, "--spec ")
                lib.sg_trace_free(t)
                t, t2 = t2, ctypes.c_void_p()
            dims = [str(d).encode() for d in options.get("dims") or ()]
            if dims:
                arr = (ctypes.c_char_p * len(dims))(*dims)
                rc = lib.sg_trace_with_dims(ctypes.byref(t2), t, arr, len(dims), ctypes.byref(err))
                if rc:
                    self._fail(InternalError if rc == _ENOMEM else UsageError, err)
                lib.sg_trace_free(t)
                t, t2 = t2, ctypes.c_void_p()
            run = lib.sg_engine_check if command == "check" else lib.sg_engine_spec
            if lib.sg_engine_new(ctypes.byref(eng), None, ctypes.byref(err)) != 0:
                self._fail(InternalError, err)
            rc = run(eng, t, ctypes.byref(opts), ctypes.byref(rep), ctypes.byref(err))
            if rc:
                cls = InvalidInput if rc in (_EINVALID, _ELIMIT, _EUNSUPPORTED, _EIO) else InternalError
                self._fail(cls, err, f"{os.fspath(path)}: ")
            if lib.sg_report_to_json(ctypes.byref(text), rep, 0, ctypes.byref(err)) != 0:
                self._fail(InternalError, err)
            j = json.loads(ctypes.string_at(text).decode("utf-8"))
            if command == "check":
                v = lib.sg_report_verdict(rep)
                code = 0 if v == _VERDICT_OK else 4 if v == _VERDICT_UNKNOWN else 1
            else:
                code = (0 if lib.sg_report_fixes_verified(rep)
                        else 1 if lib.sg_report_fixes_recheck(rep) == _VERDICT_INVALID_SPEC else 4)
            return j, code
        finally:
            lib.sg_free(text)
            lib.sg_report_free(rep)
            lib.sg_engine_free(eng)
            lib.sg_trace_free(t2)
            lib.sg_trace_free(t)

    def check(self, path, options):
        return self._run("check", path, options)

    def spec(self, path, options):
        return self._run("spec", path, options)


ENV_BACKEND = "SHAPEGATE_BACKEND"


def select(preference=None):
    """``(backend, note)``. ``preference``: None (``$SHAPEGATE_BACKEND`` if set, else the best
    available: the library when it is found and loads, else the binary), "cli" or "ctypes".
    The note says why a library that was found is not used."""
    if preference is None and os.environ.get(ENV_BACKEND):
        preference = os.environ[ENV_BACKEND]
    if preference not in (None, "cli", "ctypes"):
        raise ValueError(f"unknown backend {preference!r} (cli or ctypes)")
    lib = find_library()
    note = ""
    if preference == "ctypes":
        if not lib:
            raise BackendNotFound("libshapegate.so not found (set SHAPEGATE_LIB, or put it next to the shapegate binary)")
        return CtypesBackend(lib), ""
    if preference is None and lib:
        try:
            return CtypesBackend(lib), ""
        except BackendNotFound as e:
            note = f"{e}; using the CLI"
    binary = find_binary()
    if not binary:
        raise BackendNotFound(
            "no shapegate backend: libshapegate.so was not found and the shapegate binary is not on PATH "
            "and $SHAPEGATE_BIN is not set" + (f" ({note})" if note else ""))
    return CliBackend(binary), note


class TempInput:
    """A path for the engine: a path as given, or an object written by ``render`` (text) to a
    temporary file ``name`` that is removed on exit."""

    def __init__(self, obj, name, render=json.dumps):
        self.obj = obj
        self.name = name
        self.render = render
        self._dir = None

    def __enter__(self):
        if isinstance(self.obj, (str, os.PathLike)):
            return os.fspath(self.obj)
        self._dir = tempfile.TemporaryDirectory(prefix="shapegate-")
        path = os.path.join(self._dir.name, self.name)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.render(self.obj))
        return path

    def __exit__(self, *exc):
        if self._dir is not None:
            self._dir.cleanup()
        return False
