"""The v1 trace writer and reader (shapegate.trace): standard library only."""

import json
import os
import tempfile

from shapegate import trace as T

# tests/corpus/cases/ok_nonzero as docs/trace-format.md shows it (sg_trace_to_json's bytes).
DOC_EXAMPLE = """{
  "format": "shapegate-trace",
  "version": 1,
  "torch_version": "2.14.1+debian",
  "strict": false,
  "shape_env": true,
  "symbols": [
    {"name": "s77", "range": [2, 100], "hint": 6, "unbacked": false, "size_like": false, "replacement": null, "sources": ["L['x'].size()[0]"]},
    {"name": "u0", "range": [0, 100], "hint": null, "unbacked": true, "size_like": true, "replacement": null, "sources": []}
  ],
  "guards": [
    {"origin": "runtime_assert", "expr": "u0 <= s77", "msg": "/usr/lib/python3/dist-packages/torch/__init__.py:2097"}
  ],
  "inputs": [
    {"path": "['x']", "dim": 0, "size": 6, "source": "L['x'].size()[0]", "traced_source": "L['x'].size()[0]", "value": "s77", "spec": {"kind": "dim", "name": "dx", "min": 0, "max": 100}}
  ],
  "spec": {"flat": true, "dynamic_shapes": {"x":{"0":{"name":"dx","min":0,"max":100}}}, "inputs": {"arg_names":["x"],"args":[{"tensor":[6],"dtype":"float32"}],"kwargs":{},"flat":[{"path":"['x']","tensor":[6],"dtype":"float32"}],"signature":"(x)"}}
}
"""


def expect_error(text, needle):
    try:
        T.loads(text)
    except T.TraceError as e:
        msg = str(e)
        assert needle in msg, f"{needle!r} not in {msg!r}"
        assert "\n" not in msg, "an error is one line"
        return msg
    raise AssertionError(f"accepted: expected an error with {needle!r}")


def mutate(fn):
    t = json.loads(DOC_EXAMPLE)
    fn(t)
    return json.dumps(t)


def test_doc_example_bytes_round_trip():
    """The writer reproduces the C writer's bytes for the documented example."""
    assert T.dumps(T.loads(DOC_EXAMPLE)) == DOC_EXAMPLE


def test_round_trip_is_stable_with_extras():
    t = T.loads(DOC_EXAMPLE)
    t["capture"] = {"function": "torch.export.export", "call": 1}
    t["exception"] = {"type": "torch._dynamo.exc.UserError", "message": "Constraints violated (dx)!\n  - ..."}
    t["spec"]["torch_suggested_fixes"] = ["dx = Dim('dx', max=64)"]
    t["spec"]["torch_error"] = "torch._dynamo.exc.UserError"
    text = T.dumps(t)
    assert T.dumps(T.loads(text)) == text
    back = T.loads(text)
    assert back["exception"]["message"].startswith("Constraints violated")
    assert back["spec"]["torch_suggested_fixes"] == ["dx = Dim('dx', max=64)"]
    lines = text.split("\n")
    assert lines[-3].startswith('  "exception": ') and lines[-4].startswith('  "capture": ')


def test_empty_arrays_layout():
    t = {"torch_version": "", "symbols": [], "guards": [], "inputs": [], "spec": {"flat": False}}
    text = T.dumps(t)
    assert '  "symbols": [],\n  "guards": [],\n  "inputs": [],\n' in text
    back = T.loads(text)
    assert back["shape_env"] is False and back["spec"]["dynamic_shapes"] is None


def test_big_integers_exact():
    big = 9223372036854775807
    t = T.loads(DOC_EXAMPLE)
    t["symbols"][0]["range"] = [2, big]
    t["symbols"][0]["hint"] = 2 ** 100
    text = T.dumps(t)
    assert str(2 ** 100) in text and str(big) in text
    back = T.loads(text)
    assert back["symbols"][0]["hint"] == 2 ** 100
    expect_error(text.replace(str(2 ** 100), str(2 ** 127)), "128-bit")


def test_decimal_string_integers_accepted():
    T.loads(mutate(lambda t: t["inputs"][0].update(size="6")))


def test_rejects_wrong_format_and_newer_version():
    expect_error(mutate(lambda t: t.update(format="other")), "format: expected 'shapegate-trace'")
    msg = expect_error(mutate(lambda t: t.update(version=2)), "format version 2 is newer")
    assert msg.startswith("trace JSON: version:")
    expect_error(mutate(lambda t: t.pop("version")), "version: expected an integer")


def test_rejects_bad_json_with_position():
    expect_error(DOC_EXAMPLE[:40], "invalid JSON at byte")
    expect_error(b"\xff\xfe", "not UTF-8")
    expect_error("[1, 2]", "expected an object")


def test_rejects_bad_symbols():
    expect_error(mutate(lambda t: t["symbols"].append(dict(t["symbols"][0]))), "symbols[2]: symbol 's77' listed twice")
    expect_error(mutate(lambda t: t["symbols"][0].update(name="s 1")), "is not a bare symbol")
    expect_error(mutate(lambda t: t["symbols"][0].update(range=[2])), "expected [lo, hi]")
    expect_error(mutate(lambda t: t["symbols"][0].update(range=[2, "oo"])), "symbols[0].range[1]")
    expect_error(mutate(lambda t: t["symbols"][1].update(unbacked="yes")), "symbols[1].unbacked")


def test_rejects_bad_guards_and_inputs():
    expect_error(mutate(lambda t: t["guards"][0].update(origin="assert")), "guards[0].origin")
    expect_error(mutate(lambda t: t["guards"][0].pop("expr")), "guards[0].expr")
    expect_error(mutate(lambda t: t["inputs"][0].update(dim=70000)), "inputs[0].dim")
    expect_error(mutate(lambda t: t["inputs"][0].update(size=1.5)), "inputs[0].size")
    expect_error(mutate(lambda t: t["inputs"][0]["spec"].update(kind="sometimes")), "unknown spec kind 'sometimes'")
    expect_error(mutate(lambda t: t["inputs"][0].update(spec={"kind": "auto", "min": 2})), "min and max come together")
    expect_error(mutate(lambda t: t["inputs"][0].update(value=True)), "inputs[0].value")
    expect_error(mutate(lambda t: t["spec"].update(torch_suggested_fixes="dx = 4")), "spec.torch_suggested_fixes")


def test_unavailable_bound_and_unknown_keys():
    def f(t):
        t["inputs"][0]["spec"] = {"kind": "derived", "name": "dx - 1", "expr": "dx - 1",
                                  "root": {"name": "dx", "min": 0, "max": 10},
                                  "min": {"unavailable": "<unavailable: AssertionError: ...>"}, "max": 9}
        t["future_key"] = {"anything": [1, 2]}
        t["symbols"][0]["future_field"] = 1
    back = T.loads(mutate(f))
    assert back["inputs"][0]["spec"]["min"] == {"unavailable": "<unavailable: AssertionError: ...>"}


def test_write_atomic_and_refusals():
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "1-export.json")
        T.dump(T.loads(DOC_EXAMPLE), p)
        with open(p) as fh:
            assert fh.read() == DOC_EXAMPLE
        T.dump(T.loads(DOC_EXAMPLE), p)                  # a regular file is replaced
        assert sorted(os.listdir(d)) == ["1-export.json"]  # no temporary left behind
        os.mkdir(os.path.join(d, "dir.json"))
        try:
            T.dump(T.loads(DOC_EXAMPLE), os.path.join(d, "dir.json"))
            raise AssertionError("replaced a folder")
        except OSError as e:
            assert "not a regular file" in str(e)
        os.symlink(p, os.path.join(d, "link.json"))
        try:
            T.write_atomic(os.path.join(d, "link.json"), "x")
            raise AssertionError("replaced a symlink")
        except OSError:
            pass
        assert os.path.islink(os.path.join(d, "link.json"))
        bad = T.loads(DOC_EXAMPLE)
        bad["guards"][0]["origin"] = "nope"
        try:
            T.dump(bad, os.path.join(d, "bad.json"))
            raise AssertionError("wrote an invalid trace")
        except T.TraceError:
            pass
        assert not os.path.exists(os.path.join(d, "bad.json"))


def test_load_and_is_trace_file():
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "t.json")
        with open(p, "w") as fh:
            fh.write(DOC_EXAMPLE)
        assert T.load(p)["symbols"][0]["name"] == "s77"
        assert T.is_trace_file(p)
        q = os.path.join(d, "other.json")
        with open(q, "w") as fh:
            fh.write("{}")
        assert not T.is_trace_file(q)
        try:
            T.load(q)
            raise AssertionError("accepted {}")
        except T.TraceError as e:
            assert str(e).startswith(q + ": format:")
