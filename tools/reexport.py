"""Re-export the corpus cases in real torch with the specs shapegate writes.

Two steps (tools/README.md, docs/reexport.md):

  python3 tools/reexport.py prepare BUILD/shapegate [CASE...]
      outside the chroot: runs `shapegate spec --json` and `shapegate check --json` on every case
      of the corpus (tests/corpus/cases/ for torch 2.14, tests/corpus/cases-2.6/ for 2.6) and of
      the staged issue-12 cases (tests/corpus/staging/cases*/, named `staged/NAME`), and stores
      the outputs (and exit codes) in BUILD/reexport-sg/2.14/ and BUILD/reexport-sg/2.6/.
  run.sh CHROOT python3 tools/reexport.py run BUILD/reexport-sg [--out FILE] [CASE...]
      inside the chroot (forky: torch 2.14, trixie: torch 2.6; the cases of the running torch's
      version): for each case rebuilds the model (tools/scenarios.py for the corpus,
      tests/corpus/gen/scenarios_12.py for the staged cases) and
      (a) exports it with the case's own dynamic_shapes and compares with the corpus (outcome,
          error type, message before "Suggested fixes:", guards, range constraints);
      (b) exports it with the spec `shapegate spec` printed: it must succeed and torch's range
          constraints must equal the spec's ranges;
      (c) refuted cases: exports it with `shapegate check --json` "fixes.python": must succeed (a
          namedtuple placeholder the Python defines by a comment is bound to the input's class; a
          `repaired_Dim` repair, for a Dim torch refused to build, is put in place of the scenario's
          `Dim` and the scenario's own spec exported);
      (d) applies torch's own suggested fixes (the corpus message) with
          refine_dynamic_shapes_from_suggested_fixes, re-exports (3 rounds at most, as the corpus
          harness does) and compares with the corpus `refined` answer and with shapegate's
          prediction of it (check --json "fixes.torch.verdict").
      Prints one line per case and a summary; writes them to FILE (default tools/reexport-<ver>.txt).

      The "required" summary line counts what issue 12 asks for: every case whose export can
      succeed at all (torch did not stop at a data-dependent guard, the case is not unsupported
      by this torch) needs, when shapegate refutes it (violations / invalid_spec / unknown), a fix
      that re-exports, and when shapegate proves it, a spec that re-exports; a case with neither
      counts as a failure.

The shapegate binary is linked against Debian 12's libraries and does not run in the chroot,
hence the two steps. Everything is read-only for the corpus.
"""

import contextlib
import io
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(ROOT, "tests", "corpus")
SETS = {"corpus": {"2.14": os.path.join(CORPUS, "cases"), "2.6": os.path.join(CORPUS, "cases-2.6")},
        "staged": {"2.14": os.path.join(CORPUS, "staging", "cases"), "2.6": os.path.join(CORPUS, "staging", "cases-2.6")}}
VERSIONS = ("2.14", "2.6")
STAGED = "staged/"
TRAILER = "\n\nThe error above occurred when calling torch.export.export"


def case_dir(ver, key):
    """Folder of case `key` (a corpus name, or `staged/NAME`) for torch version `ver`."""
    if key.startswith(STAGED):
        return os.path.join(SETS["staged"][ver], key[len(STAGED):])
    return os.path.join(SETS["corpus"][ver], key)


def case_names(ver, selected):
    names = []
    for set_, prefix in (("corpus", ""), ("staged", STAGED)):
        d = SETS[set_][ver]
        if os.path.isdir(d):
            names += [prefix + n for n in sorted(os.listdir(d)) if os.path.isfile(os.path.join(d, n, "case.json"))]
    if selected:
        unknown = [s for s in selected if s not in names]
        if unknown:
            sys.exit(f"reexport: unknown case(s) for torch {ver}: {', '.join(unknown)}")
        names = [n for n in names if n in selected]
    return names


def sg_file(sgdir, key, cmd):
    return os.path.join(sgdir, f"{key.replace('/', '__')}.{cmd}.json")


# ------------------------------------------------------------------ step 1: shapegate (outside)
def prepare(argv):
    if not argv:
        sys.exit("usage: reexport.py prepare SHAPEGATE [CASE...]")
    sg = os.path.abspath(argv[0])
    top = os.path.join(os.path.dirname(sg), "reexport-sg")
    version = subprocess.run([sg, "--version"], capture_output=True, text=True).stdout.strip()
    for ver in VERSIONS:
        out = os.path.join(top, ver)
        os.makedirs(out, exist_ok=True)
        index = {"shapegate": version}
        sel = [a for a in argv[1:] if a in case_names(ver, [])]
        if argv[1:] and not sel:
            continue
        if sel and os.path.exists(os.path.join(out, "index.json")):
            # some cases again: keep the rows of the others
            with open(os.path.join(out, "index.json")) as fh:
                index = {**json.load(fh), "shapegate": version}
        for n in case_names(ver, sel):
            d = case_dir(ver, n)
            row = {}
            for cmd in ("spec", "check"):
                p = subprocess.run([sg, cmd, "--json", d], capture_output=True, text=True, timeout=600)
                with open(sg_file(out, n, cmd), "w") as fh:
                    fh.write(p.stdout)
                row[cmd] = {"exit": p.returncode, "stderr": p.stderr.strip()}
            index[n] = row
            print(f"{ver} {n}: spec exit {row['spec']['exit']}, check exit {row['check']['exit']}")
        with open(os.path.join(out, "index.json"), "w") as fh:
            json.dump(index, fh, indent=1)
        print(f"wrote {out}")


# ------------------------------------------------------------------ step 2: torch (inside)
def load_sg(sgdir, name, cmd):
    """(parsed JSON or None, exit code, stderr) of `shapegate CMD --json` for case `name`."""
    with open(os.path.join(sgdir, "index.json")) as fh:
        row = json.load(fh).get(name, {}).get(cmd, {})
    try:
        with open(sg_file(sgdir, name, cmd)) as fh:
            obj = json.load(fh)
    except (OSError, ValueError):
        obj = None
    return obj, row.get("exit"), row.get("stderr", "")


def main_run(argv):
    import torch
    import torch.fx.experimental.symbolic_shapes as ss
    import torch.utils._pytree as pytree
    import torch.export.dynamic_shapes as tdyn
    from torch.utils._sympy.numbers import int_oo

    import logging
    import warnings
    torch._logging.set_logs(all=logging.CRITICAL)  # strict export logs each failure at ERROR
    warnings.filterwarnings("ignore")
    sys.path.insert(0, HERE)
    import scenarios
    import expect_12
    sys.path.insert(0, os.path.join(CORPUS, "gen"))
    import run_cases
    run_cases.load_module("registry", False)
    scenarios_12 = run_cases.load_module("scenarios_12", False)  # as recorded: /corpus/gen/...
    ver = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    if ver not in VERSIONS:
        sys.exit(f"reexport: no corpus for torch {torch.__version__}")

    def scenario(key):
        if key.startswith(STAGED):
            return scenarios_12.CASES.get(key[len(STAGED):])
        # the issue-12 cases shapegate answers right have moved from staging into the corpus
        return scenarios.CASES.get(key) or scenarios_12.CASES.get(key)

    args = list(argv)
    out_path = os.path.join(HERE, f"reexport-{ver}.txt")
    if "--out" in args:
        i = args.index("--out")
        out_path = args[i + 1]
        del args[i:i + 2]
    if not args:
        sys.exit("usage: reexport.py run SGDIR [--out FILE] [CASE...]")
    sgdir, selected = os.path.join(args[0], ver), args[1:]

    # every ShapeEnv created during an export, to read its guards afterwards
    envs = []
    orig_init = ss.ShapeEnv.__init__

    def se_init(self, *a, **k):
        orig_init(self, *a, **k)
        envs.append(self)
    ss.ShapeEnv.__init__ = se_init

    def num(v):
        if v is None:
            return None
        if v is int_oo or v == int_oo or (isinstance(v, float) and v == float("inf")):
            return "oo"
        try:
            return int(v)
        except (TypeError, ValueError):
            return str(v)

    def msg_of(ex):
        m = getattr(ex, "msg", None)
        return m if isinstance(m, str) else str(ex)

    def norm_msg(m):
        m = (m or "").split(TRAILER)[0]
        m = m.split("Suggested fixes:")[0]
        # source locations of the scenario scripts differ (corpus: /corpus/gen/..., here tools/),
        # and so do object addresses (`<function namedtuple at 0x7f...>`)
        m = re.sub(r" at 0x[0-9a-f]+>", " at 0x...>", m)
        m = re.sub(r"<class '[\w.]+\.(\w+)'>", r"<class '...\1'>", m)   # the scenario module's name
        return "\n".join(l for l in m.rstrip("\n").split("\n") if "Caused by:" not in l)

    def etype(ex):
        t = type(ex)
        return f"{t.__module__}.{t.__qualname__}"

    def export(built, ds, strict):
        torch._dynamo.reset()
        envs.clear()
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                ep = torch.export.export(built["model"], built["args"], built.get("kwargs") or {},
                                     dynamic_shapes=ds, strict=strict)
            ex = None
        except Exception as e:  # noqa: BLE001
            ep, ex = None, e
        guards = sorted({str(g.expr) for se in envs for g in se.guards})
        return ep, ex, guards

    def rc_json(ep):
        return {str(k): [num(v.lower), num(v.upper)] for k, v in ep.range_constraints.items()}

    def corpus_guards(name):
        with open(os.path.join(case_dir(ver, name), "guards.json")) as fh:
            g = json.load(fh)
        return sorted({gd["expr"] for se in g.get("shape_envs", []) for gd in se["guards"]})

    def spec_dims(model, args_, kwargs, ds):
        """{(id(tensor), dim): dim spec} for every dimension the spec names."""
        import inspect
        bound = inspect.signature(model.forward).bind(*args_, **kwargs).arguments
        res = {}

        def walk(spec, val):
            if spec is None:
                return
            if isinstance(val, torch.Tensor):
                items = spec.items() if isinstance(spec, dict) else enumerate(spec)
                for i, d in items:
                    if d is not None:
                        res[(id(val), int(i))] = d
            elif isinstance(val, dict):
                for k in val:
                    walk(spec.get(k) if isinstance(spec, dict) else None, val[k])
            elif isinstance(val, (list, tuple)):
                for i, v in enumerate(val):
                    walk(spec[i] if i < len(spec) else None, v)
        top = ds if isinstance(ds, dict) else dict(zip(bound, ds))
        for k, v in bound.items():
            walk(top.get(k), v)
        return res

    def check_ranges(built, ds, ep):
        """Compare torch's range constraints with the ranges of the spec's Dims. Returns a list
        of differences (empty: equal)."""
        model, args_, kwargs = built["model"], built["args"], built.get("kwargs") or {}
        want = spec_dims(model, args_, kwargs, ds)
        leaves = pytree.tree_leaves((args_, kwargs))
        ui = set(ep.graph_signature.user_inputs)
        phs = [n for n in ep.graph.nodes if n.op == "placeholder" and n.name in ui]
        rc = ep.range_constraints
        diffs, notes = [], []
        if len(phs) != len(leaves):
            # non-tensor inputs (int, float, bool, str, None) that torch bakes into the program have no
            # placeholder: pair the tensor leaves with the tensor placeholders, in order
            leaves = [x for x in leaves if isinstance(x, torch.Tensor)]
            phs = [p for p in phs if isinstance(p.meta.get("val"), torch.Tensor)]
        if len(phs) != len(leaves):
            return [f"{len(phs)} user inputs for {len(leaves)} input leaves"], []
        for leaf, ph in zip(leaves, phs):
            if not isinstance(leaf, torch.Tensor):
                continue
            shape = ph.meta["val"].shape
            for dim in range(leaf.dim()):
                d = want.get((id(leaf), dim))
                if d is None:
                    continue
                got = shape[dim]
                where = f"{ph.name}.shape[{dim}]"
                if isinstance(d, int):
                    if not isinstance(got, int) or got != d:
                        diffs.append(f"{where}: spec {d}, torch {got}")
                    continue
                if isinstance(d, tdyn._DimHint):
                    continue
                if isinstance(got, int):
                    diffs.append(f"{where}: spec {d.__name__}, torch static {got}")
                    continue
                expr = got.node.expr
                pairs = [(d, expr)]
                if isinstance(d, tdyn._DerivedDim):
                    root = d.root
                    syms = list(expr.free_symbols)
                    # traced as the bare symbol: torch made the derived dim the root (x = s + 1 for
                    # y = dx - 1); the root's range is compared where the root's own dim is
                    if len(syms) == 1 and expr != syms[0]:
                        pairs.append((root, syms[0]))
                for dd, e in pairs:
                    vr = rc.get(e)
                    if vr is None:
                        diffs.append(f"{where}: no range constraint for {e}")
                        continue
                    s = [num(dd.min), num(dd.max)]
                    t = [num(vr.lower), num(vr.upper)]
                    if dd is not d and s[0] in (0, 1) and t[0] == 2 and s[1] == t[1]:
                        # torch reports the root symbol of a derived dim with min 2 even when
                        # the spec's root min is 0 or 1 (and its program accepts that value)
                        notes.append(f"{dd.__name__} min {s[0]} shown as 2")
                        continue
                    if s != t:
                        diffs.append(f"{dd.__name__}: spec [{s[0]}, {s[1]}], torch {e} [{t[0]}, {t[1]}]")
        return diffs, notes

    def probe(built, ds, ep, kind="sg"):
        """Run the exported program (and the eager model) on inputs whose every spec root is at
        its min, then at its max (min + 5 when unbounded, or when the max is past what memory holds:
        a Dim up to sys.maxsize - 1), the other dims as in the example.
        Returns a list of failures of the exported program where the eager model runs."""
        model, args_, kwargs = built["model"], built["args"], built.get("kwargs") or {}
        try:
            with torch.no_grad():
                ep.module()(*args_, **kwargs)
        except Exception as e:  # noqa: BLE001 - torch's program cannot even take the example inputs
            tally["probe_skipped"] += 2
            details.append(f"{current['name']}: probe skipped: the exported program fails on the example inputs themselves "
                           f"({str(e).splitlines()[0][:120]})")
            return []
        want = spec_dims(model, args_, kwargs, ds)
        roots = {}

        def root_of(d):
            while isinstance(d, tdyn._DerivedDim):
                d = d.root
            return d
        for d in want.values():
            if not isinstance(d, int) and not isinstance(d, tdyn._DimHint):
                rt = root_of(d)
                roots[rt.__name__] = rt

        def value(d, at):
            if isinstance(d, tdyn._DerivedDim):
                return int(d.fn(value(d.root, at)))
            return at[d.__name__]
        fails = []
        for label in ("min", "max"):
            at = {}
            for n, rt in roots.items():
                lo = int(rt.min)
                at[n] = lo if label == "min" else (int(rt.max) if num(rt.max) != "oo" and int(rt.max) <= 1 << 20
                                                   else lo + 5)
            seen = {}

            def remake(t):
                if not isinstance(t, torch.Tensor) or t.dim() == 0:
                    return t
                shape = list(t.shape)
                for i in range(t.dim()):
                    d = want.get((id(t), i))
                    if d is not None and not isinstance(d, tdyn._DimHint):
                        shape[i] = d if isinstance(d, int) else value(d, at)
                new = seen.get(id(t))
                if new is None:
                    new = (torch.zeros(shape, dtype=t.dtype) if not t.is_floating_point()
                           else torch.randn(shape, dtype=t.dtype))
                    seen[id(t)] = new
                return new
            a2, k2 = pytree.tree_map(remake, (tuple(args_), dict(kwargs)))
            try:
                with torch.no_grad():
                    model(*a2, **k2)
            except Exception:  # noqa: BLE001 - the model itself does not take these sizes
                tally["probe_skipped"] += 1
                continue
            tally[f"probe_run_{kind}"] += 1
            try:
                with torch.no_grad():
                    ep.module()(*a2, **k2)
            except Exception as e:  # noqa: BLE001
                shown = ", ".join(f"{k}={v}" for k, v in list(at.items())[:3]) + (", ..." if len(at) > 3 else "")
                fails.append(f"roots at {label} ({shown}): {str(e).splitlines()[0][:160]}")
                tally[f"probe_fail_{kind}"] += 1
        return fails

    def py_spec(text, built):
        # the user's names (a namedtuple class the spec is built with) are the scenario module's
        ns = {k: v for k, v in vars(scenarios_12).items() if isinstance(v, type)}
        # a namedtuple whose class the trace does not name is printed with a placeholder that a comment
        # defines ("# p_type: the namedtuple class of input ['p'] ..."): the user's class, i.e. the type of
        # that input
        import inspect
        for name, path in re.findall(r"^# (\w+): the namedtuple class of input (\S+) ", text, re.M):
            bound = inspect.signature(built["model"].forward).bind(*built["args"], **(built.get("kwargs") or {}))
            ns[name] = type(eval("A" + path, {"A": bound.arguments}))  # noqa: S307 - a path shapegate printed
        exec(compile(text, "<shapegate>", "exec"), ns)  # noqa: S102 - shapegate's own output
        return ns["dynamic_shapes"]

    def dim_rewrite(info, text):
        """A repair of a Dim torch refused to build before recording any input: shapegate prints
        `repaired_Dim`, a drop-in for Dim; the scenario is rebuilt with it in place of Dim. Returns the
        built scenario, or raises."""
        ns = {}
        exec(compile(text, "<shapegate>", "exec"), ns)  # noqa: S102 - shapegate's own output
        g = info["fn"].__globals__
        old = g["Dim"]
        g["Dim"] = ns["repaired_Dim"]
        try:
            torch.manual_seed(0)
            return info["fn"]()
        finally:
            g["Dim"] = old

    def try_spec(built, text, strict):
        """Export with shapegate's Python; returns (status, detail)."""
        try:
            ds = py_spec(text, built)
        except Exception as e:  # noqa: BLE001
            return "FAIL", f"python does not run: {type(e).__name__}: {e}"
        return try_ds(built, ds, strict)

    def try_ds(built, ds, strict):
        ep, ex, _ = export(built, ds, strict)
        if ex is not None:
            first = norm_msg(msg_of(ex)).strip().split("\n")
            return "FAIL", f"{etype(ex).split('.')[-1]}: {' / '.join(first[:3])[:400]}"
        diffs, notes = check_ranges(built, ds, ep)
        if diffs:
            return "RANGES", "; ".join(diffs[:4]) + (f" (+{len(diffs) - 4})" if len(diffs) > 4 else "")
        fails = probe(built, ds, ep)
        if fails:
            return "BOUNDS", "; ".join(fails)
        return "ok", "; ".join(notes)

    lines, details = [], []
    current = {"name": None}
    tally = {"repro": 0, "cases": 0, "spec_ok": 0, "spec_tried": 0, "spec_none": 0,
             "fix_ok": 0, "fix_tried": 0, "fix_none": 0, "refine_agree": 0, "refine_tried": 0,
             "pred_agree": 0, "pred_tried": 0, "probe_run_sg": 0, "probe_fail_sg": 0,
             "probe_run_torch": 0, "probe_fail_torch": 0, "probe_skipped": 0,
             "req": 0, "req_ok": 0, "req_none": 0, "req_bad": 0}
    not_repro, spec_bad, fix_bad, refine_bad, pred_bad, req_bad = [], [], [], [], [], []

    for name in case_names(ver, selected):
        current["name"] = name
        tally["cases"] += 1
        with open(os.path.join(case_dir(ver, name), "case.json")) as fh:
            c = json.load(fh)
        info = scenario(name)
        strict = bool(info and info["strict"])
        cols = []
        # ---- (a) reproduce the corpus
        why = []
        built = None
        if info is None:
            why.append("no scenario")
        else:
            torch.manual_seed(0)
            try:
                built = info["fn"]()
            except Exception as e:  # noqa: BLE001
                if c.get("outcome") == "unsupported":
                    if f"{type(e).__module__}.{type(e).__qualname__}" != c.get("error_type"):
                        why.append(f"unsupported with {type(e).__name__}, the case with {c.get('error_type')}")
                elif c.get("phase") != "spec_construction":
                    why.append(f"scenario raised {type(e).__name__}: {e}")
                elif norm_msg(str(e)) != norm_msg(c.get("error_message")):
                    why.append("spec construction message differs")
        ep = ex = None
        if built is not None:
            built["model"].eval()
            ep, ex, guards = export(built, built.get("dynamic_shapes"), strict)
            outcome = "ok" if ex is None else "error"
            if c.get("phase") == "spec_construction":
                why.append("corpus fails while building the spec, the scenario does not")
            elif outcome != c["outcome"]:
                why.append(f"outcome {outcome}, corpus {c['outcome']}"
                           + (f" ({etype(ex)}: {norm_msg(msg_of(ex))[:200]})" if ex else ""))
            elif ex is not None:
                if etype(ex) != c.get("error_type"):
                    why.append(f"error type {etype(ex)}, corpus {c.get('error_type')}")
                if norm_msg(msg_of(ex)) != norm_msg(c.get("error_msg_attr") or c.get("error_message")):
                    why.append("message differs")
            if c.get("phase") != "spec_construction" and guards != corpus_guards(name):
                cg = corpus_guards(name)
                why.append(f"guards differ (+{sorted(set(guards) - set(cg))[:3]} -{sorted(set(cg) - set(guards))[:3]})")
            if ep is not None and c["outcome"] == "ok" and rc_json(ep) != c.get("range_constraints"):
                why.append(f"range constraints {rc_json(ep)}, corpus {c.get('range_constraints')}")
        if why:
            not_repro.append((name, why))
            cols.append("repro=NO")
        else:
            tally["repro"] += 1
            cols.append("repro=yes")

        def try_tallied(kind, python, bad):
            """Re-export `python` (shapegate's spec or fix) in torch; tally and record it under `kind`."""
            tally[f"{kind}_tried"] += 1
            st, det = try_spec(built, python, strict)
            cols.append(f"{kind}={st}")
            if st == "ok":
                tally[f"{kind}_ok"] += 1
                if det:
                    details.append(f"{name}: {kind} ok; {det}")
            else:
                bad.append((name, st, det, python))
            return st

        # ---- (b) shapegate spec
        sj, sexit, serr = load_sg(sgdir, name, "spec")
        spec_st = fix_st = None
        if built is None:
            cols.append("spec=-")
        elif sj and sj.get("verified") and sj.get("python"):
            spec_st = try_tallied("spec", sj["python"], spec_bad)
        else:
            tally["spec_none"] += 1
            why_none = (sj or {}).get("notes") or [serr]
            cols.append(f"spec=none(exit {sexit})")
            details.append(f"{name}: no spec from shapegate (exit {sexit}): {'; '.join(why_none)[:200]}")

        # ---- (c) shapegate check fixes
        cj, cexit, cerr = load_sg(sgdir, name, "check")
        if cj is None and c["outcome"] == "error":
            cols.append(f"fix=none(check exit {cexit})")
            tally["fix_none"] += 1
            details.append(f"{name}: shapegate check gave no JSON (exit {cexit}): {cerr[:200]}")
        elif cj and (cj.get("verdict") == "violations"
                     or (cj.get("verdict") in ("invalid_spec", "torch_failed")
                         and ((cj.get("fixes") or {}).get("verified") or (cj.get("fixes") or {}).get("untraced")))):
            fx = cj.get("fixes") or {}
            # untraced: a spec torch refused before tracing, repaired to pass its spec checks and printed
            # as "not verified" (nothing was traced to verify it against); torch decides here
            if (built is None and info is not None and fx.get("untraced") and fx.get("python")
                    and "def repaired_Dim(" in fx["python"]):
                # the spec raised while its Dims were built: rebuild the scenario with shapegate's repaired_Dim
                tally["fix_tried"] += 1
                try:
                    built_fix = dim_rewrite(info, fx["python"])
                    built_fix["model"].eval()
                    st, det = try_ds(built_fix, built_fix.get("dynamic_shapes"), strict)
                except Exception as e:  # noqa: BLE001
                    st, det = "FAIL", f"scenario with repaired_Dim raised {type(e).__name__}: {e}"
                cols.append(f"fix={st}(untraced, repaired_Dim)")
                if st == "ok":
                    tally["fix_ok"] += 1
                    fix_st = st
                else:
                    fix_st = st
                    fix_bad.append((name, st, det, fx["python"]))
            elif built is not None and (fx.get("verified") or fx.get("untraced")) and fx.get("python"):
                fix_st = try_tallied("fix", fx["python"], fix_bad)
                if fx.get("untraced"):
                    cols[-1] += "(untraced)"
            else:
                tally["fix_none"] += 1
                cols.append("fix=none")
                details.append(f"{name}: refuted, no verified fix: {'; '.join(fx.get('notes') or [])[:200]}")
        else:
            cols.append(f"fix=-({(cj or {}).get('verdict')})")

        # ---- what issue 12 requires: a fix for a refuted case, a spec for a proved one
        kind = expect_12.error_kind(c)
        verdict = (cj or {}).get("verdict")
        if kind in ("data_dependent", "unsupported"):
            cols.append("req=-")
        else:
            tally["req"] += 1
            # proved -> a spec; refuted (or invalid, unknown) -> a fix; no answer at all (unreadable):
            # what torch's own outcome calls for
            need = "spec" if verdict == "ok" or (verdict is None and c.get("outcome") == "ok") else "fix"
            got = spec_st if need == "spec" else fix_st
            if got == "ok":
                tally["req_ok"] += 1
                cols.append("req=ok")
            else:
                tally["req_none" if got is None else "req_bad"] += 1
                cols.append(f"req=FAIL({need} {'none' if got is None else got})")
                req_bad.append((name, need, got, verdict))

        # ---- (d) torch's own suggested fixes, applied with torch's refine
        cref = c.get("refined")
        if built is not None and c.get("suggested_fixes") and cref:
            tally["refine_tried"] += 1
            cur_ds = built.get("dynamic_shapes")
            cur_msg = c.get("error_msg_attr") or c.get("error_message")
            mine, mine_rc = "refine_failed", None
            for _ in range(3):
                try:
                    cur_ds = tdyn.refine_dynamic_shapes_from_suggested_fixes(cur_msg, cur_ds)
                except Exception as e:  # noqa: BLE001
                    mine = "refine_failed"
                    details.append(f"{name}: refine raised {type(e).__name__}: {str(e)[:160]}")
                    break
                ep3, ex3, _ = export(built, cur_ds, strict)
                if ex3 is None:
                    mine, mine_rc = "ok", rc_json(ep3)
                    for f in probe(built, cur_ds, ep3, "torch"):
                        details.append(f"{name}: torch's refined spec re-exports, but its program rejects {f}")
                    break
                mine = "error"
                if "Suggested fixes:" not in str(ex3):
                    break
                cur_msg = msg_of(ex3)
            theirs = cref.get("final_outcome")
            rounds = cref.get("rounds") or []
            theirs_rc = rounds[-1].get("range_constraints") if rounds else None
            agree = mine == theirs and (mine != "ok" or mine_rc == theirs_rc)
            cols.append(f"refine={mine}{'' if agree else f'(corpus {theirs})'}")
            if agree:
                tally["refine_agree"] += 1
            else:
                refine_bad.append((name, mine, theirs, mine_rc, theirs_rc))
            pred = ((cj or {}).get("fixes") or {}).get("torch") or {}
            if pred.get("verdict"):
                tally["pred_tried"] += 1
                ok_pred = (pred["verdict"] == "ok") == (theirs == "ok")
                cols.append(f"sg-pred={pred['verdict']}{'' if ok_pred else '(DIFFERS)'}")
                if ok_pred:
                    tally["pred_agree"] += 1
                else:
                    pred_bad.append((name, pred["verdict"], theirs, pred.get("why", "")))
        else:
            cols.append("refine=-")
        line = f"{name:40s} " + "  ".join(cols)
        print(line, flush=True)
        lines.append(line)

    summary = [
        f"required (issue 12): {tally['req_ok']} of {tally['req']} cases re-export ok with shapegate's fix (refuted) "
        f"or spec (proved); failures: {tally['req_none']} without a fix or spec, {tally['req_bad']} whose fix or spec "
        f"does not re-export ({tally['cases'] - tally['req']} cases excluded: torch stopped at a data-dependent guard "
        f"or the case is unsupported by this torch)",
        f"{tally['repro']} of {tally['cases']} cases reproduce the corpus (outcome, message, guards, ranges)",
        f"{tally['spec_ok']} of {tally['spec_tried']} spec re-exports ok "
        f"({tally['spec_none']} cases without a spec from shapegate)",
        f"{tally['fix_ok']} of {tally['fix_tried']} fix re-exports ok "
        f"({tally['fix_none']} refuted cases without a verified fix)",
        f"{tally['probe_run_sg'] - tally['probe_fail_sg']} of {tally['probe_run_sg']} runs of programs exported "
        f"with shapegate's specs/fixes accept inputs at the roots' min/max "
        f"(torch's refined programs: {tally['probe_run_torch'] - tally['probe_fail_torch']} of "
        f"{tally['probe_run_torch']}; {tally['probe_skipped']} runs skipped: the eager model fails on them)",
        f"{tally['refine_agree']} of {tally['refine_tried']} torch-refine re-exports agree with the corpus",
        f"{tally['pred_agree']} of {tally['pred_tried']} shapegate predictions of torch's fixes agree with torch",
    ]
    tail = []
    for name, need, got, verdict in req_bad:
        tail.append(f"required {need} {'missing' if got is None else got}: {name} (shapegate check verdict {verdict})")
    for name, why in not_repro:
        tail.append(f"not reproduced: {name}: {'; '.join(why)}")
    for name, st, det, py in spec_bad:
        tail.append(f"spec {st}: {name}: {det}")
    for name, st, det, py in fix_bad:
        tail.append(f"fix {st}: {name}: {det}")
    for name, mine, theirs, mrc, trc in refine_bad:
        tail.append(f"refine differs: {name}: here {mine} {mrc}, corpus {theirs} {trc}")
    for name, v, theirs, why in pred_bad:
        tail.append(f"prediction differs: {name}: shapegate says torch's fixes give '{v}', torch re-export: {theirs}"
                    + (f" ({why[:200]})" if why else ""))
    tail += details
    import torch as _t
    with open(os.path.join(sgdir, "index.json")) as fh:
        sgver = json.load(fh).get("shapegate", "?")
    head = [f"# tools/reexport.py run on torch {_t.__version__} with the outputs of {sgver} (docs/reexport.md)",
            "# cases: the corpus (tests/corpus/cases*) and the staged issue-12 cases (staged/NAME, tests/corpus/staging/)",
            "# req = what issue 12 requires: the fix (refuted) or the spec (proved) re-exports; FAIL when missing or failing",
            "# columns: repro = the scenario reproduces the corpus; spec = re-export with `shapegate spec`;",
            "# fix = with `shapegate check --json` fixes.python; refine = torch's own suggested fixes;",
            "# sg-pred = shapegate's prediction of that (fixes.torch.verdict)"]
    text = "\n".join(head + lines + ["", "summary:"] + ["  " + s for s in summary] + [""] + tail) + "\n"
    print("")
    print("\n".join(summary))
    print("\n".join(tail))
    if not selected:
        with open(out_path, "w") as fh:
            fh.write(text)
        print(f"wrote {out_path}")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("prepare", "run"):
        sys.exit(__doc__)
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2:])
    else:
        main_run(sys.argv[2:])
