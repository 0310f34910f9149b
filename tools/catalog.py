"""The failure catalog of issue 12: shapegate's answers on the staged real-torch cases vs expect.json.

Runs OUTSIDE the chroot (the shapegate binary is linked against Debian 12), from the top of the
checkout:

    python3 tools/catalog.py SHAPEGATE [--staging DIR] [--out-json FILE] [--out-md FILE]
    python3 tools/catalog.py --check SHAPEGATE [--staging DIR]

With --check nothing is written: every row is printed, then the summary, and the exit status is 1
when any row is not right (the ctest `test_expect` runs it on tests/corpus, whose cases with an
expect.json are ones shapegate answers right: a row that is wrong or incomplete is a regression).

For every case of DIR/cases (torch 2.14) and DIR/cases-2.6 that has an expect.json
(tools/expect_12.py), runs `shapegate check --json`, `shapegate check --explain --python` and
`shapegate spec --json` (60 s limit each), and judges the answer:

  wrong       the verdict is not one a correct checker may give (expect.json "accept"), a dim torch
              names is not refuted, a dim is proved on a spec that brute force refutes with no
              other dim refuted, or a counterexample passes every recorded guard;
  incomplete  the verdict is right, but a refuted case has no verified fix, an ok case no
              verified spec, a fix pins a dim as Dim(min=v, max=v), the refuted dims leave out one
              torch's header names (or name one more that brute force does not confirm: torch
              does not check guards over several dims, so refuting those is right), or torch's
              own message (range conflict, invalid spec) is not the one printed;
  right       none of the above.

Writes DIR/catalog.json (machine-readable, one row per case x torch version, with the raw
shapegate answers) and the generated tables of DIR/CATALOG.md (between the <!-- :CATALOG -->
markers; the hand-written notes around them are kept).
"""

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import guard_eval as ge  # noqa: E402
import expect_12 as ex  # noqa: E402

VERSIONS = (("2.14", "cases"), ("2.6", "cases-2.6"))
CLASS_ORDER = ["bounded_hint", "data_dependent", "non_tensor", "input_kinds", "invalid_spec", "pinned",
               "zero_one", "inexpressible", "example_range", "cat_reshape", "conv_pool", "unbacked",
               "guards_code", "naming"]
CLASS_TITLE = {
    "bounded_hint": "Dim.AUTO / Dim.DYNAMIC with explicit min/max",
    "data_dependent": "torch failed on a data-dependent guard",
    "non_tensor": "non-tensor arguments (int, float, bool, None, str)",
    "input_kinds": "input kinds (dataclass, namedtuple, OrderedDict, nested, kwargs-only, STATIC, dims(), None)",
    "invalid_spec": "invalid specs (dim beyond the rank, wrong structure)",
    "pinned": "dims pinned to one value",
    "zero_one": "0/1 examples (Dims and derived roots torch specialises)",
    "inexpressible": "relations Dim cannot express",
    "example_range": "an example outside the declared range",
    "cat_reshape": "cat then reshape(-1, 4) of two dynamic inputs",
    "conv_pool": "conv + pooling with a too-small min",
    "unbacked": "unbacked symbols and runtime asserts",
    "guards_code": "exports whose archive carries guards_code",
    "naming": "dim names in messages (d0 + 1)",
}
TIMEOUT_S = 60
# --check (a test): no wall-clock limit inside shapegate, Z3's rlimit decides; the process limit
# only guards against a hang. The explanation text, which judge() does not read, is skipped.
CHECK_MODE = False
HANG_S = 900


def run(cmd):
    try:
        limit = HANG_S if CHECK_MODE else TIMEOUT_S + 30
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
        return p.returncode, p.stdout, p.stderr.strip()
    except subprocess.TimeoutExpired:
        return "timeout", "", f"no answer within {limit} s"


def parse_json(text):
    try:
        return json.loads(text)
    except ValueError:
        return None


def budget():
    return "0" if CHECK_MODE else str(TIMEOUT_S * 1000)


def shapegate_answers(sg, folder):
    out = {}
    rc, so, se = run([sg, "check", "--json", "--timeout", budget(), folder])
    cj = parse_json(so)
    out["check"] = {"exit": rc, "stderr": se, "json": cj}
    if CHECK_MODE:
        out["explain"] = {"exit": None, "stderr": "", "text": ""}
    else:
        rc, so, se = run([sg, "check", "--explain", "--python", "--timeout", budget(), folder])
        out["explain"] = {"exit": rc, "stderr": se, "text": so}
    rc, so, se = run([sg, "spec", "--json", "--timeout", budget(), folder])
    out["spec"] = {"exit": rc, "stderr": se, "json": parse_json(so)}
    pt2 = os.path.join(folder, "model.pt2")
    if os.path.isfile(pt2):
        rc, so, se = run([sg, "verify", "--json", "--timeout", budget(), pt2])
        out["verify"] = {"exit": rc, "stderr": se, "json": parse_json(so)}
    return out


def sg_verdict(ans):
    c = ans["check"]
    if c["json"] is None:
        return {3: "unreadable", 2: "usage_error", 5: "internal_error", "timeout": "timeout"}.get(c["exit"], f"exit {c['exit']}")
    return c["json"].get("verdict")


VERDICT_OK = {
    # expected -> shapegate verdicts that count as that answer
    "torch_failed": lambda v, j: v == "torch_failed" or (v == "unknown" and "data-dependent" in (j or {}).get("reason", "")),
    "unsupported": lambda v, j: v in ("unsupported", "unknown") or v == "unreadable",
}


def verdict_right(expect, v, j):
    for acc in expect["accept"]:
        f = VERDICT_OK.get(acc)
        if (f and f(v, j)) or v == acc:
            return True
    return False


def counterexample_sizes(tr, cex):
    """shapegate counterexample {"['x']": [3, 3], ...} -> {(path, dim): size}, keyed like tr.inputs."""
    paths = []
    for ent in tr.inputs:
        if ent["path"] not in paths:
            paths.append(ent["path"])
    keys = list(cex)
    sizes = {}
    for i, p in enumerate(paths):
        shape = cex.get(p)
        if shape is None and i < len(keys) and len(cex) == len(paths):
            shape = cex[keys[i]]   # other path spelling (2.6 sources): by order
        if shape is None:
            return None
        for d, n in enumerate(shape):
            sizes[(p, d)] = n
    for ent in tr.inputs:
        if (ent["path"], ent["dim"]) not in sizes:
            return None
    return sizes


def in_domain(tr, sizes):
    """Is the shape inside the user's spec (named Dims / DYNAMIC within bounds from 2, static dims
    at their example, derived dims consistent)?"""
    vars_, dims = ex.domain(tr)
    val = {}
    for ent in dims:
        key = (ent["row"]["path"], ent["row"]["dim"])
        v = sizes[key]
        if ent["kind"] == "static" and v != ent["row"]["size"]:
            return False
        if ent["kind"] in ("Dim", "DYNAMIC") and ent.get("var") in vars_:
            var = vars_[ent["var"]]
            if v < var.lo or (var.hi is not None and v > var.hi):
                return False
            if ent["var"] in val and val[ent["var"]] != v:
                return False
            val[ent["var"]] = v
    for ent in dims:
        if ent["kind"] == "derived":
            var = vars_[ent["var"]]
            if ent["var"] in val:
                if ge.evaluate(ent["fn"], val) != sizes[(ent["row"]["path"], ent["row"]["dim"])]:
                    return False
    return True


def judge(expect, ans, folder):
    wrong, incomplete, notes = [], [], []
    v = sg_verdict(ans)
    cj = ans["check"]["json"] or {}
    if not verdict_right(expect, v, cj):
        wrong.append(f"verdict {v}, expected {' or '.join(expect['accept'])}")
    dims = cj.get("dims") or []
    by_src = {d.get("source"): d for d in dims}
    by_name = {d.get("name"): d for d in dims}
    refuted = {d.get("name") or d.get("source") for d in dims if d.get("status") == "refuted"}
    for d in expect["dims"]:
        sgd = by_src.get(d.get("source")) or by_name.get(d.get("torch_name"))
        label = d.get("torch_name") or d.get("source") or f"{d['path']}.{d['dim']}"
        if d["expected"] == "refuted" and v not in ("invalid_spec",):
            if sgd is None:
                if verdict_right(expect, v, cj) and v == "violations":
                    wrong.append(f"{label}: {'torch names it' if d.get('torch_names_it') else 'expected refuted'}, "
                                 f"shapegate does not decide it")
            elif sgd.get("status") != "refuted":
                who = "torch names it" if d.get("torch_names_it") else "expected refuted (brute force)"
                wrong.append(f"{label}: {who}, shapegate says {sgd.get('status')}")
        if d["expected"] == "refuted_or_related" and sgd is not None and sgd.get("status") == "proved" \
                and not refuted and v != "invalid_spec":
            wrong.append(f"{label}: proved, but shapes of its range fail the guards (brute force) and nothing is refuted")
    if expect.get("spec_valid") is False and v == "ok":
        if not any("proved" in w for w in wrong):
            wrong.append("says ok, but the spec admits failing shapes (brute force / torch)")
    # counterexamples must really fail
    tr = None
    try:
        tr = ge.Trace.from_capture(folder)
    except (OSError, ValueError, KeyError):
        pass
    for viol in cj.get("violations") or []:
        cex = viol.get("counterexample")
        if not cex or tr is None or not tr.reached:
            continue
        sizes = counterexample_sizes(tr, cex)
        if sizes is None:
            incomplete.append(f"counterexample of {viol.get('dim')} does not name every input: {cex}")
            continue
        ok, why = tr.check(sizes)
        if ok:
            wrong.append(f"counterexample of {viol.get('dim')} {cex} passes every recorded guard")
        if not in_domain(tr, sizes):
            notes.append(f"counterexample of {viol.get('dim')} {cex} lies outside the user's spec "
                         f"(it refutes the spec with torch's relations adopted)")
    # torch's words
    kind = expect.get("torch_error_kind")
    msgs = " ".join(x.get("message") or "" for x in cj.get("violations") or [])
    if kind == "range_conflict" and "Received user-specified" not in msgs:
        incomplete.append("torch's range-conflict message is not printed")
    if kind in ("invalid_spec", "spec_construction") and v == "invalid_spec":
        first = (expect.get("torch_message_first_line") or "").strip()
        if first and first[:60] not in msgs:
            incomplete.append("the invalid-spec message is not torch's")
    if kind == "constraint_violation" and v == "violations":
        names = ex.header_names(expect.get("torch_message_first_line") or "")
        got = sorted({x.get("dim") for x in cj.get("violations") or []})
        # more dims than torch names are right only where brute force fails shapes of their
        # ranges (refuted_or_related): a multi-symbol guard torch's solver does not check
        confirmed = {d.get("torch_name") for d in expect["dims"]
                     if d["expected"] in ("refuted", "refuted_or_related")}
        extra = set(got) - set(names)
        if names and (not set(names) <= set(got) or not extra <= confirmed):
            incomplete.append(f"refuted dims {got}, torch's header names {sorted(names)}")
        elif names and extra:
            notes.append(f"refutes {sorted(extra)} beyond torch's header {sorted(set(names))}: brute force fails "
                         f"shapes of their ranges (a guard over several dims torch's solver does not check)")
    # fixes and specs
    fx = cj.get("fixes") or {}
    lines = fx.get("lines") or cj.get("suggested_fixes") or []
    if v == "violations" and "violations" in expect["accept"]:
        if not (fx.get("verified") and fx.get("python")):
            incomplete.append("no verified fix" + (f" ({'; '.join(fx.get('notes') or [])[:160]})" if fx.get("notes") else ""))
    for ln in lines:
        m = re.search(r"Dim\('(\w+)', min=(\d+), max=(\d+)\)", ln)
        if m and m.group(2) == m.group(3):
            incomplete.append(f"fix pins a dim as {m.group(0)} (torch raises; must be `{m.group(1)} = {m.group(2)}`)")
    sj = ans["spec"]["json"] or {}
    if expect["expected_verdict"] == "ok" and not (sj.get("verified") and sj.get("python")):
        incomplete.append(f"no verified spec (spec exit {ans['spec']['exit']}: "
                          f"{'; '.join(sj.get('notes') or [ans['spec']['stderr']])[:160]})")
    for viol in cj.get("violations") or []:
        m = viol.get("message") or ""
        if viol.get("kind") in ("equal", "related") and " by " in m and "L[" in m.split(" by ", 1)[1]:
            incomplete.append(f"relation printed over sources, not dim names: ...{m.split(' by ', 1)[1][:80]}")
    internal = re.findall(r"\bs\d+\b", " ".join([msgs] + lines))
    dimnames = {d.get("torch_name") for d in expect["dims"]}
    internal = sorted(set(x for x in internal if x not in dimnames))
    if internal:
        incomplete.append(f"internal symbols in messages/fixes: {', '.join(internal)}")
    # the archive
    if "expected_verify" in expect and "verify" in ans:
        vj = ans["verify"]["json"] or {}
        vv = vj.get("verdict") or f"exit {ans['verify']['exit']}"
        rej = (expect.get("archive") or {}).get("rejected_in_range") or []
        if expect["expected_verify"] == "invalid_archive":
            if ans["verify"]["exit"] != 3:
                wrong.append(f"verify says {vv} on an archive torch cannot load ({(expect.get('archive') or {}).get('load_error', '')[:100]})")
        elif expect["expected_verify"] == "violations" and vv == "ok":
            r0 = rej[0] if rej else {}
            wrong.append(f"verify proves the archive, but its loaded module rejects {r0.get('values')} "
                         f"inside the declared ranges ({(r0.get('error') or '')[:90]})")
        elif expect["expected_verify"] == "ok" and vv not in ("ok",):
            (incomplete if vv in ("unknown", f"exit {ans['verify']['exit']}") else wrong).append(
                f"verify says {vv} ({ans['verify']['stderr'][:120]}), the loaded module accepts every probed shape")
        elif expect["expected_verify"] == "violations" and vv not in ("violations",):
            incomplete.append(f"verify says {vv} ({ans['verify']['stderr'][:120]}) for an archive whose module rejects shapes in range")
    status = "wrong" if wrong else ("incomplete" if incomplete else "right")
    return status, wrong, incomplete, notes


def diagnose(expect, ans, wrong, incomplete):
    """A short diagnosis from the symptoms (what is misread, what the product must do)."""
    v = sg_verdict(ans)
    kind = expect.get("torch_error_kind")
    cls = expect.get("classes") or []
    err = ans["check"]["stderr"]
    out = []
    if v == "unreadable":
        out.append(f"the capture is rejected (exit 3: {err[:140]}); the reader must accept it")
    cj = ans["check"]["json"] or {}
    reasons = {d.get("reason") for d in cj.get("dims") or [] if d.get("reason")} | ({cj["reason"]} if cj.get("reason") else set())
    if "the trace has no ShapeEnv" in reasons:
        out.append("guards.json has no main ShapeEnv (main_shape_env_index null: every dim 0/1-specialised, or torch "
                   "stopped before tracing) and the answer is left unknown; it must come from case.json's error "
                   "(error_type / error_message) and the example sizes")
    if any("no per-dim spec" in (r or "") for r in reasons):
        out.append("case.json has no dynamic_shapes (torch raised while building or validating the spec) and the "
                   "answer is left unknown; case.json error_type/error_message say why: report invalid_spec with "
                   "that message")
    exp_src = {d.get("source") for d in expect["dims"] if d.get("source")}
    sg_src = {d.get("source") for d in cj.get("dims") or [] if d.get("source")}
    if exp_src and sg_src and not (sg_src <= exp_src):
        out.append(f"input dims are misread: shapegate's sources {sorted(sg_src - exp_src)} are not the trace's "
                   f"{sorted(exp_src)} (case.json dynamic_shapes_flat paths of a non-dict spec are the spec's, "
                   f"e.g. '[0]'; the tensors are inputs.flat's)")
    if any(w.startswith("verify proves") for w in wrong):
        out.append("verify reads range_constraints only: the archive's guards_code (models/model.json, torch >= 2.8) "
                   "and the shape relations of the placeholders must be part of what it proves")
    if kind == "range_conflict" and v != "violations":
        out.append("the bounds of a Dim.AUTO/DYNAMIC hint (case.json `{\"hint\", \"min\", \"max\"}`) are not checked "
                   "against the traced range; torch raises when they do not meet; must refute with torch's range-conflict text "
                   "and fix the bounds")
    if kind == "data_dependent" and v not in ("torch_failed",):
        out.append("case.json error_type GuardOnDataDependentSymNode (export did not complete) is ignored by check; "
                   "must report that torch failed on a data-dependent guard, not prove anything")
    if kind == "spec_construction" and v != "invalid_spec":
        out.append("the spec failed to build (case.json phase spec_construction, error_message); must be invalid_spec "
                   "with torch's message and, for min == max, the fix `dx = <value>`")
    if kind == "invalid_spec" and v != "invalid_spec":
        out.append("torch's spec validation (structure / rank / example range) is not reproduced; must be invalid_spec "
                   "with torch's message (exit 1)")
    if expect["expected_verdict"] == "violations" and v == "ok":
        if kind is None:
            out.append("torch itself accepts this spec (its solver drops the multi-symbol/non-affine guard), but the guards "
                       "reject shapes inside it: the relation between inputs must be checked and refuted")
        else:
            out.append("a violation torch reports is missed")
    if expect["expected_verdict"] == "ok" and v == "violations":
        out.append("refutes a spec that torch accepts and brute force proves")
    for w in incomplete:
        if w.startswith("no verified fix"):
            if "inexpressible" in cls or "cat_reshape" in cls:
                out.append("no fix: the relation is not expressible as a Dim; offer the nearest expressible spec (Dim.AUTO "
                           "for the dependent dim, or a derived form) and say why")
            else:
                out.append("no fix offered for a refuted spec")
        if w.startswith("no verified spec"):
            out.append("spec produces nothing for a trace torch accepted")
        if w.startswith("fix pins"):
            out.append("a pinned dim must be printed `dx = v`")
        if w.startswith("refuted dims"):
            out.append("the refuted dims differ from torch's header (" + w.split(", torch")[0].split("refuted dims ")[1] + ")")
        if w.startswith("relation printed over sources"):
            out.append("the relation in the message names sources (`d0 = 1 + L['xs'][1].size()[0]`); torch names the "
                       "dims (`d0 = d1 + 1`)")
        if w.startswith("internal symbols"):
            out.append("messages use internal symbol names; must name dims as torch does")
        if "message is not" in w or "not printed" in w:
            out.append(w)
    for w in wrong:
        if "passes every recorded guard" in w:
            out.append("a counterexample that is not one: " + w)
        if "torch names it" in w and "verdict" not in " ".join(out):
            out.append(w)
    return "; ".join(dict.fromkeys(out)) or ("; ".join(wrong + incomplete))


def short_answer(ans):
    v = sg_verdict(ans)
    cj = ans["check"]["json"] or {}
    dims = cj.get("dims") or []
    parts = [f"{v} (exit {ans['check']['exit']})"]
    ref = [d.get("name") or d.get("source") for d in dims if d.get("status") == "refuted"]
    prv = [d.get("name") or d.get("source") for d in dims if d.get("status") == "proved"]
    unk = [d.get("name") or d.get("source") for d in dims if d.get("status") == "unknown"]
    if ref:
        parts.append("refuted " + ", ".join(ref))
    if prv:
        parts.append("proved " + ", ".join(prv))
    if unk:
        parts.append("unknown " + ", ".join(unk))
    fx = (cj.get("fixes") or {})
    if fx.get("lines"):
        parts.append("fix: " + "; ".join(fx["lines"]))
    sj = ans["spec"]["json"] or {}
    if expect_ok_spec(sj):
        parts.append("spec: " + "; ".join(sj.get("lines") or []))
    if "verify" in ans:
        vj = ans["verify"]["json"] or {}
        parts.append(f"verify: {vj.get('verdict') or 'exit ' + str(ans['verify']['exit'])}")
    return " · ".join(parts)


def expect_ok_spec(sj):
    return bool(sj.get("verified") and sj.get("lines"))


def short_expected(e):
    bits = [e["expected_verdict"]]
    ds = [f"{d.get('torch_name') or d.get('source') or d['path'] + '.' + str(d['dim'])}: {d['expected']}"
          for d in e["dims"] if d["expected"] != "not_decided"]
    if ds:
        bits.append(", ".join(ds))
    j = (e.get("brute_force") or {}).get("joint")
    if j and j.get("first_failing"):
        bits.append("fails at " + ", ".join(f"{k}={v}" for k, v in j["first_failing"]["shape"].items()))
    if "expected_verify" in e:
        bits.append(f"archive: {e['expected_verify']}")
    return " · ".join(bits)


def md_escape(s):
    return (s or "").replace("|", "\\|").replace("\n", " ")


def main(argv):
    args = list(argv)

    def opt(flag, default):
        if flag in args:
            i = args.index(flag)
            v = args[i + 1]
            del args[i:i + 2]
            return v
        return default
    global CHECK_MODE
    check = CHECK_MODE = "--check" in args
    if check:
        args.remove("--check")
    staging = opt("--staging", os.path.join(ROOT, "tests", "corpus", "staging"))
    out_json = opt("--out-json", os.path.join(staging, "catalog.json"))
    out_md = opt("--out-md", os.path.join(staging, "CATALOG.md"))
    if len(args) != 1:
        sys.exit(__doc__)
    sg = os.path.abspath(args[0])
    version = subprocess.run([sg, "--version"], capture_output=True, text=True).stdout.strip()
    rows = []
    for ver, sub in VERSIONS:
        base = os.path.join(staging, sub)
        if not os.path.isdir(base):
            continue
        for name in sorted(os.listdir(base)):
            folder = os.path.join(base, name)
            ep = os.path.join(folder, "expect.json")
            if not os.path.isfile(ep):
                continue
            with open(ep, encoding="utf-8") as fh:
                e = json.load(fh)
            ans = shapegate_answers(sg, folder)
            status, wrong, incomplete, notes = judge(e, ans, folder)
            row = {"case": name, "torch": ver, "classes": e.get("classes"), "torch_outcome": e["torch_outcome"],
                   "torch_error_kind": e.get("torch_error_kind"), "expected": e["expected_verdict"],
                   "accept": e["accept"], "expected_short": short_expected(e),
                   "shapegate_verdict": sg_verdict(ans), "shapegate_short": short_answer(ans),
                   "status": status, "wrong": wrong, "incomplete": incomplete, "notes": notes,
                   "diagnosis": diagnose(e, ans, wrong, incomplete) if status != "right" else "",
                   "shapegate": {"check": {"exit": ans["check"]["exit"], "stderr": ans["check"]["stderr"],
                                           "json": ans["check"]["json"]},
                                 "explain": {"exit": ans["explain"]["exit"], "stderr": ans["explain"]["stderr"],
                                             "text": ans["explain"]["text"][:3000]},
                                 "spec": ans["spec"]}}
            rows.append(row)
            print(f"{ver:5s} {name:36s} {status:10s} {row['shapegate_verdict']:14s} expected {e['expected_verdict']}", flush=True)
            if check and status != "right":
                print(f"      {'; '.join(wrong + incomplete)[:400]}", flush=True)
    if check:
        bad = [r for r in rows if r["status"] != "right"]
        print(f"{len(rows) - len(bad)} passed, {len(bad)} failed")
        sys.exit(1 if bad or not rows else 0)
    summary = {}
    for r in rows:
        cls = (r["classes"] or ["?"])[0]
        s = summary.setdefault(cls, {})
        k = s.setdefault(r["torch"], {"cases": 0, "right": 0, "incomplete": 0, "wrong": 0})
        k["cases"] += 1
        k[r["status"]] += 1
    with open(out_json, "w", encoding="utf-8") as fh:   # one row per line: small, diffable
        fh.write('{"shapegate": ' + json.dumps(version) + ',\n "summary": ' + json.dumps(summary, sort_keys=True)
                 + ',\n "rows": [\n' + ",\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n]}\n")
    write_md(out_md, version, rows, summary)
    tot = {s: sum(1 for r in rows if r["status"] == s) for s in ("right", "incomplete", "wrong")}
    print(f"{len(rows)} rows: {tot['right']} right, {tot['incomplete']} incomplete, {tot['wrong']} wrong; wrote {out_json}, {out_md}")


def write_md(path, version, rows, summary):
    lines = [f"Generated by `python3 tools/catalog.py` with {version}; one row per case x torch version.",
             "status: **wrong** (a verdict or proof a correct checker does not give), **incomplete** (right verdict, "
             "missing fix/spec or not torch's words), right.", "",
             "| class | torch | cases | right | incomplete | wrong |", "|---|---|---|---|---|---|"]
    for cls in CLASS_ORDER + sorted(set(summary) - set(CLASS_ORDER)):
        for ver in ("2.14", "2.6"):
            k = summary.get(cls, {}).get(ver)
            if k:
                lines.append(f"| {cls} | {ver} | {k['cases']} | {k['right']} | {k['incomplete']} | {k['wrong']} |")
    tot = {s: sum(1 for r in rows if r["status"] == s) for s in ("right", "incomplete", "wrong")}
    lines.append(f"| **all** | both | {len(rows)} | {tot['right']} | {tot['incomplete']} | {tot['wrong']} |")
    for cls in CLASS_ORDER + sorted(set(summary) - set(CLASS_ORDER)):
        rs = [r for r in rows if (r["classes"] or ["?"])[0] == cls]
        if not rs:
            continue
        lines += ["", f"### {cls}: {CLASS_TITLE.get(cls, cls)}", "",
                  "| case | torch | also | torch says | expected | shapegate | status | diagnosis |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in sorted(rs, key=lambda r: (r["case"], r["torch"] != "2.14")):
            torch_says = r["torch_outcome"] if not r["torch_error_kind"] else r["torch_error_kind"]
            lines.append("| `{}` | {} | {} | {} | {} | {} | {} | {} |".format(
                r["case"], r["torch"], ", ".join((r["classes"] or [])[1:]), torch_says, md_escape(r["expected_short"]),
                md_escape(r["shapegate_short"]), f"**{r['status']}**" if r["status"] == "wrong" else r["status"],
                md_escape(r["diagnosis"])))
    body = "\n".join(lines)
    head, tail = "", ""
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        if "<!-- :CATALOG -->" in text and "<!-- /CATALOG -->" in text:
            head = text.split("<!-- :CATALOG -->")[0]
            tail = text.split("<!-- /CATALOG -->", 1)[1]
    if not head:
        head = "# Issue 12 failure catalog (staged real-torch cases)\n\n"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(head + "<!-- :CATALOG -->\n" + body + "\n<!-- /CATALOG -->" + (tail or "\n"))


if __name__ == "__main__":
    main(sys.argv[1:])
