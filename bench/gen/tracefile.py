"""Writing a generated v1 trace (bench/gen/synth.py, bench/gen/tile.py): compact JSON, one line
of counts on stdout."""
import json


def write_trace(path, t):
    """Write trace `t` (a v1 trace as a dict) to `path` as compact JSON and print its counts."""
    with open(path, "w") as fh:
        json.dump(t, fh, separators=(",", ":"))
        fh.write("\n")
    print(f"{path}: {len(t['symbols'])} symbols, {len(t['guards'])} guards, {len(t['inputs'])} dims")
