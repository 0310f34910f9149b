#!/bin/sh
# shapegate check on the model-sized traces of bench/traces.tsv, whole process, with torch's own
# time side by side (bench/scale.py; bench/README.md "scale"). Run from anywhere.
exec python3 "$(dirname "$0")/scale.py" "$@"
