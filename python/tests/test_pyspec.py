"""Structured specs (fixes.spec, spec --json) back to torch objects, following the original."""

import collections

import torch
from torch.export import Dim

from shapegate import _torch_hooks as H
from shapegate._pyspec import from_structured

NEEDS_TORCH = True


def test_dims_derived_and_shared_objects():
    ds = from_structured({"x": {"0": {"derived": "8*_dx", "expr": "8*_dx", "root": {"name": "_dx", "min": 2, "max": "oo"},
                                      "min": 16, "max": "oo"}},
                          "y": {"0": {"name": "b", "min": 2, "max": 64}, "1": {"name": "b", "min": 2, "max": 64}},
                          "z": [{"derived": "dy + 1", "expr": "dy + 1", "root": {"name": "dy", "min": 4, "max": 50}}, None, 3]})
    x0 = ds["x"][0]
    assert H.leaf_v1(x0) == {"kind": "derived", "name": "8*_dx", "expr": "8*_dx",
                             "root": {"name": "_dx", "min": 2, "max": "int_oo"}, "min": 16, "max": "int_oo"}
    assert ds["y"][0] is ds["y"][1] and list(ds["y"]) == [0, 1]
    assert H.leaf_v1(ds["z"][0])["expr"] == "dy + 1" and ds["z"][1] is None and ds["z"][2] == 3
    minus = from_structured({"x": {"0": {"derived": "4*_dx - 3", "expr": "4*_dx - 3", "root": {"name": "_dx", "min": 2}}}})
    assert H.leaf_v1(minus["x"][0])["expr"] == "4*_dx - 3"


def test_hints_and_containers_follow_like():
    P = collections.namedtuple("P", ["a", "b"])
    like = {"p": P({0: Dim("pa")}, None), "xs": ({0: Dim("d0")}, {0: Dim("d1")})}
    ds = from_structured({"p": {"__tuple__": [{"0": {"name": "pa", "min": 2, "max": 9}}, None]},
                          "xs": {"__tuple__": [{"0": "AUTO"}, {"0": "STATIC"}]}}, like=like)
    assert type(ds["p"]) is P and ds["p"].a[0].__name__ == "pa" and ds["p"].b is None
    assert type(ds["xs"]) is tuple and ds["xs"][0][0] is Dim.AUTO and ds["xs"][1][0] is Dim.STATIC
    if H.PINNED.get(H.version_key(), {}).get("dim_hint", "").startswith("dataclass"):
        h = from_structured({"x": {"0": {"hint": "AUTO", "min": 4, "max": 64}}})["x"][0]
        assert H.leaf_v1(h) == {"kind": "auto", "min": 4, "max": 64}


def test_round_trip_through_mirror_exports():
    """mirror(spec) -> from_structured gives a spec torch accepts the same way."""
    class M(torch.nn.Module):
        def forward(self, x, y):
            return torch.cat([x, x]) + y
    dx = Dim("dx", min=2, max=32)
    spec = {"x": {0: dx}, "y": {0: 2 * dx}}
    back = from_structured(H.spec_mirror(spec))
    ep = torch.export.export(M(), (torch.randn(4), torch.randn(8)), dynamic_shapes=back, strict=False)
    assert sorted(str(v) for v in ep.range_constraints.values()) == sorted(["VR[2, 32]", "VR[4, 64]"])


def test_bad_forms():
    for bad in ({"x": {"0": {"derived": "dx*dx", "root": {"name": "dx"}}}}, {"x": {"0": "SOMETIMES"}}):
        try:
            from_structured(bad)
            raise AssertionError(f"accepted {bad}")
        except ValueError:
            pass
