#!/usr/bin/env python3
"""make_verify_archives.py OUTDIR [CORPUS_DIR]

Writes hand-made archives for `shapegate verify` tests (tests/test_pack.sh):
copies of a real corpus archive whose model JSON gets extra runtime asserts
(`aten._assert_scalar` nodes in torch's own form, the condition in the
message "Runtime assertion failed for expression E on node 'N'") or a wider
range_constraints entry, so that an assert is stronger than the declared
range. Every other member is copied unchanged (Python's zipfile, same order,
same compression). Also OUTDIR/expected.tsv: file, expected verify exit code,
a substring the text output must contain.

Sources: tests/corpus/cases/ok_check_implied_by_range (torch 2.14, PT2: x of
shape [s77, 3], s77 in [4, 64]) and cases-2.6/ok_check_implied_by_range
(torch 2.6, flat: s0 in [4, 64]). Standard library only.
"""
import json
import os
import sys
import zipfile


def assert_node(name, expr):
    """An _assert_scalar node as torch 2.14 serialises it."""
    return {
        "target": "torch.ops.aten._assert_scalar.default",
        "inputs": [
            {"name": "self", "arg": {"as_sym_bool": {"as_name": name}}, "kind": 1},
            {"name": "assert_msg",
             "arg": {"as_string": "Runtime assertion failed for expression %s on node '%s'" % (expr, name)},
             "kind": 1},
        ],
        "outputs": [],
        "metadata": {},
        "is_hop_single_tensor_return": None,
        "name": "_assert_scalar_" + name,
    }


def rewrite(src, dst, json_name, edit):
    """Copy archive `src` to `dst`, passing the model JSON through `edit`."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == json_name:
                model = json.loads(data)
                edit(model)
                data = json.dumps(model).encode()
            zout.writestr(info, data, compress_type=info.compress_type)


def add_asserts(*pairs):
    def edit(model):
        nodes = model["graph_module"]["graph"]["nodes"]
        for name, expr in pairs:
            nodes.append(assert_node(name, expr))
    return edit


def widen(sym, lo, hi, *pairs):
    def edit(model):
        model["range_constraints"][sym] = {"min_val": lo, "max_val": hi}
        add_asserts(*pairs)(model)
    return edit


def main():
    out = sys.argv[1]
    corpus = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "corpus")
    os.makedirs(out, exist_ok=True)
    pt2 = os.path.join(corpus, "cases", "ok_check_implied_by_range", "model.pt2")
    flat = os.path.join(corpus, "cases-2.6", "ok_check_implied_by_range", "model.pt2")
    pj, fj = "model/models/model.json", "serialized_exported_program.json"
    cases = [
        # (file, source, json member, edit, exit code, substring of the text output)
        ("mod8.pt2", pt2, pj, add_asserts(("eq_1", "Eq(Mod(s77, 8), 0)")), 1, "fails runtime assert: (L['x'].size()[0] % 8) == 0"),
        ("le32.pt2", pt2, pj, add_asserts(("le_1", "s77 <= 32")), 1, "fails runtime assert: L['x'].size()[0] <= 32"),
        ("implied.pt2", pt2, pj, add_asserts(("ge_1", "s77 >= 4"), ("le_1", "s77 <= 64")), 0, ": proved"),
        ("widened.pt2", pt2, pj, widen("s77", 2, 64, ("ge_1", "s77 >= 4")), 1, "fails runtime assert: L['x'].size()[0] >= 4"),
        ("flat_even.pt2", flat, fj, add_asserts(("eq_1", "Eq(Mod(s0, 2), 0)")), 1, "fails runtime assert: (L['x'].size()[0] % 2) == 0"),
        ("flat_implied.pt2", flat, fj, add_asserts(("ge_1", "s0 >= 2")), 0, ": proved"),
    ]
    with open(os.path.join(out, "expected.tsv"), "w") as tsv:
        for name, src, jn, edit, code, text in cases:
            rewrite(src, os.path.join(out, name), jn, edit)
            tsv.write("%s\t%d\t%s\n" % (name, code, text))


if __name__ == "__main__":
    main()
