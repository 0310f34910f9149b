#!/usr/bin/env python3
"""How shapegate's cost grows with the trace, 10 to 10,000 inputs (issue 14): a table and a plot.

    bench/growth.py [--shapegate PATH] [--traces DIR] [--runs N] [--sizes 10,30,...]
                    [--families synth,sweep] [--svg bench/growth.svg] [--timeout MS]

Two families, each checked whole process (`shapegate check --json`, inference and fixes on, the
CLI defaults but --timeout) at every size:

- synth: bench/gen/synth.py --symbols N (N rounded up to a multiple of 4), N list inputs with ten guards each (linear and
  non-linear, Mod / FloorDiv / Max / Or, derived dims), every dim proved: the cost of deciding.
- sweep: the recorded torch 2.14 sweep traces up to 1,000 inputs (bench/traces/sweepN), tiled
  from sweep1000 by bench/gen/tile.py beyond; every dim refuted, so every dim needs a
  counterexample, a conflicting set and a fix: the cost of explaining. Its JSON report grows as
  n^2 (each refuted dim's counterexample lists every input's sizes, docs/check.md).

Per run: the suggested fix lines (v: verified), wall and CPU seconds (user + system, wait4), peak RSS of the process, Z3 queries, the
verdict and dim counts, the size of the JSON report. The median of --runs (default 1) is printed as
a Markdown table (paste it into bench/RESULTS.md) with the growth exponent between consecutive
sizes (log ratio of CPU over log ratio of inputs: 1 is linear), and drawn as a log-log SVG plot of
CPU seconds against inputs, one line per family (--svg; no plotting library needed).
Nothing here is a test: it prints figures and always exits 0 unless misused.
"""

import argparse
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import scale  # noqa: E402  (the child-process runner and summaries)

SIZES = [10, 30, 100, 300, 1000, 3000, 10000]


def trace_for(family, n, traces):
    """(path, inputs) of family's trace of about n inputs, made (or unpacked) if missing; path None
    if it cannot be."""
    os.makedirs(traces, exist_ok=True)
    if family == "synth":
        n = -(-n // 4) * 4  # synth.py makes groups of four inputs
        path = os.path.join(traces, f"growth_synth{n}.json")
        if not os.path.exists(path):
            subprocess.run([sys.executable, os.path.join(HERE, "gen", "synth.py"), "--symbols", str(n), path],
                           check=True, stdout=subprocess.DEVNULL)
        return path, n
    recorded = scale.ensure(traces, f"sweep{n}", "torch", f"sweep{n}") if n <= 1000 else None
    if recorded:
        return recorded, n
    src = scale.ensure(traces, "sweep1000", "torch", "sweep1000")
    if not src:
        return None, n
    path = os.path.join(traces, f"growth_sweep{n}.json")
    if not os.path.exists(path):
        subprocess.run([sys.executable, os.path.join(HERE, "gen", "tile.py"), src, str(n), path],
                       check=True, stdout=subprocess.DEVNULL)
    return path, n


def svg_plot(series, path):
    """series: {family: [(inputs, cpu_s)]} -> a log-log line plot as SVG text written to path."""
    pts = [p for s in series.values() for p in s if p[1] > 0]
    if not pts:
        return
    W, H, L, R, T, B = 640, 420, 70, 20, 30, 50
    x0, x1 = math.log10(min(p[0] for p in pts)), math.log10(max(p[0] for p in pts))
    y0 = math.floor(math.log10(min(p[1] for p in pts)))
    y1 = math.ceil(math.log10(max(p[1] for p in pts)))
    x1 = x1 if x1 > x0 else x0 + 1
    y1 = y1 if y1 > y0 else y0 + 1

    def X(v):
        return L + (math.log10(v) - x0) / (x1 - x0) * (W - L - R)

    def Y(v):
        return H - B - (math.log10(v) - y0) / (y1 - y0) * (H - T - B)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" '
           f'font-size="12">', f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="18" text-anchor="middle">shapegate check, whole process: CPU seconds '
           f'against inputs (log-log)</text>']
    for e in range(y0, y1 + 1):
        y = Y(10.0 ** e)
        out.append(f'<line x1="{L}" y1="{y:.1f}" x2="{W - R}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{10.0 ** e:g} s</text>')
    last = None
    for n in sorted({p[0] for p in pts}):
        x = X(n)
        out.append(f'<line x1="{x:.1f}" y1="{T}" x2="{x:.1f}" y2="{H - B}" stroke="#eee"/>')
        if last is None or x - last >= 30:  # a label only where it does not run into the last one
            out.append(f'<text x="{x:.1f}" y="{H - B + 16}" text-anchor="middle">{n:,}</text>')
            last = x
    out.append(f'<text x="{W / 2}" y="{H - 12}" text-anchor="middle">inputs (10 guards per input in '
               f'synth; ~4 per input in sweep)</text>')
    # a dotted linear-growth reference through each family's first point
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    for k, (fam, s) in enumerate(sorted(series.items())):
        s = [p for p in s if p[1] > 0]
        if not s:
            continue
        c = colors[k % len(colors)]
        line = " ".join(f"{X(n):.1f},{Y(v):.1f}" for n, v in s)
        out.append(f'<polyline points="{line}" fill="none" stroke="{c}" stroke-width="2"/>')
        for n, v in s:
            out.append(f'<circle cx="{X(n):.1f}" cy="{Y(v):.1f}" r="3" fill="{c}"/>')
        n0, v0 = s[0]
        n1 = s[-1][0]
        v1 = v0 * n1 / n0
        out.append(f'<line x1="{X(n0):.1f}" y1="{Y(v0):.1f}" x2="{X(n1):.1f}" y2="{Y(v1):.1f}" stroke="{c}" '
                   f'stroke-dasharray="3,4"/>')
        out.append(f'<text x="{L + 10}" y="{T + 16 + 16 * k}" fill="{c}">{fam} (dotted: linear growth from '
                   f'its first point)</text>')
    out.append("</svg>")
    with open(path, "w") as fh:
        fh.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapegate", default=os.path.join(ROOT, "build", "shapegate"))
    ap.add_argument("--traces", default=os.path.join(ROOT, "build", "scale-traces"))
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=60000)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--families", default="synth,sweep")
    ap.add_argument("--svg", default=os.path.join(HERE, "growth.svg"))
    a = ap.parse_args()
    if not os.access(a.shapegate, os.X_OK):
        sys.exit(f"growth: no shapegate binary at {a.shapegate}")
    sizes = [int(s) for s in a.sizes.split(",")]
    series = {}
    print("| family | inputs | verdict (prv/ref/unk) | fixes (v: verified) | queries | wall s | CPU s | peak MiB | "
          "report MB | growth |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for fam in a.families.split(","):
        prev = None
        for n in sizes:
            path, n = trace_for(fam, n, a.traces)
            if not path:
                print(f"| {fam} | {n:,} | (no trace) | | | | | | | |")
                continue
            info = scale.check(a.shapegate, path, a.timeout, a.runs)
            s = scale.summarise(info)
            cpu = info["cpu"]
            grow = "-"
            if prev and cpu > 0 and prev[1] > 0:
                grow = "%.2f" % (math.log(cpu / prev[1]) / math.log(n / prev[0]))
            rc = info.get("rc")
            verdict = "killed" if rc is None else "%s %d/%d/%d" % (s["verdict"], s["proved"], s["refuted"],
                                                                   s["unknown"])
            fixes = "%d%s" % (s["fixes"], "v" if s["verified"] else "")
            print(f"| {fam} | {n:,} | {verdict} | {fixes} | {scale.fmt(s['queries'], '%d')} | {info['wall']:.3f} | "
                  f"{cpu:.3f} | {info['peak_kib'] / 1024:.0f} | {len(info['out']) / 1e6:.2f} | {grow} |",
                  flush=True)
            series.setdefault(fam, []).append((n, cpu))
            prev = (n, cpu)
    if a.svg:
        svg_plot(series, a.svg)
        print(f"\nplot: {a.svg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
