#!/usr/bin/env python3
"""make_graph_archives.py OUTDIR [FIXTURE]

Writes archives for the graph tests of `shapegate inspect` (tests/test_inspect.sh) whose
runtime asserts sit inside control-flow subgraphs or have no readable message, built from
the documented schema (PT2-FORMAT.md §2.4-2.5, §3.2: higher-order ops embed subgraphs as
{"as_graph": {"name", "graph": Graph}}, each with its own nodes and value tables).

The source is tests/data/graph/cond_check.pt2, exported by real torch 2.14
(tools/export_cond_asserts.py): torch.cond over x.shape[0] with torch._check in both
branches. Its model JSON is edited; every other member is copied unchanged.

Files (OUTDIR/expected.tsv lists, per file, the expected exit code and substrings of the
`inspect --json` output):
  nomsg.pt2     cond_check with every assert message removed: conditions rebuilt from nodes
  garbled.pt2   messages whose expression does not read: rebuilt from nodes
  while.pt2     a while_loop whose cond/body subgraphs check chains of sym_size (negative
                dim), sym_numel, sym_stride, floordiv, mul, add, sub, mod, eq, sym_not,
                lt, le, gt, ne, sym_min, sym_sum and an unbacked item(); an
                _assert_tensor_metadata in the body and one at top level
  while_nomsg.pt2  the same without messages
  map.pt2       map_impl whose body holds a cond (nested subgraphs) checking a SymInt
                subgraph input; the assert path is body_graph_0/true_graph_1
  cycle.pt2     an assert without message over a cycle of nodes: not recovered, no hang
  dag.pt2       an assert without message over a 64-level shared DAG: bounded, not recovered
  bad_graph.pt2 an as_graph argument without its graph: exit 3
  deep.pt2      conds nested 40 deep: exit 3 (nesting limit 32)
Standard library only.
"""
import copy
import json
import os
import sys
import zipfile

S77 = "Symbol('s77', positive=True, integer=True)"


def sym_int(name):
    return {"as_sym_int": {"as_name": name}}


def sym_bool(name):
    return {"as_sym_bool": {"as_name": name}}


def node(target, inputs, outputs):
    """A node as torch 2.14 serialises it; `inputs` are (name, Argument) pairs."""
    return {"target": target,
            "inputs": [{"name": n, "arg": a, "kind": 1} for n, a in inputs],
            "outputs": outputs, "metadata": {}, "is_hop_single_tensor_return": None}


def size(out, tensor, dim, op="sym_size"):
    ins = [("self", {"as_tensor": {"name": tensor}})]
    if dim is not None:
        ins.append(("dim", {"as_int": dim}))
    overload = {"sym_size": "int", "sym_stride": "int", "sym_numel": "default"}[op]
    return node("torch.ops.aten.%s.%s" % (op, overload), ins, [sym_int(out)])


def binop(op, out, a, b, boolean=False):
    return node("_operator." + op, [("a", a), ("b", b)], [sym_bool(out) if boolean else sym_int(out)])


def check(name, expr):
    """An _assert_scalar over SymBool `name`; `expr` None: no message."""
    ins = [("self", sym_bool(name))]
    if expr is not None:
        ins.append(("assert_msg", {"as_string": "Runtime assertion failed for expression %s on node '%s'" % (expr, name)}))
    return node("torch.ops.aten._assert_scalar.default", ins, [])


def metadata_check(tensor):
    return node("torch.ops.aten._assert_tensor_metadata.default",
                [("a", {"as_tensor": {"name": tensor}}), ("dtype", {"as_scalar_type": 7})], [])


def graph(nodes, inputs, outputs, tensor_values, sym_ints=None, sym_bools=None):
    return {"inputs": inputs, "outputs": outputs, "nodes": nodes, "tensor_values": tensor_values,
            "sym_int_values": sym_ints or {}, "sym_bool_values": sym_bools or {},
            "is_single_tensor_return": False, "custom_obj_values": {}, "sym_float_values": {}}


def x_meta(model):
    return copy.deepcopy(model["graph_module"]["graph"]["tensor_values"]["x"])


def each_graph(g):
    """Every Graph below and including `g`."""
    yield g
    for n in g["nodes"]:
        for i in n["inputs"]:
            sub = i["arg"].get("as_graph") if isinstance(i["arg"], dict) else None
            if sub and "graph" in sub:
                yield from each_graph(sub["graph"])


def drop_messages(model):
    for g in each_graph(model["graph_module"]["graph"]):
        for n in g["nodes"]:
            if n["target"].endswith("_assert_scalar.default"):
                n["inputs"] = [i for i in n["inputs"] if i["name"] != "assert_msg"]


def garble_messages(model):
    for g in each_graph(model["graph_module"]["graph"]):
        for n in g["nodes"]:
            for i in n["inputs"]:
                if i["name"] == "assert_msg":
                    i["arg"]["as_string"] = "Runtime assertion failed for expression s77 >=> ??? on node 'x'"


# (SymBool name, its chain of nodes, the message torch would print)
WHILE_BODY_CHECKS = [
    # Ne(Mod(s77, 2), 1) through sym_not(eq(...)), the size read with a negative dim
    ("not_1", [size("sz", "x", -2), binop("mod", "md", sym_int("sz"), {"as_int": 2}),
               binop("eq", "eq_1", sym_int("md"), {"as_int": 1}, True),
               node("torch.sym_not", [("a", sym_bool("eq_1"))], [sym_bool("not_1")])],
     "Ne(Mod(s77, 2), 1)"),
    # 2*((3*s77)//3) - 1 < 200 (read as 2*s77 - 1 < 200) through sym_numel, floordiv, mul, sub
    ("lt_1", [size("numel", "x", None, "sym_numel"), binop("floordiv", "fd", sym_int("numel"), {"as_int": 3}),
              binop("mul", "ml", sym_int("fd"), {"as_int": 2}), binop("sub", "sb", sym_int("ml"), {"as_int": 1}),
              binop("lt", "lt_1", sym_int("sb"), {"as_int": 200}, True)],
     "2*s77 - 1 < 200"),
    # 3*s77 <= 192 through sym_stride (as_int 3) times the size
    ("le_1", [size("st", "x", 0, "sym_stride"), binop("mul", "ms", sym_int("st"), sym_int("sz")),
              binop("le", "le_1", sym_int("ms"), {"as_int": 192}, True)],
     "3*s77 <= 192"),
    # Min(16, s77) >= 2 through torch.sym_min
    ("ge_1", [node("torch.sym_min", [("a", sym_int("sz")), ("b", {"as_int": 16})], [sym_int("mn")]),
              binop("ge", "ge_1", sym_int("mn"), {"as_int": 2}, True)],
     "Min(16, s77) >= 2"),
    # 2*s77 + 1 <= 129 through torch.sym_sum over a list
    ("le_2", [node("torch.sym_sum", [("args", {"as_sym_ints": [{"as_name": "sz"}, {"as_name": "sz"}, {"as_int": 1}]})],
                   [sym_int("sm")]),
              binop("le", "le_2", sym_int("sm"), {"as_int": 129}, True)],
     "2*s77 + 1 <= 129"),
    # u1 >= 0 over an unbacked item(): the producer is not an operator, so the record is used
    ("ge_2", [node("torch.ops.aten.item.default", [("self", {"as_tensor": {"name": "t"}})], [sym_int("item")]),
              binop("ge", "ge_2", sym_int("item"), {"as_int": 0}, True)],
     "u1 >= 0"),
]


def while_model(model, messages):
    g = model["graph_module"]["graph"]
    xm = x_meta(model)
    tm = copy.deepcopy(g["tensor_values"]["t"])
    body_nodes = []
    for name, chain, text in WHILE_BODY_CHECKS:
        body_nodes += chain
        body_nodes.append(check(name, text if messages else None))
    body_nodes.append(metadata_check("x"))
    body = graph(body_nodes, [{"as_tensor": {"name": "x"}}, {"as_tensor": {"name": "t"}}],
                 [{"as_tensor": {"name": "x"}}, {"as_tensor": {"name": "t"}}], {"x": xm, "t": tm},
                 sym_ints={"item": {"as_expr": {"expr_str": "Symbol('u1', integer=True)", "hint": None}},
                           "sz": {"as_expr": {"expr_str": S77, "hint": None}}})
    cond_nodes = [size("c_sz", "x", -2), binop("gt", "gt_9", sym_int("c_sz"), {"as_int": 1}, True),
                  check("gt_9", "s77 > 1" if messages else None),
                  node("torch.ops.aten.lt.Scalar", [("self", {"as_tensor": {"name": "t"}}), ("other", {"as_int": 5})],
                       [{"as_tensor": {"name": "lt_t"}}])]
    condg = graph(cond_nodes, [{"as_tensor": {"name": "x"}}, {"as_tensor": {"name": "t"}}],
                  [{"as_tensor": {"name": "lt_t"}}], {"x": copy.deepcopy(xm), "t": copy.deepcopy(tm),
                                                      "lt_t": {"dtype": 12, "sizes": [], "strides": []}})
    g["nodes"].append(metadata_check("x"))
    g["nodes"].append(node("torch.ops.higher_order.while_loop",
                           [("", {"as_graph": {"name": "while_loop_cond_graph_0", "graph": condg}}),
                            ("", {"as_graph": {"name": "while_loop_body_graph_0", "graph": body}}),
                            ("", {"as_tensors": [{"name": "x"}, {"name": "t"}]}), ("", {"as_tensors": []})],
                           [{"as_tensors": [{"name": "wl_0"}, {"name": "wl_1"}]}]))


def map_model(model):
    g = model["graph_module"]["graph"]
    row = {"dtype": 7, "sizes": [{"as_int": 3}], "strides": [{"as_int": 1}]}
    n_rec = {"as_expr": {"expr_str": S77, "hint": None}}
    inner_t = graph([binop("mod", "md_1", sym_int("n"), {"as_int": 2}),
                     binop("eq", "eq_7", sym_int("md_1"), {"as_int": 0}, True),
                     check("eq_7", "Eq(Mod(s77, 2), 0)")],
                    [{"as_tensor": {"name": "r"}}, sym_int("n")], [{"as_tensor": {"name": "r"}}],
                    {"r": copy.deepcopy(row)}, sym_ints={"n": n_rec})
    inner_f = graph([], [{"as_tensor": {"name": "r"}}, sym_int("n")], [{"as_tensor": {"name": "r"}}],
                    {"r": copy.deepcopy(row)}, sym_ints={"n": n_rec})
    body = graph([binop("gt", "gt_7", sym_int("n"), {"as_int": 4}, True),
                  node("torch.ops.higher_order.cond",
                       [("", sym_bool("gt_7")), ("", {"as_graph": {"name": "true_graph_1", "graph": inner_t}}),
                        ("", {"as_graph": {"name": "false_graph_1", "graph": inner_f}}),
                        ("", {"as_tensors": [{"name": "r"}]})],
                       [{"as_tensors": [{"name": "c_0"}]}])],
                 [{"as_tensor": {"name": "r"}}, sym_int("n")], [{"as_tensor": {"name": "c_0"}}],
                 {"r": copy.deepcopy(row), "c_0": copy.deepcopy(row)}, sym_ints={"n": n_rec})
    g["nodes"].append(node("torch.ops.higher_order.map_impl",
                           [("f", {"as_graph": {"name": "body_graph_0", "graph": body}}),
                            ("xs", {"as_tensors": [{"name": "x"}]}), ("pos_args", {"as_sym_ints": [{"as_name": "sym_size_int_1"}]})],
                           [{"as_tensors": [{"name": "map_0"}]}]))


def cycle_model(model):
    g = model["graph_module"]["graph"]
    g["nodes"] += [binop("add", "cy_a", sym_int("cy_b"), {"as_int": 1}),
                   binop("add", "cy_b", sym_int("cy_a"), {"as_int": 1}),
                   binop("ge", "cy_ge", sym_int("cy_a"), {"as_int": 0}, True), check("cy_ge", None)]


def dag_model(model):
    g = model["graph_module"]["graph"]
    g["nodes"].append(size("d0", "x", 0))
    for k in range(64):
        g["nodes"].append(binop("add", "d%d" % (k + 1), sym_int("d%d" % k), sym_int("d%d" % k)))
    g["nodes"] += [binop("ge", "d_ge", sym_int("d64"), {"as_int": 0}, True), check("d_ge", None)]


def bad_graph_model(model):
    g = model["graph_module"]["graph"]
    g["nodes"].append(node("torch.ops.higher_order.cond",
                           [("", {"as_bool": True}), ("", {"as_graph": {"name": "true_graph_9"}})], []))


def deep_model(model):
    g = model["graph_module"]["graph"]
    inner = graph([], [], [], {})
    for k in range(40):
        inner = graph([node("torch.ops.higher_order.cond",
                            [("", {"as_bool": True}), ("", {"as_graph": {"name": "g%d" % k, "graph": inner}})], [])],
                      [], [], {})
    g["nodes"].append(inner["nodes"][0])


def rewrite(src, dst, edit):
    """Copy archive `src` to `dst`, passing its model JSON through `edit`."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename.endswith("/models/model.json"):
                model = json.loads(data)
                edit(model)
                data = json.dumps(model).encode()
            zout.writestr(info, data, compress_type=info.compress_type)


def main():
    out = sys.argv[1]
    src = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                 "data", "graph", "cond_check.pt2")
    os.makedirs(out, exist_ok=True)
    ok_rebuilt = ['"node":"le_2","expr":"u0 <= s77","message":',
                  '"source":"nodes","rebuilt":"u0 <= s77","graph":"true_graph_0"',
                  '"source":"nodes","rebuilt":"Eq(Mod(s77, 2), 0)","graph":"false_graph_0"']
    cases = [
        ("nomsg.pt2", drop_messages, 0, ok_rebuilt + ['"message":null,"source":"nodes"']),
        ("garbled.pt2", garble_messages, 0, ok_rebuilt),
        ("while.pt2", lambda m: while_model(m, True), 0,
         ['"metadata_checks":2', '"subgraphs":4',
          '"expr":"s77 > 1","message":"Runtime assertion failed for expression s77 > 1 on node \'gt_9\'","source":"message","rebuilt":"s77 > 1","graph":"while_loop_cond_graph_0","hop":"torch.ops.higher_order.while_loop"']
         + ['"source":"message","rebuilt":"%s","graph":"while_loop_body_graph_0"' % c[2] for c in WHILE_BODY_CHECKS]),
        ("while_nomsg.pt2", lambda m: while_model(m, False), 0,
         ['"expr":"%s","message":null,"source":"nodes"' % c[2] for c in WHILE_BODY_CHECKS]),
        ("map.pt2", map_model, 0,
         ['"node":"eq_7","expr":"Eq(Mod(s77, 2), 0)"', '"graph":"body_graph_0/true_graph_1","hop":"torch.ops.higher_order.cond"',
          '"subgraphs":5']),
        ("cycle.pt2", cycle_model, 0, ['"node":"cy_ge","expr":null,"message":null,"source":null,"rebuilt":null']),
        ("dag.pt2", dag_model, 0, ['"node":"d_ge","expr":null,"message":null,"source":null,"rebuilt":null']),
        ("bad_graph.pt2", bad_graph_model, 3, ["as_graph: graph missing or not an object"]),
        ("deep.pt2", deep_model, 3, ["subgraphs nested deeper than 32"]),
    ]
    with open(os.path.join(out, "expected.tsv"), "w") as tsv:
        for name, edit, code, texts in cases:
            rewrite(src, os.path.join(out, name), edit)
            for t in texts:
                tsv.write("%s\t%d\t%s\n" % (name, code, t))


if __name__ == "__main__":
    main()
