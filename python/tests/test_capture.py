"""Capture in real torch (inside the reference chroots): traces written per call, the user's
outcome untouched, aliases redirected and restored, strict and non-strict sources, replacement
specs, shapegate.export's note, and python3 -m shapegate capture's exit status."""

import collections
import dataclasses
import os
import subprocess
import sys
import tempfile

import torch
from torch.export import Dim
from torch.export import export as aliased_export

import shapegate
from shapegate import _capture, _torch_hooks as H, trace as T

NEEDS_TORCH = True
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
THIS = os.path.basename(__file__)


class View8(torch.nn.Module):
    def forward(self, x):
        return x.view(-1, 8)


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


def _raises(exc, fn):
    try:
        fn()
    except exc as e:
        return e
    raise AssertionError(f"{exc.__name__} not raised")


def test_one_trace_per_call_success_and_failure():
    with tempfile.TemporaryDirectory() as d:
        with shapegate.capture(out=d, quiet=True) as cap:
            ep = torch.export.export(View8(), (torch.randn(16),), dynamic_shapes={"x": {0: 8 * Dim("k", min=2)}}, strict=False)
            err = _raises(Exception, lambda: torch.export.export(View8(), (torch.randn(16),),
                                                                  dynamic_shapes={"x": {0: Dim("dx")}}, strict=False))
        assert type(err).__name__ == "UserError" and "Constraints violated" in str(err)
        assert sorted(os.listdir(d)) == ["1-export.json", "2-export.json"]
        assert [c.ok for c in cap.calls] == [True, False] and cap.calls[1].error is err
        assert cap.calls[0].result is ep
        ok, bad = (T.load(os.path.join(d, f)) for f in ("1-export.json", "2-export.json"))
        assert ok["capture"]["outcome"] == "ok" and ok.get("exception") is None
        assert bad["capture"]["outcome"] == "error" and bad["exception"]["type"] == "torch._dynamo.exc.UserError"
        assert bad["spec"]["torch_suggested_fixes"][-1] == "dx = 8*_dx"
        assert bad["exception"]["message"] == str(err)
        assert bad["capture"]["call_site"].endswith(f"{THIS}:{bad['capture']['call_site'].rsplit(':', 1)[1]}")
        (dim,) = bad["inputs"]
        assert dim["spec"] == {"kind": "dim", "name": "dx", "min": 0, "max": "int_oo"} and dim["size"] == 16
        locs = [g.get("user_loc", "") for g in bad["guards"]]
        assert locs and all("return x.view(-1, 8)  # " in l and THIS in l for l in locs), locs
    import torch.fx.experimental.symbolic_shapes as ss
    assert torch.export.export is _capture.original("export"), "torch.export.export not restored"
    assert not hasattr(ss.ShapeEnv.__init__, "__wrapped__"), "ShapeEnv.__init__ not restored"


def test_alias_in_callers_module_is_redirected_then_restored():
    with shapegate.capture(quiet=True) as cap:
        aliased_export(Add(), (torch.randn(4, 3), torch.randn(4, 3)),
                       dynamic_shapes={"x": {0: Dim("b")}, "y": {0: Dim("b")}}, strict=False)
    assert len(cap.calls) == 1 and cap.calls[0].path is None and cap.calls[0].trace["shape_env"]
    assert aliased_export is _capture.original("export")


def test_nested_capture_innermost_records():
    with shapegate.capture(quiet=True) as outer:
        with shapegate.capture(quiet=True) as inner:
            torch.export.export(Add(), (torch.randn(4, 3), torch.randn(4, 3)), strict=False)
        torch.export.export(Add(), (torch.randn(4, 3), torch.randn(4, 3)), strict=False)
    assert len(inner.calls) == 1 and len(outer.calls) == 1


def test_other_entry_point_named_in_file():
    name = "draft_export" if "draft_export" in H.entry_points() else "export_for_training"
    with tempfile.TemporaryDirectory() as d:
        with shapegate.capture(out=d, quiet=True) as cap:
            getattr(torch.export, name)(Add(), (torch.randn(4, 3), torch.randn(4, 3)),
                                        dynamic_shapes={"x": {0: Dim("b")}, "y": {0: Dim("b")}})
        assert os.listdir(d) == [f"1-{name}.json"], os.listdir(d)   # nested export calls not recorded twice
        t = cap.calls[0].trace
        assert t["capture"]["function"] == f"torch.export.{name}"
        assert [i["value"] for i in t["inputs"]][::2] == [t["inputs"][0]["value"]] * 2


def test_strict_and_non_strict_sources():
    for strict in (False, True):
        with shapegate.capture(quiet=True) as cap:
            torch.export.export(Add(), (torch.randn(4, 3), torch.randn(4, 3)),
                                dynamic_shapes={"x": {0: Dim("b")}, "y": {0: Dim("b")}}, strict=strict)
        t = cap.calls[0].trace
        assert t["strict"] is strict
        x0 = t["inputs"][0]
        assert x0["value"] and x0["traced_source"], x0
        sym = {s["name"]: s for s in t["symbols"]}
        assert x0["traced_source"] in sum((s["sources"] for s in sym.values()), []), (x0, t["symbols"])
        if strict or H.version_key() != "2.6":
            assert x0["source"] == "L['x'].size()[0]", x0
        else:
            assert x0["source"] == x0["traced_source"] == "L['args'][0][0].size()[0]", x0


def test_pytrees_dataclass_namedtuple_kwargs_and_non_tensors():
    @dataclasses.dataclass
    class Batch:
        a: torch.Tensor
        b: torch.Tensor

    try:
        torch.export.register_dataclass(Batch)
    except Exception:  # noqa: BLE001 - registered by an earlier run in this process
        pass
    Pair = collections.namedtuple("Pair", ["p", "q"])

    class M(torch.nn.Module):
        def forward(self, batch, pair, n: int, scale: float, *, mask=None, mode="sum", flag=True):
            return batch.a + batch.b + pair.p.sum() * n * scale + mask.sum()

    b = Dim("b", max=64)
    args = (Batch(torch.randn(4, 3), torch.randn(4, 3)), Pair(torch.randn(5), torch.randn(6)), 3, 0.5)
    kwargs = {"mask": torch.randn(7), "mode": "mean", "flag": False}
    ds = {"batch": [{0: b}, {0: b}], "pair": Pair({0: Dim("p", max=50)}, None), "n": None, "scale": None,
          "mask": {0: Dim.AUTO}, "mode": None, "flag": None}
    with shapegate.capture(quiet=True) as cap:
        torch.export.export(M(), args, kwargs, dynamic_shapes=ds, strict=False)
    t = cap.calls[0].trace
    T.loads(T.dumps(t))
    assert t["spec"]["flat"] is True
    kinds = [(i["path"], i["dim"], i["spec"]["kind"]) for i in t["inputs"]]
    assert [p for p, _, _ in kinds] == ["['batch'][0]", "['batch'][0]", "['batch'][1]", "['batch'][1]",
                                        "['pair'][0]", "['pair'][1]", "['mask']"], kinds
    assert t["inputs"][0]["pytree_path"] in ("['batch'].a", "['batch']['a']")
    assert t["inputs"][4]["pytree_path"] == "['pair'].p" and "pytree_path" not in t["inputs"][6]
    assert [k for _, _, k in kinds] == ["dim", "unset", "dim", "unset", "dim", "unset", "auto"], kinds
    assert all(i["value"] is not None for i in t["inputs"]), t["inputs"]
    inp = t["spec"]["inputs"]
    assert inp["args"][1]["namedtuple"] == "Pair" and inp["args"][1]["fields"] == ["p", "q"]
    assert inp["args"][0]["node"].endswith("Batch") and inp["args"][0]["fields"] == ["a", "b"]
    assert inp["args"][2] == {"int": 3} and inp["args"][3] == {"float": 0.5}
    assert inp["kwargs"]["mode"] == {"str": "mean"} and inp["kwargs"]["flag"] == {"bool": False}
    assert t["spec"]["dynamic_shapes"]["pair"] == {"__tuple__": [{"0": {"name": "p", "min": 0, "max": 50}}, None]}
    assert t["spec"]["dynamic_shapes"]["mask"] == {"0": "AUTO"}


def test_spec_that_does_not_fit_the_inputs():
    with shapegate.capture(quiet=True) as cap:
        e = _raises(Exception, lambda: torch.export.export(Add(), (torch.randn(4, 3), torch.randn(4, 3)),
                                                           dynamic_shapes={"x": {0: Dim("b")}, "z": None}))
    t = cap.calls[0].trace
    assert t["spec"]["flat"] is False and t["exception"]["type"].endswith("UserError") and "top-level keys" in str(e)
    assert all(i["spec"] == {"kind": "unset"} for i in t["inputs"])
    assert t["spec"]["dynamic_shapes"] == {"x": {"0": {"name": "b", "min": 0, "max": "oo"}}, "z": None}


def test_runtime_asserts_located():
    class U(torch.nn.Module):
        def forward(self, x, t):
            n = t.item()
            torch._check(n <= x.shape[0])
            return torch.zeros(n), x * 2

    with shapegate.capture(quiet=True) as cap:
        torch.export.export(U(), (torch.randn(8), torch.tensor(3)), dynamic_shapes=({0: Dim("dx", max=100)}, None), strict=False)
    ra = [g for g in cap.calls[0].trace["guards"] if g["origin"] == "runtime_assert"]
    assert any("torch._check(n <= x.shape[0])  # " in g.get("user_loc", "") for g in ra), ra
    unb = [s for s in cap.calls[0].trace["symbols"] if s["unbacked"]]
    assert unb and unb[0]["name"].startswith("u")


def test_replaced_dynamic_shapes():
    with shapegate.capture(quiet=True, dynamic_shapes={1: {"x": {0: 8 * Dim("_dx", min=2)}}}) as cap:
        torch.export.export(View8(), (torch.randn(16),), dynamic_shapes={"x": {0: Dim("dx")}}, strict=False)
    t = cap.calls[0].trace
    assert t["capture"]["outcome"] == "ok" and t["capture"]["dynamic_shapes_replaced"] is True
    assert t["inputs"][0]["spec"]["kind"] == "derived" and t["inputs"][0]["spec"]["name"] == "8*_dx"


def test_shapegate_export_note_and_result():
    ep = shapegate.export(Add(), (torch.randn(4, 3), torch.randn(4, 3)), strict=False)
    assert isinstance(ep, torch.export.ExportedProgram)
    saved = os.environ.pop("SHAPEGATE_BIN", None), os.environ.get("PATH", "")
    os.environ["PATH"] = "/nonexistent"
    try:
        e = _raises(Exception, lambda: shapegate.export(View8(), (torch.randn(16),),
                                                        dynamic_shapes={"x": {0: Dim("dx")}}, strict=False))
    finally:
        os.environ["PATH"] = saved[1]
        if saved[0] is not None:
            os.environ["SHAPEGATE_BIN"] = saved[0]
    assert type(e).__name__ == "UserError"
    notes = getattr(e, "__notes__", [])
    assert notes and "shapegate: no diagnosis: no shapegate backend" in notes[-1], notes
    assert torch.export.export is _capture.original("export")


SCRIPT = """
import sys, torch
from torch.export import Dim, export
class M(torch.nn.Module):
    def forward(self, x):
        return x.view(-1, 8)
assert __name__ == "__main__", __name__
print("argv", sys.argv[1:])
mode = sys.argv[1]
if mode == "exit3":
    export(M(), (torch.randn(16),), dynamic_shapes={"x": {0: 8 * Dim("k", min=2)}}, strict=False)
    sys.exit(3)
if mode == "fail":
    export(M(), (torch.randn(16),), dynamic_shapes={"x": {0: Dim("dx")}}, strict=False)
if mode == "none":
    print("no export")
"""


def _run_capture(d, *args):
    script = os.path.join(d, "user_script.py")
    with open(script, "w") as fh:
        fh.write(SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    return subprocess.run([sys.executable, "-m", "shapegate", "capture", "--out", os.path.join(d, "out"), "--",
                           script, *args], capture_output=True, text=True, env=env, timeout=300)


def test_capture_command_keeps_the_scripts_outcome():
    with tempfile.TemporaryDirectory() as d:
        p = _run_capture(d, "exit3", "--flag")
        assert p.returncode == 3, p.stderr
        assert "argv ['exit3', '--flag']" in p.stdout
        assert "1-export.json: torch.export.export at " in p.stderr and " ok; " in p.stderr
        p = _run_capture(d, "fail")
        assert p.returncode == 1
        tb = p.stderr[p.stderr.rindex("Traceback (most recent call last):"):]
        first = tb.split("\n")[1]
        assert "user_script.py" in first, tb[:400]                # starts at the script, as python would
        assert "shapegate" not in tb.replace("shapegate capture", ""), tb   # no frames of the wrapper
        assert tb.rstrip().split("\n")[-1].startswith("torch._dynamo.exc.UserError: Constraints violated (dx)!") or \
            "torch._dynamo.exc.UserError: Constraints violated (dx)!" in tb
        assert " raised UserError; " in p.stderr
        assert T.load(os.path.join(d, "out", "1-export.json"))["capture"]["outcome"] == "error"
        p = _run_capture(d, "none")
        assert p.returncode == 0 and "made no torch.export call" in p.stderr
