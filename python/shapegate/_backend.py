"""How ``shapegate.check`` / ``shapegate.spec`` reach the C engine.

Two backends, one interface (``check(path, options) -> (json, exit)``, ``spec(...)``):

- ``CliBackend``: runs the ``shapegate`` binary (``SHAPEGATE_BIN``, else ``shapegate`` on PATH)
  with ``--json`` and reads its output contract (docs/check.md "Output"). Exit codes 0, 1 and 4
  are answers; 2, 3 and 5 raise ``UsageError``, ``InvalidInput`` and ``InternalError`` with the
  binary's one-line message.
- ``CtypesBackend``: libshapegate.so through ctypes. **Not enabled**: the library's handle API
  (issue 13) is not final, so every call raises NotImplementedError. ``select()`` never picks it
  on its own; a report made while a library is present says so in its ``backend`` text.

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
    """libshapegate.so: $SHAPEGATE_LIB, else the dynamic linker's search; None if absent."""
    env = os.environ.get(ENV_LIB)
    if env:
        return env if os.path.isfile(env) else None
    name = ctypes.util.find_library("shapegate")
    return name


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


class CtypesBackend:
    """libshapegate.so through ctypes: waits for the library API of issue 13. Not enabled."""

    name = "ctypes"
    ENABLED = False

    def __init__(self, library):
        self.library = library

    def describe(self):
        return f"ctypes: {self.library}"

    def _unavailable(self):
        raise NotImplementedError(
            "the ctypes backend over libshapegate.so is not implemented yet (the library API of "
            "issue 13 is not final); use the CLI backend (shapegate on PATH or $SHAPEGATE_BIN)")

    def check(self, path, options):
        self._unavailable()

    def spec(self, path, options):
        self._unavailable()


def select(preference=None):
    """``(backend, note)``. ``preference``: None (the best available), "cli" or "ctypes".
    The note says what else was found (a library the ctypes backend cannot use yet)."""
    if preference not in (None, "cli", "ctypes"):
        raise ValueError(f"unknown backend {preference!r} (cli or ctypes)")
    lib = find_library()
    if preference == "ctypes" or (preference is None and lib and CtypesBackend.ENABLED):
        if not lib:
            raise BackendNotFound("libshapegate.so not found (set SHAPEGATE_LIB)")
        return CtypesBackend(lib), ""
    binary = find_binary()
    if not binary:
        raise BackendNotFound(
            "no shapegate backend: the shapegate binary is not on PATH and $SHAPEGATE_BIN is not set"
            + (f" (libshapegate.so found at {lib}, but the ctypes backend is not enabled yet)" if lib else ""))
    note = f"libshapegate.so at {lib} not used: the ctypes backend is not enabled yet" if lib else ""
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
