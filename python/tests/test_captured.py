"""Traces captured in real torch (python/tests/data: tests/e2e scripts under torch 2.14 and 2.6),
read, re-written and checked on the host; the note shapegate.export adds, on real data."""

import os
import re

import shapegate
from shapegate import _export, trace as T
from shapegate.report import CapturedCall

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
NEEDS_BINARY = True


def fixture(name):
    return os.path.join(DATA, name)


def test_fixtures_read_back_byte_for_byte():
    for f in sorted(os.listdir(DATA)):
        with open(fixture(f), encoding="utf-8") as fh:
            text = fh.read()
        assert T.dumps(T.loads(text)) == text, f


def test_check_captured_divisibility_both_versions():
    for v in ("2.14", "2.6"):
        r = shapegate.check(fixture(f"view_after_bos-{v}.json"))
        assert r.verdict == "violations", (v, r.verdict)
        assert r.verified_fix == ["_dx = Dim('_dx', min=2, max=249)", "dx = 4*_dx + 1"], (v, r.verified_fix)
        assert r.inferred and any(i.congruence == (4, 1) for i in r.inferred.values())
        guard = [c for v_ in r.violations for c in v_.core if c.kind == "guard"]
        assert guard and all("view_after_bos.py:9 in forward" in c.loc for c in guard), guard
        t = T.load(fixture(f"view_after_bos-{v}.json"))
        assert t["torch_version"].startswith(v + ".") and t["spec"]["torch_suggested_fixes"] == [
            "_dx = Dim('_dx', max=250)", "dx = 4*_dx - 3"]
        assert r.fixes.torch.verdict != "ok"     # torch's own suggestion does not re-check


def test_check_captured_dataclass_fix_is_a_list_spec():
    for v in ("2.14", "2.6"):
        r = shapegate.check(fixture(f"dataclass_batch-{v}.json"))
        assert r.verdict == "violations" and r.fixes.verified, v
        spec = r.fixes.spec
        assert isinstance(spec["batch"], list) and len(spec["batch"]) == 2, (v, spec)
        assert "dynamic_shapes = {'batch': [{0: " in r.fixes.python, r.fixes.python


def test_export_note_on_a_real_failure():
    t = T.load(fixture("view_after_bos-2.14.json"))
    note = _export.diagnosis(CapturedCall(1, "export", t, None, RuntimeError("torch raised"), None))
    assert note.startswith("\nshapegate check (" + os.environ.get("SHAPEGATE_BACKEND", "cli") + ": ") and ": violations" in note
    # a size of x the spec allows (dx <= 1000) that the trace rejects (valid: 9..997, 1 mod 4)
    m = re.search(r"counterexample: \['x'\]: \[(\d+)\]", note)
    n = int(m.group(1)) if m else -1
    assert 2 <= n <= 1000 and not (9 <= n <= 997 and n % 4 == 1), note
    assert "  dx = 4*_dx + 1" in note and "dynamic_shapes = {'x': {0: 4*_dx + 1}}" in note
