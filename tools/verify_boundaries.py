#!/usr/bin/env python3
"""verify_boundaries.py: does `shapegate verify` agree with what the loaded module does at the
boundaries of the declared ranges? (issue 12)

Three steps (`tools/make_gate_pairs.py all` runs them in order):

  python3 tools/verify_boundaries.py verify [--shapegate build/shapegate]        # outside
      generates the hand-made archives (tests/make_verify_archives.py, tests/make_graph_archives.py)
      into build/boundaries-gen/, runs `shapegate verify --json` on every archive below and writes
      tests/data/boundaries/verify.json (exit code and JSON per archive).
  /work/shared/refenv/run.sh /root/refenv/forky  python3 tools/verify_boundaries.py run --torch 2.14
  /work/shared/refenv/run.sh /root/refenv/trixie python3 tools/verify_boundaries.py run --torch 2.6
      loads every archive written by that torch (2.14: PT2 layout, 2.6: flat) with
      torch.export.load and calls ep.module() on shapes at the boundaries of its declared
      range_constraints: per backed symbol min - 1, min, min + 1, max - 1, max, max + 1 (a large
      finite size, 1024 and 4096, when max is int_oo), 0, 1, 2, 3 and a few more (7, 8, 16, the
      midpoint), one symbol at a time with the others at the example's sizes, the corners, and
      pairs of symbols; sizes come from the symbols, so inputs that share a symbol get the same
      size and a derived dim `2*s` twice it. Also runs each verify counterexample. Writes
      tests/data/boundaries/<2.14|2.6>/<archive>.json.
  python3 tools/verify_boundaries.py report                                     # anywhere
      tests/data/boundaries/SUMMARY.md (every archive) and CATALOG.md (where verify says proved
      but the module rejects a shape inside the declared ranges, with each archive's
      guards_code quoted; where verify refutes with a counterexample the module accepts).

Archives: tests/corpus/cases/*/model.pt2 (2.14) and cases-2.6/*/model.pt2 (2.6); tests/data/graph/,
tests/data/packed/ (by layout), tests/data/gate/*/{old,new}.pt2, tests/data/boundaries/archives/ (2.14 archives made to expose the
guards_code gap, tools/make_gate_pairs.py boundary-archives); the hand-made verify and graph
archives (their torch is the one that wrote their source; torch may refuse to load them).
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join("tests", "data", "boundaries")
GEN = os.path.join("build", "boundaries-gen")


def layout(path):
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
    except (OSError, zipfile.BadZipFile):
        return None
    return "flat" if "serialized_exported_program.json" in names else "pt2"


def archives():
    """[(version, name, path, origin)] of every archive in scope."""
    out = []
    for ver, sub in (("2.14", "cases"), ("2.6", "cases-2.6")):
        for p in sorted(glob.glob(os.path.join("tests", "corpus", sub, "*", "model.pt2"))):
            out.append((ver, os.path.basename(os.path.dirname(p)), p, "corpus"))
    extra = [("graph", p, "torch") for p in sorted(glob.glob("tests/data/graph/*.pt2"))]
    extra += [("packed", p, "shapegate pack") for p in sorted(glob.glob("tests/data/packed/*.pt2"))]
    extra += [("archives", p, "torch") for p in sorted(glob.glob(os.path.join(OUT, "archives", "*.pt2")))]
    extra += [("gate__" + os.path.basename(os.path.dirname(p)), p, "torch")
              for p in sorted(glob.glob(os.path.join("tests", "data", "gate", "*", "*.pt2")))]
    extra += [("verify", p, "hand-made") for p in sorted(glob.glob(os.path.join(GEN, "verify", "*.pt2")))]
    extra += [("graphgen", p, "hand-made") for p in sorted(glob.glob(os.path.join(GEN, "graph", "*.pt2")))]
    for prefix, p, origin in extra:
        lay = layout(p)
        if lay is None:
            continue
        out.append(("2.6" if lay == "flat" else "2.14", "%s__%s" % (prefix, os.path.basename(p)[:-4]), p, origin))
    return out


# ------------------------------------------------------------------------------ verify (outside)

def cmd_verify(shapegate):
    os.makedirs(GEN, exist_ok=True)
    subprocess.run([sys.executable, "tests/make_verify_archives.py", os.path.join(GEN, "verify"), "tests/corpus"], check=True)
    subprocess.run([sys.executable, "tests/make_graph_archives.py", os.path.join(GEN, "graph")], check=True)
    res = {}
    for ver, name, path, origin in archives():
        # decided by Z3's resource limit alone, as test_boundaries does: a wall-clock limit would
        # make the verdict depend on the machine's load
        p = subprocess.run([shapegate, "verify", "--json", "--timeout", "0", "--query-timeout", "0", path],
                           capture_output=True, text=True, timeout=600)
        try:
            js = json.loads(p.stdout) if p.stdout.strip() else None
        except ValueError:
            js = None
        res[path] = {"version": ver, "name": name, "origin": origin, "exit": p.returncode,
                     "json": js, "stderr": p.stderr.strip()[:500]}
        v = js["verdict"] if js else "-"
        print("%-5s %-44s exit %d  %s %s" % (ver, name, p.returncode, v, p.stderr.strip()[:100]))
    with open(os.path.join(OUT, "verify.json"), "w") as f:
        json.dump({"shapegate": shapegate, "archives": res}, f, indent=1, sort_keys=True)
        f.write("\n")


# ------------------------------------------------------------------------------ run (inside)

def boundary_list(arch, s):
    lo, hi = arch.symbol_range(s)
    vals = {0, 1, 2, 3, 7, 8, 16, lo - 1, lo, lo + 1}
    if hi is None:
        vals.update((1024, 4096))
    else:
        vals.update((hi - 1, hi, hi + 1, (lo + hi) // 2))
    return sorted(v for v in vals if v >= 0)


def grid(arch):
    """The gate's grid (gatelib.Archive.grid) over boundary_list's sizes, 1024 for an open max."""
    return arch.grid(values=lambda s: boundary_list(arch, s), corner_max=1024)


MAX_NUMEL = 1 << 22


def run_one(ver, name, path, origin, verify):
    import gatelib
    rec = {"archive": path, "name": name, "version": ver, "origin": origin, "layout": layout(path)}
    try:
        mj = gatelib.model_json(path)
        rec["torch_version"] = mj.get("torch_version")
        rec["guards_code"] = mj.get("guards_code")
        nodes = mj["graph_module"]["graph"]["nodes"]
        rec["runtime_asserts"] = [n["inputs"][1]["arg"].get("as_string") for n in nodes
                                  if n["target"].endswith("_assert_scalar.default") and len(n["inputs"]) > 1]
    except Exception as e:
        rec["json_error"] = "%s: %s" % (type(e).__name__, gatelib.first_line(e))
    try:
        arch = gatelib.Archive(path)
    except Exception as e:
        rec["load_error"] = "%s: %s" % (type(e).__name__, gatelib.first_line(e))
        return rec
    rec["runner"] = gatelib.torch.__version__
    rec["inputs"] = arch.describe()
    rec["range_constraints"] = arch.ranges_text()
    syms = arch.symbols()
    rec["symbols"] = [{"symbol": str(s), "range": list(arch.symbol_range(s)), "tried": boundary_list(arch, s)} for s in syms]
    errors = {}
    index = {}

    def eid(r):
        if r["ok"]:
            return "ok"
        k = (r["type"], r["kind"], r["message"])
        if k not in index:
            index[k] = "E%d" % len(index)
            errors[index[k]] = {"type": r["type"], "kind": r["kind"], "message": r["message"]}
        return index[k]

    rows = []
    skipped = 0
    for a in grid(arch):
        shapes = arch.shapes(a)
        if shapes is None:
            continue
        if sum(gatelib.math.prod(s) for s in shapes if s is not None) > MAX_NUMEL:
            skipped += 1
            continue
        args, kwargs = arch.inputs(shapes)
        r = gatelib.run(arch.module, args, kwargs)
        rows.append({"assign": {str(s): a[s] for s in syms}, "shapes": shapes, "declared": arch.declared(shapes),
                     "ge2": all(a[s] >= 2 for s in syms), "result": eid(r)})
    rec["rows"] = rows
    rec["skipped_over_max_numel"] = skipped
    # verify's counterexamples, run in torch
    cex = []
    vj = (verify or {}).get("json") or {}
    for v in ((vj.get("report") or {}).get("violations") or []):
        ce = v.get("counterexample")
        if not isinstance(ce, dict):
            continue
        base = {l.path: s for l, s in zip(arch.leaves, arch.shapes(arch.base()) or [])}
        base.update(ce)
        declared = None
        try:
            shapes = arch.shapes_by_path(base)
            declared = arch.declared(shapes)
            args, kwargs = arch.inputs(shapes)
            r = gatelib.run(arch.module, args, kwargs)
        except Exception as e:
            r = {"ok": False, "type": type(e).__name__, "kind": "tool", "message": gatelib.first_line(e)}
        cex.append({"dim": v.get("dim"), "counterexample": ce, "declared": declared, "result": eid(r)})
    rec["verify_counterexamples"] = cex
    rec["errors"] = errors
    rec["summary"] = summarize(rows)
    return rec


def summarize(rows):
    s = dict(tried=len(rows), declared=0, declared_ok=0, declared_rejected=0, declared_rejected_ge2=0,
             outside_ok=0, outside_rejected=0, unknown=0)
    for r in rows:
        ok = r["result"] == "ok"
        if r["declared"] is None:
            s["unknown"] += 1
        elif r["declared"]:
            s["declared"] += 1
            s["declared_ok" if ok else "declared_rejected"] += 1
            s["declared_rejected_ge2"] += (not ok) and r["ge2"]
        else:
            s["outside_ok" if ok else "outside_rejected"] += 1
    return s


def write_case(rec):
    d = os.path.join(OUT, rec["version"])
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, rec["name"] + ".json")
    head = {k: v for k, v in rec.items() if k != "rows"}
    text = json.dumps(head, indent=1)
    if "rows" in rec:
        text = text[:-2] + ',\n "rows": [\n' + ",\n".join("  " + json.dumps(r) for r in rec["rows"]) + "\n ]\n}"
    with open(path + ".tmp", "w") as f:
        f.write(text + "\n")
    os.replace(path + ".tmp", path)


def cmd_run(version, only):
    sys.path.insert(0, HERE)
    import gatelib
    gatelib.quiet()
    vpath = os.path.join(OUT, "verify.json")
    verify = {}
    if os.path.exists(vpath):
        with open(vpath) as f:
            verify = json.load(f)["archives"]
    for ver, name, path, origin in archives():
        if ver != version or (only and name not in only):
            continue
        rec = run_one(ver, name, path, origin, verify.get(path))
        write_case(rec)
        s = rec.get("summary")
        if s is None:
            print("%-5s %-44s LOAD FAILED: %s" % (ver, name, rec.get("load_error")), flush=True)
        else:
            print("%-5s %-44s tried %4d  declared %4d (rejected %3d, >=2: %3d)  outside accepted %3d"
                  % (ver, name, s["tried"], s["declared"], s["declared_rejected"], s["declared_rejected_ge2"],
                     s["outside_ok"]), flush=True)


# ------------------------------------------------------------------------------ report (anywhere)

def dims_status(vj):
    if not vj:
        return "-"
    st = {}
    for d in (vj.get("report") or {}).get("dims") or []:
        st[d.get("status")] = st.get(d.get("status"), 0) + 1
    return ", ".join("%d %s" % (n, k) for k, n in sorted(st.items())) or "no dynamic dims"


def cmd_report():
    with open(os.path.join(OUT, "verify.json")) as f:
        verify = json.load(f)["archives"]
    recs = []
    for ver in ("2.14", "2.6"):
        for p in sorted(glob.glob(os.path.join(OUT, ver, "*.json"))):
            with open(p) as f:
                recs.append(json.load(f))
    lines = ["# verify vs. the loaded module at the declared boundaries", "",
             "Generated by `tools/verify_boundaries.py report` from `tests/data/boundaries/<version>/*.json`",
             "(torch runs: `verify_boundaries.py run`, in the torch that wrote each archive) and",
             "`tests/data/boundaries/verify.json` (`shapegate verify --json` of main's build, run by",
             "`verify_boundaries.py verify`). Regenerate everything with `python3 tools/make_gate_pairs.py all`.", "",
             "Columns: shapes tried; of them inside the declared ranges (range_constraints, static sizes, shared",
             "and derived symbols); declared shapes the module rejects (all, and with every dynamic size >= 2,",
             "the sizes verify analyses); shapes outside the declared ranges the module still accepts; verify's",
             "verdict and per-dim statuses; the verdict's agreement with torch.", "",
             "| torch | archive | origin | tried | declared | rejected | rejected >= 2 | outside accepted | verify | dims | agrees |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    catalog = []
    tot = dict(archives=0, loaded=0, agree=0, disagree=0, not_loaded=0)
    for r in recs:
        v = verify.get(r["archive"], {})
        vj = v.get("json")
        verdict = vj["verdict"] if vj else "exit %s" % v.get("exit")
        tot["archives"] += 1
        if "summary" not in r:
            tot["not_loaded"] += 1
            lines.append("| %s | %s | %s | torch cannot load it: %s | | | | | %s | %s | n/a |" % (
                r["version"], r["name"], r["origin"], (r.get("load_error") or "")[:120].replace("|", "\\|"),
                verdict, dims_status(vj)))
            continue
        tot["loaded"] += 1
        s = r["summary"]
        errs = r["errors"]
        bad_rows = [x for x in r["rows"] if x["declared"] and x["ge2"] and x["result"] != "ok"]
        cex_ok = [c for c in r.get("verify_counterexamples", []) if c["result"] == "ok"]
        problems = []
        if verdict == "ok" and bad_rows:
            problems.append("proved, but the module rejects %d declared shape(s) with sizes >= 2" % len(bad_rows))
        # sizes 0 and 1: verify reads an archive's dims from their declared min, so a rejection there
        # by the module's guards counts too (a kernel's or a runtime assert's is listed apart, below)
        small_guard = [x for x in r["rows"] if x["declared"] and not x["ge2"] and x["result"] != "ok"
                       and errs[x["result"]]["kind"] == "guard"]
        if verdict == "ok" and small_guard:
            problems.append("proved, but the module's guards reject %d declared shape(s) with a size 0 or 1"
                            % len(small_guard))
        if cex_ok:
            problems.append("refuted, but the module accepts %d of verify's counterexample(s)" % len(cex_ok))
        if verdict not in ("ok", "violations"):
            problems.append("verify: %s" % verdict)
        agrees = not problems
        tot["agree" if agrees else "disagree"] += 1
        lines.append("| %s | %s | %s | %d | %d | %d | %d | %d | %s | %s | %s |" % (
            r["version"], r["name"], r["origin"], s["tried"], s["declared"], s["declared_rejected"],
            s["declared_rejected_ge2"], s["outside_ok"], verdict, dims_status(vj),
            "yes" if agrees else "**no**"))
        if problems:
            catalog.append((r, v, problems, bad_rows, cex_ok))
    lines += ["", "Totals: %(archives)d archives, %(loaded)d loaded by their torch, %(agree)d agree, "
              "%(disagree)d disagree, %(not_loaded)d not loadable." % tot, ""]
    # 0/1 and outside-accepted notes
    lines += ["Shapes outside the declared ranges that the module accepts (sizes 0/1 the input checks let through,",
              "derived roots whose range is not checked at call time) are listed per archive in its JSON",
              "(`declared: false`, `result: ok`); they are not verify disagreements: verify's claim is about",
              "shapes inside the ranges.", ""]
    with open(os.path.join(OUT, "SUMMARY.md"), "w") as f:
        f.write("\n".join(lines))
    cl = ["# Failure catalog: `shapegate verify` vs. the loaded module", "",
          "Every archive where main's `shapegate verify --json` and real torch disagree (see SUMMARY.md for",
          "all archives and how they were run). For each: verify's verdict, the archive's `guards_code` and",
          "runtime asserts as torch wrote them, and the declared shapes (inside range_constraints, sizes >= 2)",
          "the loaded module rejects, with the exception. Kinds: `guard` = the 2.14 module's guards function",
          "(guards_code and the input checks it adds), `runtime_assert` = an `_assert_scalar` node,",
          "`kernel` = an operator failed, `input_check` = the 2.6 pre-hook's input checks.", ""]
    kinds = {}
    for r, v, problems, bad_rows, cex_ok in catalog:
        for x in bad_rows:
            k = r["errors"][x["result"]]["kind"]
            kinds[k] = kinds.get(k, 0) + 1
    cl += ["%d archives disagree; rejected declared shapes by kind: %s." % (
        len(catalog), ", ".join("%s %d" % kv for kv in sorted(kinds.items())) or "none"), ""]
    for r, v, problems, bad_rows, cex_ok in catalog:
        vj = v.get("json") or {}
        cl += ["## %s / %s" % (r["version"], r["name"]), "",
               "`%s` (%s, written by torch %s)" % (r["archive"], r["origin"], r.get("torch_version")), "",
               "- verify: **%s** (%s); %s" % (vj.get("verdict"), dims_status(vj), "; ".join(problems)),
               "- range_constraints: `%s`" % json.dumps(r.get("range_constraints")),
               "- inputs: %s" % ", ".join("`%s` %s" % (i["path"], i.get("shape")) for i in r.get("inputs", []))]
        gc = r.get("guards_code")
        if gc:
            cl.append("- guards_code (%d):" % len(gc))
            cl += ["  - `%s`" % g for g in gc]
        else:
            cl.append("- guards_code: %s" % ("absent (torch 2.6 writes none)" if gc is None else "[]"))
        if r.get("runtime_asserts"):
            cl.append("- runtime asserts: " + ", ".join("`%s`" % a for a in r["runtime_asserts"]))
        if bad_rows:
            cl += ["", "| assignment | shapes | rejected by |", "|---|---|---|"]
            seen = set()
            for x in bad_rows:
                e = r["errors"][x["result"]]
                key = (json.dumps(x["assign"]), x["result"])
                if key in seen:
                    continue
                seen.add(key)
                cl.append("| %s | %s | %s: `%s` |" % (
                    ", ".join("%s=%d" % kv for kv in x["assign"].items()), json.dumps(x["shapes"]),
                    e["kind"], e["message"].replace("|", "\\|")[:200]))
                if len(seen) >= 12:
                    cl.append("| ... | (%d rows in all: see the JSON) | |" % len(bad_rows))
                    break
        for c in cex_ok:
            cl.append("- verify counterexample %s (%s) runs in torch" % (json.dumps(c["counterexample"]), c["dim"]))
        cl.append("")
    notes = []
    for r in recs:
        if "summary" not in r:
            continue
        vj = verify.get(r["archive"], {}).get("json") or {}
        small = [x for x in r["rows"] if x["declared"] and not x["ge2"] and x["result"] != "ok"
                 and r["errors"][x["result"]]["kind"] != "guard"]
        if vj.get("verdict") == "ok" and small:
            notes.append((r, small))
    if notes:
        cl += ["## Sizes 0 and 1 (not counted above)", "",
               "verify analyses an archive's dims from their declared min, 0 and 1 included, against the",
               "module's guards; a rejection below 2 by a kernel or a runtime assert over an unbacked value",
               "is recorded by no guard and not counted as a disagreement. Declared shapes, verify says proved,",
               "and the module rejects them:", ""]
        for r, small in notes:
            for x in small:
                e = r["errors"][x["result"]]
                cl.append("- %s / %s: %s %s -> %s: `%s`" % (
                    r["version"], r["name"], ", ".join("%s=%d" % kv for kv in x["assign"].items()),
                    json.dumps(x["shapes"]), e["kind"], e["message"]))
        cl.append("")
    not_loaded = [r for r in recs if "summary" not in r]
    if not_loaded:
        cl += ["## Not checked: archives torch cannot load", ""]
        for r in not_loaded:
            cl.append("- %s / %s (%s): %s" % (r["version"], r["name"], r["origin"], r.get("load_error")))
        cl.append("")
    with open(os.path.join(OUT, "CATALOG.md"), "w") as f:
        f.write("\n".join(cl))
    print("SUMMARY.md: %(archives)d archives, %(loaded)d loaded, %(agree)d agree, %(disagree)d disagree" % tot)
    print("CATALOG.md: %d archives" % len(catalog))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("verify")
    v.add_argument("--shapegate", default=os.path.join("build", "shapegate"))
    r = sub.add_parser("run")
    r.add_argument("--torch", required=True, choices=["2.14", "2.6"])
    r.add_argument("names", nargs="*")
    sub.add_parser("report")
    a = ap.parse_args()
    os.chdir(ROOT)
    if a.cmd == "verify":
        cmd_verify(a.shapegate)
    elif a.cmd == "run":
        cmd_run(a.torch, a.names)
    else:
        cmd_report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
