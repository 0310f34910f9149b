"""python3 -m shapegate: argument handling, check/spec through the API, capture without torch."""

import os
import subprocess
import sys
import tempfile

from shapegate import __main__ as M

NEEDS_BINARY = True   # run.py --no-binary skips this module (inside a chroot)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = os.path.join(ROOT, "tests", "corpus", "cases")


def run(*args, **kw):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    env.update(kw.pop("env", {}))
    return subprocess.run([sys.executable, "-m", "shapegate", *args], capture_output=True, text=True,
                          env=env, cwd=kw.pop("cwd", ROOT), timeout=120)


def test_capture_arguments():
    a = M._parser().parse_args(["capture", "--out", "d", "--", "s.py", "--lr", "3", "-x"])
    assert (a.out, a.script, a.args, a.call) == ("d", "s.py", ["--lr", "3", "-x"], 1)
    a = M._parser().parse_args(["capture", "--out", "d", "--dynamic-shapes", "f.py", "--call", "2", "s.py", "a"])
    assert (a.dynamic_shapes, a.call, a.script, a.args) == ("f.py", 2, "s.py", ["a"])


def test_capture_missing_script_is_usage_error():
    p = run("capture", "--out", "/tmp/x", "--", "/nonexistent/s.py")
    assert p.returncode == 2 and "no such file" in p.stderr


def test_capture_without_torch_says_so():
    try:
        import torch  # noqa: F401
        return  # only meaningful where torch is absent (the host)
    except ImportError:
        pass
    with tempfile.TemporaryDirectory() as d:
        s = os.path.join(d, "s.py")
        with open(s, "w") as fh:
            fh.write("print('hi')\n")
        p = run("capture", "--out", os.path.join(d, "out"), "--", s)
        assert p.returncode == 2 and "torch cannot be imported" in p.stderr, p.stderr
        assert "hi" not in p.stdout   # the script does not run half-captured


def test_check_and_spec_commands():
    p = run("check", os.path.join(CASES, "err_check_ge"))
    assert p.returncode == 1, p.stderr
    assert "violations" in p.stdout and "dx = Dim('dx', min=16, max=100)" in p.stdout
    p = run("check", "--json", "--dim", "x.0=dx:16..64", os.path.join(CASES, "err_check_ge"))
    assert p.returncode == 0 and '"verdict": "ok"' in p.stdout
    p = run("check", "/nonexistent")
    assert p.returncode == 3 and p.stderr.startswith("shapegate check: ")
    p = run("spec", os.path.join(CASES, "ok_nested_dict_list"))
    assert p.returncode == 0 and "dynamic_shapes = {'inputs':" in p.stdout
    p = run("--version")
    assert p.returncode == 0 and p.stdout.startswith("shapegate-python ")
    assert run().returncode == 2


def test_replacement_file_forms():
    with tempfile.TemporaryDirectory() as d:
        py = os.path.join(d, "fix.py")
        with open(py, "w") as fh:
            fh.write("dynamic_shapes = {'x': {0: 8}}\n")
        assert M._load_replacement(py) == {"x": {0: 8}}
        bad = os.path.join(d, "bad.py")
        with open(bad, "w") as fh:
            fh.write("spec = 1\n")
        try:
            M._load_replacement(bad)
            raise AssertionError("accepted a file without dynamic_shapes")
        except ValueError as e:
            assert "defines no 'dynamic_shapes'" in str(e)
        js = os.path.join(d, "r.json")
        with open(js, "w") as fh:
            fh.write('{"fixes": {"verified": false, "spec": null}}')
        try:
            M._load_replacement(js)
            raise AssertionError("accepted an unverified fix")
        except ValueError as e:
            assert "no verified fix" in str(e)
