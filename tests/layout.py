#!/usr/bin/env python3
"""layout.py - the module layout docs/architecture.md draws, checked on the source tree.

    python3 tests/layout.py [ROOT]

Reads every #include "module/..." in the library's module folders and checks:
  - the module graph has no cycle;
  - the front ends (CLI, service) include only the public headers (include/shapegate/), the
    CLI also the service it starts, the service also util/ (hashing);
  - Z3 (z3.h, Z3_ identifiers) appears only in solver/, and in the files named as debts
    (Z3_DEBTS: each must still hold Z3, so a debt paid is struck from the list);
  - analysis/ reads no Z3-typed field of sg_problem (it asks solver/query.h for terms);
  - graph/ does not include solver/ (the engine answers its point searches);
  - no module outside the engine and the CLI reaches the engine.
Prints one line per problem and ends with "N passed, N failed".
"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
MODULES = ["util", "expr", "trace", "solver", "analysis", "torch", "report", "engine", "graph",
           "archive", "cli", "service"]
# Where Z3 may appear: the solver module. The analyses ask it through solver/query.h. A file
# outside solver/ that still built Z3 terms itself would be listed below as a named debt
# (docs/architecture.md, "Known debts"); there is none.
Z3_ALLOWED = {"solver"}
Z3_DEBTS = set()
# sg_problem's fields that hold Z3 types (solver/problem.h): analysis/ reads none of them, it
# asks for the terms through solver/query.h (sg_q_dim, sg_q_holds, sg_q_defs, ...).
# A read is `NAME->field` for a NAME declared `sg_problem *NAME` in the file, or `->p->field` (the
# check context's problem); a field of the same name in another struct is not one.
PROBLEM_Z3_FIELDS = r'(ctx|smt|dvar|spec|spec_lit|defs|xvar|inc|solver|keep|sym_def|holds|lit)\b'
PROBLEM_VAR = re.compile(r'\bsg_problem\s*\*\s*(?:const\s+)?(\w+)')


def problem_z3_read(text):
    """The first read of a Z3-typed sg_problem field in C `text` (comments removed), or None."""
    names = sorted(set(PROBLEM_VAR.findall(text)))
    bases = [r'(?:->|\.)p->'] + [r'\b' + re.escape(n) + r'->' for n in names]
    return re.search(r'(?:' + '|'.join(bases) + r')' + PROBLEM_Z3_FIELDS, text)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
Z3 = re.compile(r'\bZ3_[a-z]|#\s*include\s*<z3\.h>')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)


def sources(module):
    top = os.path.join(ROOT, module)
    for base, _, files in os.walk(top):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(base, f)


def main():
    edges = {m: set() for m in MODULES}
    z3_in = {}
    passed = failed = 0

    def check(ok, msg):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL " + msg)

    for m in MODULES:
        for path in sources(m):
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            for line in text.splitlines():
                inc = INCLUDE.match(line)
                if inc and inc.group(1) != m:
                    edges[m].add((inc.group(1), os.path.relpath(path, ROOT)))
            if Z3.search(COMMENT.sub(' ', text)):
                z3_in.setdefault(m, []).append(os.path.relpath(path, ROOT))
            if m == "analysis":
                hit = problem_z3_read(COMMENT.sub(' ', text))
                check(not hit, f"{os.path.relpath(path, ROOT)} reads a Z3-typed field of sg_problem "
                               f"({hit.group(0) if hit else ''}): ask solver/query.h")

    graph = {m: {t for t, _ in edges[m] if t in edges} for m in MODULES}
    # a cycle: depth-first search with colours
    state, stack, cycle = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == 1 and not cycle:
                cycle.extend(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in MODULES:
        if m not in state:
            visit(m)
    check(not cycle, "module include cycle: " + " -> ".join(cycle))

    # the front ends sit on the public API; the CLI also starts the service
    for t, path in sorted(edges["cli"]):
        check(t in ("shapegate", "service"), f"{path} includes {t}/ (the CLI uses the public API only)")
    for t, path in sorted(edges["service"]):
        check(t in ("shapegate", "util"), f"{path} includes {t}/ (the service uses the public API only)")
    for m, files in sorted(z3_in.items()):
        if m in Z3_ALLOWED:
            continue
        rest = [f for f in files if f.replace(os.sep, "/") not in Z3_DEBTS]
        check(not rest, f"Z3 used outside the solver (ask solver/query.h): {', '.join(rest)}")
    found = {f.replace(os.sep, "/") for files in z3_in.values() for f in files}
    for debt in sorted(Z3_DEBTS):
        check(debt in found, f"{debt} no longer uses Z3: strike it from Z3_DEBTS in tests/layout.py")
    # graph/ holds no solver: the engine answers its point searches (graph/verify.h)
    for t, path in sorted(edges["graph"]):
        check(t != "solver", f"{path} includes solver/ (graph/ asks the engine: graph/verify.h)")
    for m in MODULES:
        if m in ("engine", "cli", "service"):
            continue
        for t, path in sorted(edges[m]):
            check(t != "engine", f"{path} reaches the engine module from below it")
    check(True, "layout read")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
