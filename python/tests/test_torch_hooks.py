"""Pins the private torch hooks (shapegate/_torch_hooks.py) to each supported torch version.

Runs inside the reference chroots (torch 2.6.0 in trixie, 2.14.1 in forky). A torch version
that is not pinned fails here by name: read _torch_hooks.py against that torch, then add it.
"""

import torch
from torch.export import Dim

from shapegate import _torch_hooks as H

NEEDS_TORCH = True


def test_version_is_pinned_and_hooks_resolve_as_pinned():
    key = H.version_key()
    assert key in H.PINNED, f"torch {torch.__version__} is not pinned in _torch_hooks.PINNED ({sorted(H.PINNED)})"
    got, want = H.probe(), H.PINNED[key]
    diff = {k: (got.get(k), want[k]) for k in want if got.get(k) != want[k]}
    assert not diff, f"torch {torch.__version__}: hooks resolve differently than pinned (got, pinned): {diff}"


def test_shape_env_recording_reads_what_torch_holds():
    class M(torch.nn.Module):
        def forward(self, x, y):
            torch._check(x.shape[0] >= 4)
            return x + y

    call = H.CallSite(__import__("sys")._getframe())
    rec = H.recorder().start(call)
    try:
        torch.export.export(M(), (torch.randn(6, 3), torch.randn(6, 3)),
                            dynamic_shapes={"x": {0: Dim("d", min=4, max=64)}, "y": {0: Dim("d", min=4, max=64)}}, strict=False)
    finally:
        H.recorder().stop(rec)
    import torch.fx.experimental.symbolic_shapes as ss
    assert not hasattr(ss.ShapeEnv.__init__, "__wrapped__"), "ShapeEnv.__init__ not restored"
    se = H.main_shape_env(rec.shape_envs)
    assert se is not None
    env = H.read_shape_env(se, call)
    (sym,) = [s for s in env["symbols"] if s["sources"]][:1]
    assert sym["hint"] == 6 and sym["range"] == [4, 64], sym
    assert any(src.startswith("L[") for src in sym["sources"])
    assert env["fakes"], "no traced input shapes"
    locs = [g.get("user_loc") or "" for g in env["guards"]]
    assert any(l.startswith("return x + y  # ") and "test_torch_hooks.py:" in l and l.endswith(" in forward")
               for l in locs), locs


def test_spec_leaves():
    dx = Dim("dx", min=2, max=32)
    assert H.leaf_v1(dx) == {"kind": "dim", "name": "dx", "min": 2, "max": 32}
    assert H.leaf_v1(Dim("d")) == {"kind": "dim", "name": "d", "min": 0, "max": "int_oo"}
    d2 = H.leaf_v1(2 * dx + 1)
    assert d2["kind"] == "derived" and d2["expr"] == "2*dx + 1" and d2["root"] == {"name": "dx", "min": 2, "max": 32}
    assert (d2["min"], d2["max"]) == (5, 65)
    neg = H.leaf_v1(Dim("z", min=0, max=10) - 1)
    assert "unavailable" in neg["min"] and "Expected derived min value" in neg["min"]["unavailable"]
    assert H.leaf_v1(Dim.AUTO) == {"kind": "auto"}
    assert H.leaf_v1(Dim.DYNAMIC) == {"kind": "dynamic"}
    assert H.leaf_v1(Dim.STATIC) == {"kind": "static"}
    assert H.leaf_v1(None) == {"kind": "unset"} and H.leaf_v1(7) == {"kind": "static", "size": 7}
    if H.PINNED.get(H.version_key(), {}).get("dim_hint", "").startswith("dataclass"):
        assert H.leaf_v1(Dim.AUTO(min=4, max=64)) == {"kind": "auto", "min": 4, "max": 64}
        assert H.leaf_mirror(Dim.AUTO(max=64)) == {"hint": "AUTO", "min": None, "max": 64}
    a, b = torch.export.dims("a", "b", max=8)
    assert H.leaf_mirror(a) == {"name": "a", "min": 0, "max": 8} and H.leaf_mirror(b)["name"] == "b"
    assert H.spec_mirror({"x": (dx, None), "y": [{0: dx}]}) == {
        "x": {"__tuple__": [{"name": "dx", "min": 2, "max": 32}, None]},
        "y": [{"0": {"name": "dx", "min": 2, "max": 32}}]}


def test_bounds():
    from torch.utils._sympy.numbers import int_oo
    import sympy
    assert H.bound(int_oo) == "int_oo" and H.bound(-int_oo) == "-int_oo"
    assert H.bound(sympy.Integer(2 ** 80)) == 2 ** 80
    assert H.bound(sympy.Float(2.5)) == 2 and H.bound(sympy.Float(2.5), upper=True) == 3
