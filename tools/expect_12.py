"""Write expect.json, the correct answer, next to each staged issue-12 case (tests/corpus/staging/).

Runs INSIDE a reference chroot, from the top of the checkout:

    /work/shared/refenv/run.sh /root/refenv/forky  python3 tools/expect_12.py [--cases DIR] [NAME...]
    /work/shared/refenv/run.sh /root/refenv/trixie python3 tools/expect_12.py [--cases DIR] [NAME...]

DIR defaults to tests/corpus/staging/cases (torch 2.14) or tests/corpus/staging/cases-2.6.

The answer is established, per case, from three sources, each recorded in "how":
  1. torch's own outcome (case.json, recorded by the harness in this torch): the error kind and
     the dims torch names ("Constraints violated (dy)!", "for inputs['x'].shape[0]", ...);
  2. brute force over the spec's domain with exact Python integer semantics (tools/guard_eval.py)
     on the guards torch recorded: each dynamic dim is swept over its domain with the other dims
     at their examples, and the whole domain is enumerated when it has at most 5000 shapes
     (otherwise corners plus 3000 random shapes: "exhaustive": false); unbounded dims are
     searched up to 64 (or 4x the example);
  3. real torch at run time: every failing shape found is fed to the eager model and to the
     program torch exports (with the case's spec when torch accepted it, else with the corrected
     spec of scenarios_12.FIXES), and the corrected spec is re-exported and run at its corners.
Domain conventions (torch's): a Dim('d', min=a, max=b) ranges over max(a, 2)..b (torch analyses
sizes from 2 on and specialises 0 and 1); derived dims follow their root; Dim.DYNAMIC ranges over
its bounds (from 2); Dim.AUTO is existential (any size torch's guards admit, within its bounds);
static dims keep their example.
"""

import itertools
import json
import logging
import os
import random
import re
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GEN = os.path.join(ROOT, "tests", "corpus", "gen")
sys.path.insert(0, HERE)
sys.path.insert(0, GEN)

import guard_eval as ge  # noqa: E402

JOINT_LIMIT = 5000
SAMPLES = 3000
WINDOW = 64


# --------------------------------------------------------------------------- torch's outcome
def error_kind(c):
    if c.get("outcome") == "ok":
        return None
    if c.get("outcome") == "unsupported":
        return "unsupported"
    if c.get("phase") == "spec_construction":
        return "spec_construction"
    et = c.get("error_type") or ""
    msg = c.get("error_msg_attr") or c.get("error_message") or ""
    if et.endswith("GuardOnDataDependentSymNode") or "Could not guard on data-dependent" in msg:
        return "data_dependent"
    if "conflicts between user-specified ranges and inferred ranges" in msg:
        return "range_conflict"
    if msg.startswith("Constraints violated") or "\nConstraints violated" in msg:
        return "constraint_violation"
    if (re.search(r"^\d+ not in range \[", msg) or "Detected mismatch between the structure" in msg
            or "top-level keys must be the arg names" in msg or "to have the same length as the actual tensor shape" in msg
            or "Expected input" in msg and "to be equal to" in msg or "is not equal to" in msg
            or et == "builtins.IndexError"):
        return "invalid_spec"
    if "InternalTorchDynamoError" in et or (
            et in ("builtins.AttributeError", "builtins.TypeError", "builtins.KeyError", "builtins.AssertionError")
            and any("/torch/" in f for f in (c.get("raised_at") or [])[-1:])):
        return "torch_internal_error"   # torch's own code crashed while exporting
    return "other_error"


# verdicts a correct checker may give, per kind (the first is the expected one)
ACCEPT = {
    "unsupported": ["unsupported"],
    "spec_construction": ["invalid_spec"],
    "data_dependent": ["torch_failed"],
    "range_conflict": ["violations"],
    "constraint_violation": ["violations"],
    "invalid_spec": ["invalid_spec"],
    # torch crashed; the checker may do better than torch (e.g. name the 0/1 specialisation that
    # crashed it) or say that the export did not complete
    "torch_internal_error": ["violations", "torch_failed"],
    "other_error": ["torch_failed"],
}


def header_names(msg):
    m = re.search(r"Constraints violated \((.*?)\)! For more information", msg or "")
    return [n.strip() for n in m.group(1).split(", ")] if m else []


def conflict_paths(msg):
    """(keystr path, dim) of each 'for inputs[...].shape[i]' / 'for dimension inputs[...].shape[i]'."""
    return [(p, int(d)) for p, d in re.findall(r"inputs(\[[^\n]*?\])\.shape\[(\d+)\]", msg or "")]


# --------------------------------------------------------------------------- spec leaves
def leaf_kind(spec):
    if spec is None or isinstance(spec, int) or spec == "STATIC" or (isinstance(spec, dict) and "static" in spec):
        return "static"
    if spec in ("AUTO", "DYNAMIC"):
        return spec
    if isinstance(spec, dict):
        if "hint" in spec:
            return spec["hint"]
        if "derived" in spec:
            return "derived"
        if "name" in spec:
            return "Dim"
    return "other"


def bound(v, default):
    return default if v in (None, "oo") else int(v)


def torch_name(row):
    s = row["spec"]
    k = leaf_kind(s)
    if k == "Dim":
        return s["name"]
    if k == "derived":
        return s["derived"]
    return None


class Var:
    """One universally quantified variable of the spec's domain: a Dim (root) name or a DYNAMIC dim."""

    def __init__(self, name, lo, hi, example):
        self.name, self.lo, self.hi, self.example = name, lo, hi, example
        self.bounded = hi is not None
        top = hi if hi is not None else max(WINDOW, 4 * max(example or 0, 1))
        self.values = list(range(lo, top + 1)) if top >= lo else []


def domain(tr):
    """(vars, dims): the spec's variables and, per tensor dim, how its size follows from them."""
    vars_ = {}
    dims = []
    for row in tr.inputs:
        s = row["spec"]
        k = leaf_kind(s)
        ent = {"row": row, "kind": k}
        if k == "Dim":
            n = s["name"]
            if n not in vars_:
                vars_[n] = Var(n, max(bound(s.get("min"), 0), 2), bound(s.get("max"), None), row["size"])
            ent["var"] = n
            ent["fn"] = ["Symbol", n]
        elif k == "derived":
            root = s["root"]
            n = root["name"]
            ex = None
            if n not in vars_:
                vars_[n] = Var(n, max(bound(root.get("min"), 0), 2), bound(root.get("max"), None), ex)
            ent["var"] = n
            ent["fn"] = ge.parse_expr(s.get("expr") or s["derived"])
        elif k in ("AUTO", "DYNAMIC"):
            # hints are relaxed: torch may constrain them (equal to another dim, a multiple, a
            # narrower range); only their bounds (and, for DYNAMIC, not being a constant) are claims
            lo = bound(s.get("min"), 0) if isinstance(s, dict) else 0
            hi = bound(s.get("max"), None) if isinstance(s, dict) else None
            ent["auto"] = (lo if k == "AUTO" else max(lo, 2), hi)
            ent["hint_bounded"] = isinstance(s, dict)
        dims.append(ent)
    # derived roots without an own input: example = the root value that gives the example size
    for ent in dims:
        if ent["kind"] == "derived":
            v = vars_[ent["var"]]
            if v.example is None:
                for cand in range(0, 4 * ent["row"]["size"] + 4):
                    if ge.evaluate(ent["fn"], {v.name: cand}) == ent["row"]["size"]:
                        v.example = cand
                        break
    for ent in dims:
        if ent["kind"] == "Dim":
            vars_[ent["var"]].example = vars_[ent["var"]].example if vars_[ent["var"]].example is not None else ent["row"]["size"]
    return vars_, dims


def check_point(tr, dims, point, fixed=None, free_hints=False):
    """Does the shape given by `point` ({var: value}) pass?  AUTO and DYNAMIC dims are existential:
    searched in their bounds up to WINDOW (the example first), unless `fixed` {(path, dim): size}
    gives their size; with free_hints their own bounds are ignored (the projection torch makes when
    it computes one symbol's range).  Returns (ok, why, sizes)."""
    sizes = {}
    autos = []
    for ent in dims:
        key = (ent["row"]["path"], ent["row"]["dim"])
        if "fn" in ent:
            sizes[key] = ge.evaluate(ent["fn"], point)
        elif fixed and key in fixed:
            sizes[key] = fixed[key]
        elif "auto" in ent:
            autos.append(ent)
        else:
            sizes[key] = ent["row"]["size"]
    if not autos:
        ok, why = tr.check(sizes)
        return ok, why, sizes
    cands = []
    for ent in autos:
        lo, hi = ent["auto"]
        if free_hints:
            lo, hi = (0 if ent["kind"] == "AUTO" else 2), None
        hi = min(hi if hi is not None else WINDOW, WINDOW)
        vals = list(range(max(lo, 0), hi + 1))
        ex_ = ent["row"]["size"]
        if ex_ in vals:
            vals.remove(ex_)
            vals.insert(0, ex_)
        cands.append(vals or [ex_])
    last = None
    n = 0
    for combo in itertools.product(*cands):
        n += 1
        if n > 20000:
            return None, "AUTO search over 20000 combinations without an answer", sizes
        s2 = dict(sizes)
        for ent, v in zip(autos, combo):
            s2[(ent["row"]["path"], ent["row"]["dim"])] = v
        ok, why = tr.check(s2)
        if ok:
            return True, None, s2
        last = (ok, why, s2)
    return (False, last[1], last[2]) if last else (False, "no AUTO candidates", sizes)


def shape_json(tr, sizes):
    out = {}
    for lf in (tr.case.get("inputs") or {}).get("flat") or []:
        if "tensor" in lf:
            out[lf["path"]] = [sizes.get((lf["path"], i), n) for i, n in enumerate(lf["tensor"])]
    return out


def brute_force(tr):
    vars_, dims = domain(tr)
    res = {"vars": {n: {"lo": v.lo, "hi": v.hi, "example": v.example, "searched_to": v.values[-1] if v.values else None}
                    for n, v in vars_.items()}, "per_var": {}, "joint": None, "undecided": []}
    base = {n: (v.example if v.example is not None else v.lo) for n, v in vars_.items()}
    for n, v in vars_.items():
        fails, undec, first = 0, 0, None
        for val in v.values:
            pt = dict(base)
            pt[n] = val
            ok, why, sizes = check_point(tr, dims, pt)
            if ok is None:
                undec += 1
                res["undecided"].append(why)
            elif not ok:
                fails += 1
                if first is None:
                    first = {"value": val, "shape": shape_json(tr, sizes), "why": why}
        res["per_var"][n] = {"checked": len(v.values), "failing": fails, "undecided": undec,
                             "exhaustive": v.bounded, "first_failing": first}
    # hints: how many sizes within the bounds pass (others at their examples / existential);
    # AUTO with bounds needs one (else torch's range conflict), DYNAMIC needs two (else it is a constant)
    res["per_hint"] = {}
    for ent in dims:
        if "auto" not in ent:
            continue
        key = (ent["row"]["path"], ent["row"]["dim"])
        lo, hi = ent["auto"]
        top = hi if hi is not None else max(WINDOW, 4 * ent["row"]["size"])
        passing, undec, first_fail, first_pass = 0, 0, None, None
        for val in range(max(lo, 0), top + 1):
            ok, why, sizes = check_point(tr, dims, base, fixed={key: val}, free_hints=True)
            if ok is None:
                undec += 1
            elif ok:
                passing += 1
                first_pass = first_pass if first_pass is not None else val
            elif first_fail is None:
                first_fail = {"value": val, "shape": shape_json(tr, sizes), "why": why}
        res["per_hint"][f"{key[0]}.{key[1]}"] = {"kind": ent["kind"], "bounds": [lo, hi], "searched_to": top,
                                                 "exhaustive": hi is not None, "passing": passing,
                                                 "undecided": undec, "first_passing": first_pass,
                                                 "first_failing": first_fail}
    names = list(vars_)
    total = 1
    for n in names:
        total *= max(len(vars_[n].values), 1)
    if names:
        if total <= JOINT_LIMIT:
            points = itertools.product(*(vars_[n].values for n in names))
            exhaustive = all(vars_[n].bounded for n in names)
        else:
            rng = random.Random(12)
            corners = list(itertools.product(*({vars_[n].values[0], vars_[n].values[-1]} for n in names)))
            points = corners + [tuple(rng.choice(vars_[n].values) for n in names) for _ in range(SAMPLES)]
            exhaustive = False
        checked = fails = undec = 0
        first = None
        for combo in points:
            pt = dict(zip(names, combo))
            checked += 1
            ok, why, sizes = check_point(tr, dims, pt)
            if ok is None:
                undec += 1
            elif not ok:
                fails += 1
                if first is None:
                    first = {"values": pt, "shape": shape_json(tr, sizes), "why": why}
        res["joint"] = {"shapes": checked, "domain_size": total, "exhaustive": exhaustive, "failing": fails,
                        "undecided": undec, "first_failing": first}
    res["undecided"] = sorted(set(res["undecided"]))[:5]
    return res, vars_, dims


# --------------------------------------------------------------------------- real torch
def torch_setup():
    import torch
    warnings.filterwarnings("ignore")
    torch._logging.set_logs(all=logging.CRITICAL)
    return torch


def export(torch, built, ds, strict):
    import contextlib
    import io
    torch._dynamo.reset()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            ep = torch.export.export(built["model"], tuple(built["args"]), built.get("kwargs") or {},
                                     dynamic_shapes=ds, strict=strict)
        return ep, None
    except Exception as e:  # noqa: BLE001
        return None, e


def remake_inputs(torch, built, shape):
    """The example inputs with every tensor leaf of `shape` ({keystr path: sizes}) resized."""
    import inspect
    import torch.utils._pytree as pytree
    model, args, kwargs = built["model"], tuple(built["args"]), built.get("kwargs") or {}
    bound = inspect.signature(model.forward).bind(*args, **kwargs)
    comb = dict(bound.arguments)
    flat, spec = pytree.tree_flatten_with_path(comb)
    leaves = []
    for path, leaf in flat:
        k = pytree.keystr(path)
        if isinstance(leaf, torch.Tensor) and k in shape and list(leaf.shape) != shape[k]:
            if leaf.dtype == torch.bool:
                leaf = torch.ones(shape[k], dtype=torch.bool)
            elif leaf.is_floating_point():
                leaf = torch.randn(shape[k], dtype=leaf.dtype)
            else:
                leaf = torch.ones(shape[k], dtype=leaf.dtype)
        leaves.append(leaf)
    new = pytree.tree_unflatten(leaves, spec)
    sig = inspect.signature(model.forward)
    a, kw = [], {}
    for name, p in sig.parameters.items():
        if name not in new:
            continue
        if p.kind in (p.KEYWORD_ONLY,):
            kw[name] = new[name]
        elif p.kind == p.VAR_POSITIONAL:
            a.extend(new[name])
        elif p.kind == p.VAR_KEYWORD:
            kw.update(new[name])
        elif name in kwargs:
            kw[name] = new[name]
        else:
            a.append(new[name])
    return tuple(a), kw


def run_on(torch, fn, inputs):
    a, kw = inputs
    try:
        with torch.no_grad():
            fn(*a, **kw)
        return "runs"
    except Exception as e:  # noqa: BLE001
        return f"raises {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"


def fmt_shape(shape):
    return ", ".join(f"{k}={v}" for k, v in shape.items())


# --------------------------------------------------------------------------- one case
def expect_case(torch, harness, S, folder):
    with open(os.path.join(folder, "case.json"), encoding="utf-8") as fh:
        c = json.load(fh)
    name = c["name"]
    info = S.CASES.get(name)
    kind = error_kind(c)
    msg = c.get("error_msg_attr") or c.get("error_message") or ""
    E = {"name": name, "torch_version": c.get("torch_version"), "classes": c.get("tags", []),
         "description": c.get("description"), "torch_outcome": c.get("outcome"), "torch_error_kind": kind,
         "torch_error_type": c.get("error_type"),
         "torch_message_first_line": msg.split("\n")[0] if msg else None,
         "torch_suggested_fixes": c.get("suggested_fixes"), "dims": [], "how": []}
    how = E["how"]
    if kind is None:
        how.append(f"torch {c.get('torch_version')}: export succeeded (case.json outcome ok)")
    else:
        how.append(f"torch {c.get('torch_version')}: {kind} ({c.get('error_type')}): {E['torch_message_first_line'][:200]}")
    names = header_names(msg)
    cpaths = conflict_paths(msg)

    tr = None
    bf = None
    if c.get("dynamic_shapes_flat") and os.path.isfile(os.path.join(folder, "guards.json")):
        tr = ge.Trace.from_capture(folder)
    if tr is not None and tr.reached and kind not in ("invalid_spec", "spec_construction", "unsupported", "data_dependent"):
        bf, vars_, dims = brute_force(tr)
        E["brute_force"] = bf
        E["constraints_evaluated"] = len(tr.constraints)
        E["constraints_skipped"] = [f"{t} ({why})" for t, why in tr.skipped]
        for key, ph in bf.get("per_hint", {}).items():
            need = 1 if ph["kind"] == "AUTO" else 2
            how.append(f"brute force, {ph['kind']} {key} within [{ph['bounds'][0]}, {'oo' if ph['bounds'][1] is None else ph['bounds'][1]}]"
                       f" (searched to {ph['searched_to']}, the other dims at their examples, other hints free): "
                       f"{ph['passing']} sizes pass the recorded guards and ranges (torch needs {need})")
        j = bf["joint"]
        if j:
            how.append(f"brute force: {j['shapes']} shapes of the spec's domain ({'exhaustive' if j['exhaustive'] else 'sampled, domain ' + str(j['domain_size'])}), "
                       f"{j['failing']} fail the recorded guards, {j['undecided']} undecided"
                       + (f"; e.g. {fmt_shape(j['first_failing']['shape'])}: {j['first_failing']['why']}" if j['first_failing'] else ""))
    # per dim
    src_of = {}
    if tr is not None:
        try:
            with open(os.path.join(folder, "guards.json"), encoding="utf-8") as fh:
                g = json.load(fh)
            pgs = g.get("produce_guards_calls") or []
            leaves = [lf for lf in (c.get("inputs") or {}).get("flat") or [] if "tensor" in lf]
            srcs = [s for s, p in zip(pgs[-1]["sources"], pgs[-1]["placeholders"]) if "tensor" in p] if pgs else []
            if len(srcs) == len(leaves):
                src_of = {lf["path"]: s for lf, s in zip(leaves, srcs)}
        except (OSError, ValueError, KeyError):
            pass
    if tr is not None:
        dim_rows = tr.inputs
    else:
        dim_rows = [r for r in c.get("dynamic_shapes_flat") or [] if r.get("dim") is not None]
    for row in dim_rows:
        k = leaf_kind(row["spec"])
        if k == "static":
            continue
        d = {"path": row["path"], "dim": row["dim"], "example": row["size"], "spec": row["spec"], "kind": k,
             "source": f"{src_of[row['path']]}.size()[{row['dim']}]" if row["path"] in src_of else None,
             "torch_name": torch_name(row)}
        nm = d["torch_name"] or d["source"]
        d["torch_names_it"] = bool((nm and nm in names) or (row["path"], row["dim"]) in cpaths)
        if bf is not None:
            var = None
            for n, v in bf["vars"].items():
                if (k in ("Dim", "derived") and n == (row["spec"].get("name") or row["spec"].get("root", {}).get("name"))) \
                        or n == f"{row['path']}.{row['dim']}":
                    var = n
            pv = bf["per_var"].get(var) if var else None
            if pv is not None:
                d["sweep"] = pv
                d["all_values_pass"] = pv["failing"] == 0 and pv["undecided"] == 0
            ph = bf.get("per_hint", {}).get(f"{row['path']}.{row['dim']}")
            if ph is not None:
                d["hint_sweep"] = ph
                need = 1 if k == "AUTO" else 2
                d["hint_satisfiable"] = ph["passing"] >= need if (ph["passing"] >= need or ph["undecided"] == 0) else None
                d["note"] = ("Dim.AUTO with bounds: torch raises a range conflict when no size within them passes"
                             if k == "AUTO" else
                             "Dim.DYNAMIC: relaxed (torch may relate or narrow it); wrong only when no two sizes "
                             "within its bounds pass (a constant) or none does (a range conflict)")
        if kind in ("unsupported", "spec_construction", "invalid_spec"):
            d["expected"] = "not_decided"
        elif kind == "data_dependent":
            d["expected"] = "not_decided"
        elif k == "AUTO" and not isinstance(row["spec"], dict):
            d["expected"] = "not_decided"
        elif d["torch_names_it"]:
            d["expected"] = "refuted"
        elif k in ("AUTO", "DYNAMIC"):
            hs = d.get("hint_satisfiable")
            d["expected"] = "unknown" if hs is None else ("valid" if hs else "refuted")
        elif d.get("all_values_pass") is False:
            d["expected"] = "refuted_or_related"
        elif d.get("all_values_pass"):
            d["expected"] = "valid" if k != "AUTO" else "not_decided"
        else:
            d["expected"] = "unknown"
        E["dims"].append(d)

    # case-level truth
    joint_fail = bool(bf and bf["joint"] and bf["joint"]["failing"]) or \
        any(d["expected"] == "refuted" for d in E["dims"] if d["kind"] in ("AUTO", "DYNAMIC"))
    if kind is None:
        if joint_fail:
            E["spec_valid"] = False
            E["expected_verdict"] = "violations"
            E["accept"] = ["violations"]
            how.append("torch accepts the spec, but shapes inside it fail the recorded guards: the spec is wrong "
                       "and torch does not say so (a correct checker refutes it)")
        else:
            E["spec_valid"] = True
            E["expected_verdict"] = "ok"
            E["accept"] = ["ok"]
    else:
        E["spec_valid"] = False if kind not in ("unsupported", "data_dependent", "other_error") else None
        E["accept"] = list(ACCEPT[kind])
        E["expected_verdict"] = E["accept"][0]
        if kind == "torch_internal_error":
            how.append("torch crashed inside its own code (raised_at is in torch): the export did not complete; a "
                       "correct checker says so, or names the cause torch could not report")
        if kind == "invalid_spec" and c.get("error_type") == "builtins.IndexError":
            how.append("torch raises a bare IndexError while processing the spec (no validation message)")
    # torch 2.6 accepting a spec that 2.14 rejects as invalid (a dim beyond the rank)
    if kind is None and info is not None and "invalid_spec" in (c.get("tags") or []):
        E["accept"] = ["invalid_spec", "ok"]
        E["expected_verdict"] = "invalid_spec"
        how.append("this torch ignores the spec entry beyond the tensor's rank and exports; the spec is still "
                   "malformed (torch 2.14 rejects it), so invalid_spec is expected and ok tolerated")

    # real torch: failing shapes, the corrected spec
    if info is None:
        how.append("no scenario: torch run-time confirmation skipped")
        return E
    try:
        built = info["fn"]()
    except Exception as e:  # noqa: BLE001
        how.append(f"building the scenario raises {type(e).__name__}: {str(e)[:160]}")
        built = None
    strict = bool(info.get("strict"))
    fixspec = None
    fixfn = S.FIXES.get(name)
    if fixfn is not None:
        try:
            fixspec = fixfn()
        except Exception as e:  # noqa: BLE001
            E["fix"] = {"builds": False, "error": f"{type(e).__name__}: {e}"}
            how.append(f"the corrected spec cannot be built in this torch ({type(e).__name__}: {str(e)[:120]})")
    if built is None:
        return E
    built["model"].eval()
    ep_spec = None
    if kind is None:
        ep_spec, _ = export(torch, built, built.get("dynamic_shapes"), strict)
    ep_fix = None
    if fixspec is not None:
        ep_fix, fex = export(torch, built, fixspec, strict)
        F = {"builds": True, "python": harness.spec_repr(fixspec), "spec": harness.spec_json(fixspec),
             "reexport": "ok" if fex is None else f"{type(fex).__name__}: {str(fex).splitlines()[0][:200]}"}
        if ep_fix is not None:
            F["range_constraints"] = {str(k): [harness.num(v.lower), harness.num(v.upper)] for k, v in ep_fix.range_constraints.items()}
        E["fix"] = F
        how.append(f"corrected spec {F['python']} re-exported in torch: {F['reexport']}")
    # failing shapes from brute force, fed to torch
    shapes = []
    if bf:
        if bf["joint"] and bf["joint"]["first_failing"]:
            shapes.append(("joint", bf["joint"]["first_failing"]["shape"]))
        for n, pv in bf["per_var"].items():
            if pv["first_failing"]:
                shapes.append((n, pv["first_failing"]["shape"]))
        for d in E["dims"]:
            hs = d.get("hint_sweep")
            if d["expected"] == "refuted" and hs and hs.get("first_failing"):
                shapes.append((f"{d['path']}.{d['dim']}", hs["first_failing"]["shape"]))
    confirmations = []
    seen = set()
    for label, shape in shapes:
        key = json.dumps(shape, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        try:
            inputs = remake_inputs(torch, built, shape)
        except Exception as e:  # noqa: BLE001
            confirmations.append({"shape": shape, "error": f"{type(e).__name__}: {e}"})
            continue
        row = {"for": label, "shape": shape, "eager": run_on(torch, built["model"], inputs)}
        if ep_spec is not None:
            row["program_of_the_spec"] = run_on(torch, ep_spec.module(), inputs)
        if ep_fix is not None:
            row["program_of_the_fix"] = run_on(torch, ep_fix.module(), inputs)
        row["torch_rejects"] = any(str(v).startswith("raises") for k, v in row.items()
                                   if k in ("eager", "program_of_the_spec", "program_of_the_fix"))
        confirmations.append(row)
    if confirmations:
        E["failing_shapes_in_torch"] = confirmations
        n_rej = sum(1 for r in confirmations if r.get("torch_rejects"))
        how.append(f"{n_rej} of {len(confirmations)} failing shapes found by brute force are rejected by real torch at "
                   f"run time (eager model, the spec's program or the corrected spec's program)")
    # valid spec: its program at the corners of the domain
    if ep_spec is not None and bf and not joint_fail:
        vars_, dims = domain(tr)
        corner_rows = []
        for label in ("lo", "hi"):
            pt = {n: (v.values[0] if label == "lo" else v.values[-1]) for n, v in vars_.items() if v.values}
            ok, why, sizes = check_point(tr, dims, pt)
            shape = shape_json(tr, sizes)
            inputs = remake_inputs(torch, built, shape)
            corner_rows.append({"at": label, "shape": shape, "eager": run_on(torch, built["model"], inputs),
                                "program_of_the_spec": run_on(torch, ep_spec.module(), inputs)})
        E["corners_in_torch"] = corner_rows
        acc = sum(1 for r in corner_rows if r["program_of_the_spec"] == "runs")
        how.append(f"the exported program accepts {acc} of {len(corner_rows)} corner shapes of the spec's domain")
    # the archive: does the loaded module accept every shape its declared ranges admit?
    pt2 = os.path.join(folder, "model.pt2")
    if os.path.isfile(pt2):
        A = archive_probe(torch, built, pt2)
        E["archive"] = A
        how.append(f"model.pt2 loaded with torch.export.load and run on {A['probes']} shapes at and near the bounds of "
                   f"its declared range_constraints: {len(A['rejected_in_range']) + A.get('rejected_more', 0)} rejected by "
                   f"the loaded module ({A['skipped']} of them fail in the eager model too)")
        if "load_error" in A:
            how[-1] = (f"model.pt2 does not load in torch ({A['load_error'][:120]}; case.json pt2_error: "
                       f"{((c.get('pt2_error') or {}).get('error_message') or '')[:120]}): the archive is invalid")
            E["expected_verify"] = "invalid_archive"
        elif "module_fails_on_example" in A:
            how.append(f"the loaded module fails on the example inputs themselves ({A['module_fails_on_example'][:120]}): "
                       f"no expectation for verify")
        else:
            E["expected_verify"] = "violations" if A["rejected_in_range"] else "ok"
    # the fix's program at its own corners
    if ep_fix is not None:
        rows = fix_corners(torch, harness, built, fixspec, ep_fix)
        E["fix"]["corners_in_torch"] = rows
        ran = [r for r in rows if r["eager"] == "runs"]
        acc = sum(1 for r in ran if r["program_of_the_fix"] == "runs")
        how.append(f"the corrected spec's program accepts {acc} of {len(ran)} corner shapes of its domain "
                   f"that the eager model runs ({len(rows) - len(ran)} skipped: the eager model fails)")
    return E


def archive_probe(torch, built, path):
    """Run the module of the archive at `path` on shapes inside its declared range_constraints: each
    input-size symbol at min, min+1, min+2, min+3 and max (min+9 when unbounded), all combinations;
    derived sizes (s17 + s77) follow.  Returns the shapes the loaded module rejects (with what the
    eager model does on them: a shape the declared ranges admit but the module rejects is a wrong
    declaration whatever eager does)."""
    import torch.utils._pytree as pytree
    try:
        ep = torch.export.load(path)
    except Exception as e:  # noqa: BLE001
        return {"load_error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}", "probes": 0, "skipped": 0,
                "rejected_in_range": []}
    def finite(b):
        try:
            return int(b) if bool(b.is_finite) and b.is_integer else None
        except (TypeError, ValueError, AttributeError):
            return None
    rc = {k: (finite(v.lower) or 0, finite(v.upper)) for k, v in ep.range_constraints.items()
          if getattr(k, "is_Symbol", False)}
    ui = set(ep.graph_signature.user_inputs)
    phs = [n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder" and n.name in ui]
    leaves, _ = pytree.tree_flatten_with_path((tuple(built["args"]), built.get("kwargs") or {}))
    import inspect
    bound = inspect.signature(built["model"].forward).bind(*built["args"], **(built.get("kwargs") or {}))
    comb_leaves, _ = pytree.tree_flatten_with_path(dict(bound.arguments))
    out = {"declared": {str(k): [lo, hi] for k, (lo, hi) in rc.items()}, "probes": 0, "skipped": 0,
           "rejected_in_range": [], "accepted": 0}
    if len(phs) != len(comb_leaves):
        out["error"] = f"{len(phs)} placeholders for {len(comb_leaves)} inputs"
        return out
    base = run_on(torch, ep.module(), remake_inputs(torch, built, {}))
    if base != "runs":
        out["module_fails_on_example"] = base
        return out
    syms = set()
    for p in phs:
        if isinstance(p, torch.Tensor):
            for d in p.shape:
                if not isinstance(d, int):
                    syms |= {x for x in d.node.expr.free_symbols if x in rc}
    syms = sorted(syms, key=str)
    cands = []
    for x in syms:
        lo, hi = rc[x]
        top = hi if hi is not None else lo + 9
        cands.append(sorted({v for v in (lo, lo + 1, lo + 2, lo + 3, top) if v <= top}))
    for combo in itertools.product(*cands):
        val = dict(zip(syms, combo))
        shape = {}
        ok = True
        for (path, _leaf), p in zip(comb_leaves, phs):
            if isinstance(p, torch.Tensor):
                dims_ = []
                for d in p.shape:
                    if isinstance(d, int):
                        dims_.append(d)
                    elif d.node.expr.free_symbols <= set(val):
                        dims_.append(int(d.node.expr.subs(val)))
                    else:
                        ok = False
                        break
                shape[pytree.keystr(path)] = dims_
        if not ok or any(n < 0 for dims_ in shape.values() for n in dims_):
            continue
        out["probes"] += 1
        inputs = remake_inputs(torch, built, shape)
        got = run_on(torch, ep.module(), inputs)
        if got == "runs":
            out["accepted"] += 1
            continue
        eager = run_on(torch, built["model"], inputs)
        if re.search(r"\bu\d+\b", got):
            # a runtime assert on an unbacked value (t.item()): depends on the data, not on the shape
            out.setdefault("rejected_on_data", []).append({"values": {str(k): v for k, v in val.items()}, "error": got})
            continue
        if eager != "runs":
            out["skipped"] += 1   # the eager model fails too: still a shape the declared ranges admit
        if len(out["rejected_in_range"]) < 8:
            out["rejected_in_range"].append({"values": {str(k): v for k, v in val.items()}, "shape": shape,
                                             "error": got, "eager": eager})
        else:
            out["rejected_more"] = out.get("rejected_more", 0) + 1
    return out


def fix_corners(torch, harness, built, fixspec, ep):
    """Run ep at the corners of fixspec's domain: every root Dim at max(min, 2), then at its max
    (min + 5 when unbounded); a hint dim takes the size ep's own shape expression gives it once the
    Dims' symbols are set (its example when that expression has other symbols), static dims their
    examples."""
    import torch.utils._pytree as pytree
    rows = harness.flat_spec(built["model"], tuple(built["args"]), built.get("kwargs") or {}, fixspec) or []
    ui = set(ep.graph_signature.user_inputs)
    phs = [n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder" and n.name in ui]
    leaves = pytree.tree_leaves((tuple(built["args"]), built.get("kwargs") or {}))
    ph_of = {}
    tensor_rows = [r for r in rows if r.get("dim") is not None]
    paths = list(dict.fromkeys(r["path"] for r in tensor_rows))
    tphs = [p for p, lf in zip(phs, leaves) if isinstance(lf, torch.Tensor)] if len(phs) == len(leaves) else []
    if len(tphs) == len(paths):
        ph_of = dict(zip(paths, tphs))
    out = []
    for label in ("min", "max"):
        at = {}
        shape = {}
        symval = {}
        for r in rows:
            if r.get("dim") is None:
                continue
            s = r["spec"]
            k = leaf_kind(s)
            shape.setdefault(r["path"], [])
            size = r["size"]
            if k in ("Dim", "derived"):
                root = s if k == "Dim" else s["root"]
                lo = max(bound(root.get("min"), 0), 2)
                hi = bound(root.get("max"), None)
                v = lo if label == "min" else (hi if hi is not None else lo + 5)
                at[root["name"]] = v
                size = v if k == "Dim" else ge.evaluate(ge.parse_expr(s.get("expr") or s["derived"]), {root["name"]: v})
                ph = ph_of.get(r["path"])
                if k == "Dim" and ph is not None and r["dim"] < len(ph.shape) and not isinstance(ph.shape[r["dim"]], int):
                    e = ph.shape[r["dim"]].node.expr
                    if getattr(e, "is_Symbol", False):
                        symval[e] = v
            elif isinstance(s, int):
                size = s
            shape[r["path"]].append(size)
        for r in rows:
            if r.get("dim") is None or leaf_kind(r["spec"]) not in ("AUTO", "DYNAMIC"):
                continue
            ph = ph_of.get(r["path"])
            if ph is None or r["dim"] >= len(ph.shape):
                continue
            d = ph.shape[r["dim"]]
            if isinstance(d, int):
                shape[r["path"]][r["dim"]] = d
            elif d.node.expr.free_symbols <= set(symval):
                shape[r["path"]][r["dim"]] = int(d.node.expr.subs(symval))
        inputs = remake_inputs(torch, built, shape)
        out.append({"at": label, "roots": at, "shape": shape, "eager": run_on(torch, built["model"], inputs),
                    "program_of_the_fix": run_on(torch, ep.module(), inputs)})
    return out


def main(argv):
    torch = torch_setup()
    import run_cases
    harness = run_cases.load_module("harness", True)
    run_cases.load_module("registry", True)
    S = run_cases.load_module("scenarios_12", True)
    args = list(argv)
    cases = None
    if "--cases" in args:
        i = args.index("--cases")
        cases = args[i + 1]
        del args[i:i + 2]
    if cases is None:
        ver = ".".join(torch.__version__.split("+")[0].split(".")[:2])
        cases = os.path.join(ROOT, "tests", "corpus", "staging", "cases" if ver == "2.14" else f"cases-{ver}")
    names = sorted(n for n in os.listdir(cases) if os.path.isfile(os.path.join(cases, n, "case.json")))
    if args:
        names = [n for n in names if n in args]
    failed = []
    for n in names:
        folder = os.path.join(cases, n)
        try:
            E = expect_case(torch, harness, S, folder)
        except Exception as e:  # noqa: BLE001
            import traceback
            traceback.print_exc()
            failed.append(n)
            print(f"{n:36s} FAILED: {type(e).__name__}: {e}", flush=True)
            continue
        with open(os.path.join(folder, "expect.json"), "w", encoding="utf-8") as fh:
            json.dump(E, fh, indent=1, ensure_ascii=False, default=str)
            fh.write("\n")
        dims = ", ".join(f"{d['torch_name'] or d['path'] + '.' + str(d['dim'])}:{d['expected']}" for d in E["dims"])
        print(f"{n:36s} {E['expected_verdict']:12s} {dims}", flush=True)
    print(f"{len(names) - len(failed)} of {len(names)} expectations written" + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
