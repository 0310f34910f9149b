#!/usr/bin/env python3
"""check_pack_loads.py [--corpus DIR] PACKED.pt2... | PACKED_DIR...

Reference check for `shapegate pack`, run with the torch that wrote the
corpus (from /work/main):

    /work/shared/refenv/run.sh /root/refenv/forky python3 tools/check_pack_loads.py tests/data/packed

Each packed archive is named <version>__<case>.pt2 (as tests/test_pack.c and
tests/data/packed/ name them); its source is <corpus>/<version>/<case>/model.pt2
and its example inputs come from <corpus>/<version>/<case>/case.json
(`inputs`: args and kwargs as pytree JSON with {"tensor": shape, "dtype"}
leaves). For each archive, torch.export.load() loads the source and the packed
copy (asking for the extra file shapegate/constraints.json, which torch must
hand back), both run on the same random tensors of the example shapes and
dtypes, and the outputs must be equal. When the source itself rejects the
random values (a data-dependent runtime assert), both run on the archive's
own example inputs instead. Archives whose torch cannot read their layout
(a torch 2.6 flat archive under torch >= 2.8 is fine; a 2.14 PT2 archive
under torch 2.6 is not) are reported as skipped.

Prints one line per archive and a summary; exit 0 when none failed.
"""
import glob
import json
import os
import sys
import traceback

import torch

DTYPES = {
    "float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32,
    "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool,
}


def build(node, gen):
    """A value from the corpus's pytree JSON, with random tensors."""
    if isinstance(node, dict):
        if "tensor" in node:
            dt = DTYPES[node.get("dtype", "float32")]
            shape = node["tensor"]
            if dt.is_floating_point:
                return torch.randn(shape, generator=gen).to(dt)
            if dt == torch.bool:
                return torch.randint(0, 2, shape, generator=gen).bool()
            return torch.randint(0, 8, shape, generator=gen).to(dt)
        if "dict" in node:
            return {k: build(v, gen) for k, v in node["dict"].items()}
        if "list" in node:
            return [build(v, gen) for v in node["list"]]
        if "tuple" in node:
            return tuple(build(v, gen) for v in node["tuple"])
        if "int" in node:
            return node["int"]
        if "float" in node:
            return node["float"]
    return node


def same(a, b):
    """Deep equality of outputs (tensors exactly, NaN equal to NaN)."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype and \
            torch.equal(torch.nan_to_num(a), torch.nan_to_num(b))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def run(ep, args, kwargs):
    return ep.module()(*args, **kwargs)


def check(packed, corpus):
    name = os.path.basename(packed)[:-4]
    if "__" not in name:
        return "skip", "name is not <version>__<case>.pt2"
    ver, case = name.split("__", 1)
    src = os.path.join(corpus, ver, case, "model.pt2")
    with open(os.path.join(corpus, ver, case, "case.json")) as f:
        inputs = json.load(f)["inputs"]
    try:
        orig = torch.export.load(src)
    except Exception as e:  # a layout this torch cannot read
        return "skip", "this torch cannot load the source: %s" % str(e).splitlines()[0][:100]
    extra = {"shapegate/constraints.json": ""}
    new = torch.export.load(packed, extra_files=extra)
    rec = json.loads(extra["shapegate/constraints.json"])
    if rec.get("format") != "shapegate-constraints":
        return "fail", "torch did not hand back the constraints record"
    if str(new.range_constraints) != str(orig.range_constraints):
        return "fail", "range_constraints differ"
    gen = torch.Generator().manual_seed(0)
    args = [build(a, gen) for a in inputs["args"]]
    kwargs = {k: build(v, gen) for k, v in inputs["kwargs"].items()}
    how = "random inputs"
    try:
        want = run(orig, args, kwargs)
    except Exception:
        args, kwargs = orig.example_inputs
        how = "the archive's example inputs"
        want = run(orig, args, kwargs)
    got = run(new, args, kwargs)
    if not same(want, got):
        return "fail", "outputs differ on %s" % how
    return "ok", "loads, record %s (verdict %s), outputs equal on %s" % (
        "present", rec.get("verdict"), how)


def main():
    argv = sys.argv[1:]
    corpus = "tests/corpus"
    if argv[:1] == ["--corpus"]:
        corpus, argv = argv[1], argv[2:]
    files = []
    for a in argv:
        files += sorted(glob.glob(os.path.join(a, "*.pt2"))) if os.path.isdir(a) else [a]
    counts = {"ok": 0, "fail": 0, "skip": 0}
    for p in files:
        try:
            status, why = check(p, corpus)
        except Exception as e:
            status, why = "fail", "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
            traceback.print_exc(file=sys.stderr)
        counts[status] += 1
        print("%-4s %s: %s" % (status, os.path.basename(p), why))
    print("torch %s: %d archives, %d ok, %d failed, %d skipped" % (
        torch.__version__, len(files), counts["ok"], counts["fail"], counts["skip"]))
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
