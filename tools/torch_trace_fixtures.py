"""Make tests/data/torch_trace/ from real torch runs: python3 tools/torch_trace_fixtures.py RECDIR

RECDIR/VERSION/NAME/{log,capture}/ as written inside a reference chroot by
    tools/refenv_run.sh CHROOT env PYTHONPATH=python TORCH_TRACE=RECDIR/V/NAME/log \\
        python3 -m shapegate capture --out RECDIR/V/NAME/capture -- tests/e2e/scripts/NAME.py
For each (VERSION, NAME) it writes, under tests/data/torch_trace/VERSION/:
  NAME.log.gz          the TORCH_TRACE log (gzip; the one log file of the run)
  NAME-N.json          the capture of export call N of the same run (a v1 trace)
  NAME-N.spec.json     that call's dynamic_shapes in the form the log's trace matches (log_spec)
tests/test_torch_trace.sh checks that `shapegate check` gives the same verdict on both.
Needs build/shapegate (for `shapegate trace` of the log). Standard library only.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from run import log_spec  # noqa: E402

BIN = os.environ.get("SHAPEGATE_BIN", os.path.join(ROOT, "build", "shapegate"))


def main(rec):
    for v in sorted(os.listdir(rec)):
        out = os.path.join(ROOT, "tests", "data", "torch_trace", v)
        os.makedirs(out, exist_ok=True)
        for name in sorted(os.listdir(os.path.join(rec, v))):
            d = os.path.join(rec, v, name)
            logs = [f for f in os.listdir(os.path.join(d, "log")) if f.endswith(".log")]
            caps = sorted((f for f in os.listdir(os.path.join(d, "capture")) if f.endswith(".json")),
                          key=lambda f: int(f.split("-")[0]))
            if len(logs) != 1 or not caps:
                print(f"{v} {name}: skipped ({len(logs)} logs, {len(caps)} captures)")
                continue
            gz = os.path.join(out, name + ".log.gz")
            with open(os.path.join(d, "log", logs[0]), "rb") as src, gzip.GzipFile(gz, "wb", mtime=0) as dst:
                shutil.copyfileobj(src, dst)
            for i, c in enumerate(caps, 1):
                with open(os.path.join(d, "capture", c)) as fh:
                    trace = json.load(fh)
                frame = ["--frame", str(i)] if len(caps) > 1 else []
                p = subprocess.run([BIN, "trace", *frame, gz], capture_output=True, text=True, check=True)
                shutil.copy(os.path.join(d, "capture", c), os.path.join(out, f"{name}-{i}.json"))
                with open(os.path.join(out, f"{name}-{i}.spec.json"), "w") as fh:
                    json.dump(log_spec(trace, json.loads(p.stdout)), fh)
                    fh.write("\n")
            print(f"{v} {name}: {len(caps)} call(s), log {os.path.getsize(gz)} bytes gzipped")


if __name__ == "__main__":
    main(sys.argv[1])
