"""shapegate.check / shapegate.spec through a backend, and the backend selection.

Needs the shapegate binary (run.py finds build/shapegate or $SHAPEGATE_BIN); no torch. run.py runs
this module once per backend ($SHAPEGATE_BACKEND = cli, then ctypes over the libshapegate.so next
to the binary, unless --no-ctypes); test_backends_agree compares the two directly.
"""

import json
import os
import tempfile

import shapegate
from shapegate import _backend, trace as T
from test_trace import DOC_EXAMPLE

NEEDS_BINARY = True   # run.py --no-binary skips this module (inside a chroot)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = os.path.join(ROOT, "tests", "corpus", "cases")
CASES26 = os.path.join(ROOT, "tests", "corpus", "cases-2.6")


def need_binary():
    b = _backend.find_binary()
    assert b and os.access(b, os.X_OK), "no shapegate binary: build it (build/shapegate) or set SHAPEGATE_BIN"
    return b


def raises(exc, fn, needle=""):
    try:
        fn()
    except exc as e:
        assert needle in str(e), f"{needle!r} not in {e}"
        return e
    raise AssertionError(f"{exc.__name__} not raised")


def test_check_corpus_violation_as_objects():
    need_binary()
    r = shapegate.check(os.path.join(CASES, "err_div_view_8"))
    assert r.verdict == "violations" and not r.ok and r.exit_code == 1
    assert r.backend.startswith(os.environ.get("SHAPEGATE_BACKEND", "cli") + ": ")
    (v,) = r.violations
    assert (v.dim, v.source, v.kind) == ("dx", "L['x'].size()[0]", "guard")
    assert v.counterexample == {"['x']": [17]}  # the failing shape nearest the example 16
    assert any(c.kind == "guard" and "% 8" in c.text for c in v.core)
    assert [d.status for d in r.dims] == ["refuted"] and r.refuted[0].name == "dx"
    inf = r.inferred["s77"]
    assert inf.range == (16, None) and inf.congruence == (8, 0) and inf.range_exact
    assert r.verified_fix == ["_dx = Dim('_dx', min=2)", "dx = 8*_dx"]
    assert r.fixes.torch.lines == ["_dx = Dim('_dx', min=1, max=oo)", "dx = 8*_dx"]
    assert r.fixes.torch.verdict == "ok"  # torch creates the root from 2, as its re-export does (docs/reexport.md)
    assert "dynamic_shapes = {'x': {0: 8*_dx}}" in r.fixes.python
    assert r.stats.queries > 0
    text = r.text()
    assert "violations" in text and "dx = 8*_dx" in text


def test_check_untraced_spec_repair():
    """A spec torch refused before tracing: the repair is untraced, never verified, never a verified fix."""
    need_binary()
    r = shapegate.check(os.path.join(CASES, "err_dim_same_name_diff_range"))
    assert r.verdict == "invalid_spec" and r.exit_code == 1
    assert r.fixes.untraced and not r.fixes.verified
    assert r.verified_fix == [] and r.fixed_dynamic_shapes() is None
    assert "dynamic_shapes = {'x': {0: d}, 'y': {0: d}}" in r.spec_repair
    assert any("before tracing" in n for n in r.fixes.notes)
    # a traced refutation's fix is verified, never untraced
    r = shapegate.check(os.path.join(CASES, "err_div_view_8"))
    assert r.fixes.verified and not r.fixes.untraced and r.spec_repair is None
    s = shapegate.spec(os.path.join(CASES, "err_dim_same_name_diff_range"))
    assert not s.verified and not s.untraced and s.exit_code == 1


def test_check_structural_spec_repair():
    """Specs torch refused for their structure or their Dims' examples: CheckReport.spec_repair is the
    rebuilt spec; a Dim torch refused to build is rewritten by repaired_Dim."""
    need_binary()
    r = shapegate.check(os.path.join(CASES, "spec_structure_dict_for_list"))
    assert r.verdict == "invalid_spec" and r.fixes.untraced and r.fixes.repaired
    assert "dynamic_shapes = {'xs': [{0: d}, {0: d}]}" in r.spec_repair
    r = shapegate.check(os.path.join(CASES, "pin_dim_min_eq_max"))
    assert r.fixes.untraced and "def repaired_Dim(" in r.spec_repair and "return 4" in r.spec_repair
    # examples that disagree for a shared Dim: split, and verified against the recorded guards
    r = shapegate.check(os.path.join(CASES, "err_shared_dim_example_mismatch"))
    assert r.fixes.verified and r.fixes.repaired and r.spec_repair is None
    assert "{'x': {0: d}, 'y': {0: d_1}}" in r.fixes.python


def test_check_ok_and_unknown_exit_codes():
    need_binary()
    r = shapegate.check(os.path.join(CASES, "ok_nested_dict_list"))
    assert r.ok and r.exit_code == 0 and r.violations == [] and r.verified_fix == []
    assert all(d.status == "proved" for d in r.dims)
    bad = shapegate.check(os.path.join(CASES, "err_dim_min_gt_max"))  # torch could not build the spec
    assert bad.verdict == "invalid_spec" and bad.exit_code == 1
    # unknown: a resource limit too small for Z3, no wall clock (deterministic)
    u = shapegate.check(os.path.join(ROOT, "tests", "data", "attacks", "floor_chain.json"), timeout_ms=0,
                        query_timeout_ms=0, rlimit=1000, fix=False)
    assert u.verdict == "unknown" and u.exit_code == 4
    assert all(d.status == "unknown" and "resource limit" in d.reason for d in u.dims)


def test_check_trace_dict_and_extra_keys():
    """A trace as a dict (written to a temporary file) with the optional keys the capture adds:
    the C reader ignores them."""
    need_binary()
    t = T.loads(DOC_EXAMPLE)
    t["capture"] = {"function": "torch.export.export", "call": 1, "call_site": "x.py:3"}
    t["exception"] = None
    r = shapegate.check(t)
    assert r.ok and r.input == "(trace)"
    t["exception"] = {"type": "X", "message": "y"}
    t["spec"]["torch_error"] = "torch._dynamo.exc.UserError"
    t["spec"]["torch_suggested_fixes"] = ["dx = Dim('dx', max=100)"]
    assert shapegate.check(t).ok


def test_check_overrides():
    need_binary()
    case = os.path.join(CASES, "err_check_ge")
    assert shapegate.check(case).verdict == "violations"
    assert shapegate.check(case, dims=["x.0=dx:16..64"]).ok
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "fix.json")
        with open(p, "w") as fh:
            json.dump({"x": {"0": {"name": "dx", "min": 16, "max": 64}}}, fh)
        assert shapegate.check(case, spec=p).ok
    assert shapegate.check(case, spec={"x": {"0": {"name": "dx", "min": 16, "max": 64}}}).ok
    assert shapegate.check(case, fix=False).fixes is None
    r = shapegate.check(case, infer=False, minimize=False, rlimit=1000000, timeout_ms=20000, query_timeout_ms=5000)
    assert r.verdict == "violations" and r.inferred == {}


def test_errors_map_to_exceptions():
    need_binary()
    raises(shapegate.InvalidInput, lambda: shapegate.check("/nonexistent/trace.json"))
    case = os.path.join(CASES, "err_check_ge")
    e = raises(shapegate.UsageError, lambda: shapegate.check(case, dims=["z.0=dx"]), "no tensor input 'z'")
    assert "\n" not in str(e)
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "bad.json")
        with open(p, "w") as fh:
            fh.write('{"format": "shapegate-trace", "version": 9}')
        raises(shapegate.InvalidInput, lambda: shapegate.check(p), "newer")
    raises(ValueError, lambda: shapegate.check(case, rlimit=-1))
    raises(TypeError, lambda: shapegate.check(42))


def test_spec_report():
    need_binary()
    s = shapegate.spec(os.path.join(CASES, "large_transformer_8layers_auto"))
    assert s.verified and s.exit_code == 0
    assert "dynamic_shapes = {'ids': {0: ids_0, 1: ids_1}" in s.python
    assert s.spec["ids"]["1"]["max"] == 64
    assert s.text() == s.python.rstrip("\n")


def test_torch_26_corpus_through_backend():
    need_binary()
    r = shapegate.check(os.path.join(CASES26, "ok_conv2d_stride2"))
    assert r.verdict == "violations" and {v.dim for v in r.violations} == {"H", "W"}
    assert r.fixes.verified


def _without(*names):
    saved = {k: os.environ.pop(k, None) for k in names}
    return saved


def _restore(saved):
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def test_missing_binary_and_unusable_library():
    saved = _without("SHAPEGATE_BIN", "PATH", "SHAPEGATE_BACKEND", "SHAPEGATE_LIB")
    try:
        os.environ["SHAPEGATE_LIB"] = "/nonexistent/libshapegate.so"
        os.environ["SHAPEGATE_BIN"] = "/nonexistent/shapegate"
        raises(shapegate.BackendNotFound, lambda: shapegate.check(os.path.join(CASES, "err_check_ge")),
               "/nonexistent/shapegate")
        del os.environ["SHAPEGATE_BIN"]
        os.environ["PATH"] = "/nonexistent"
        raises(shapegate.BackendNotFound, lambda: shapegate.check(os.path.join(CASES, "err_check_ge")),
               "not on PATH")
        raises(shapegate.BackendNotFound, lambda: shapegate.check(os.path.join(CASES, "err_check_ge"), backend="ctypes"),
               "libshapegate.so not found")
    finally:
        _restore(saved)
    saved = _without("SHAPEGATE_BACKEND", "SHAPEGATE_LIB")
    with tempfile.TemporaryDirectory() as d:
        lib = os.path.join(d, "libshapegate.so")
        open(lib, "w").close()     # not a shared object: found, cannot be loaded
        os.environ["SHAPEGATE_LIB"] = lib
        try:
            raises(shapegate.BackendNotFound, lambda: shapegate.check(os.path.join(CASES, "err_check_ge"), backend="ctypes"),
                   "cannot be loaded")
            if _backend.find_binary():
                be, note = _backend.select()
                assert be.name == "cli" and "cannot be loaded" in note
                r = shapegate.check(os.path.join(CASES, "err_check_ge"))
                assert r.backend.startswith("cli: ") and "cannot be loaded" in r.backend
        finally:
            _restore(saved)
    raises(ValueError, lambda: _backend.select("zmq"))


TT = os.path.join(ROOT, "tests", "data", "torch_trace")


def _both():
    lib = _backend.find_library()
    assert lib, "no libshapegate.so next to the binary (run.py --no-ctypes skips the ctypes backend)"
    return lib


def _same(a, b):
    """The two reports' JSON and exit codes, equal but for the time taken."""
    ja, jb = (dict(r.raw, stats=dict(r.raw.get("stats") or {}, seconds=None)) for r in (a, b))
    return (ja, a.exit_code) == (jb, b.exit_code)


def test_backends_agree():
    """The ctypes backend and the CLI give the same JSON and exit code, for reports and for errors."""
    need_binary()
    if os.environ.get("SHAPEGATE_NO_CTYPES"):
        return
    _both()
    cases = [os.path.join(CASES, c) for c in ("err_div_view_8", "ok_nested_dict_list", "err_dim_min_gt_max",
                                              "err_spec_bad_keys", "err_eq_add")]
    cases.append(os.path.join(CASES26, "ok_conv2d_stride2"))
    for c in cases:
        a = shapegate.check(c, backend="cli")
        b = shapegate.check(c, backend="ctypes")
        assert a.backend.startswith("cli: ") and b.backend.startswith("ctypes: ")
        assert _same(a, b), c
    a = shapegate.spec(os.path.join(CASES, "large_transformer_8layers_auto"), backend="cli")
    b = shapegate.spec(os.path.join(CASES, "large_transformer_8layers_auto"), backend="ctypes")
    assert _same(a, b)
    case = os.path.join(CASES, "err_check_ge")
    for be in ("cli", "ctypes"):
        assert shapegate.check(case, dims=["x.0=dx:16..64"], backend=be).ok
        raises(shapegate.UsageError, lambda: shapegate.check(case, dims=["z.0=dx"], backend=be), "no tensor input 'z'")
        raises(shapegate.InvalidInput, lambda: shapegate.check("/nonexistent/trace.json", backend=be), "No such file")
    # a TORCH_TRACE log with two export frames, frame 2 with the spec the user gave
    log = os.path.join(TT, "2.14", "two_exports.log.gz")
    spec2 = os.path.join(TT, "2.14", "two_exports-2.spec.json")
    if os.path.exists(log):
        for be in ("cli", "ctypes"):
            raises(shapegate.InvalidInput, lambda: shapegate.check(log, backend=be), "--frame")
        a = shapegate.check(log, frame=2, spec=spec2, backend="cli")
        b = shapegate.check(log, frame=2, spec=spec2, backend="ctypes")
        assert a.verdict == "violations" and _same(a, b)
