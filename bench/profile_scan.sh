#!/usr/bin/env sh
# Profile one `nomos-forensics scan --format jsonl` on the bench database: cProfile (top 25 by
# own time and by cumulative time) and, when py-spy is available, a sampling profile including
# the time spent waiting on the server. Extra arguments go to bench/run.py, e.g.
#   bench/profile_scan.sh --dbname nomos_forensics_bench_x2 --scan-arg=--limit=2000
# py-spy: `pip install --target bench/out/tools py-spy` (bench/out/ is not versioned).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-"$here/../.venv/bin/python"}
[ -x "$py" ] || py=python3
exec "$py" "$here/run.py" --profile "$@"
