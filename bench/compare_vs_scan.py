#!/usr/bin/env python3
"""`compare` against `scan` of the same sessions, side by side in one run (issue 14: compare must
cost at most 1.1x a scan).

    python bench/compare_vs_scan.py [--dbname nomos_forensics_bench] [--at DATE] [--repeat 3]

Alternates `nomos-forensics scan --format jsonl > /dev/null` and `nomos-forensics compare --at
DATE --format json > /dev/null` over every session (so drift hits both alike), after one untimed
warm-up of each, and prints each one's median wall time and the ratio compare/scan. --at
defaults to the middle of the sessions' created_at range. Pass --jobs to time both with workers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import psycopg.conninfo

HERE = Path(__file__).resolve().parent
SCRIPT = Path(sys.executable).with_name("nomos-forensics")


def timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run([str(SCRIPT), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args[:1])} failed ({done.returncode}): {done.stderr.strip()}")
    return wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--dbname", default="nomos_forensics_bench")
    parser.add_argument("--at", default=None, help="split point (default: middle of created_at)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--no-warmup", action="store_true")
    args = parser.parse_args(argv)
    dsn = psycopg.conninfo.make_conninfo(args.server, dbname=args.dbname)
    with psycopg.connect(dsn) as conn:
        sessions, messages, low, high = conn.execute(
            "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM messages),"
            " min(created_at), max(created_at) FROM sessions").fetchone()
    at = args.at or (low + (high - low) / 2).isoformat()
    env = {**os.environ, "NOMOS_FORENSICS_DSN": dsn, "NOMOS_FORENSICS_LOAD_PLUGINS": ""}
    jobs = ["--jobs", str(args.jobs)]
    commands = {
        "scan": ["scan", "--format", "jsonl", *jobs],
        "compare": ["compare", "--at", at, "--format", "json", *jobs],
    }
    print(f"{args.dbname}: {sessions:,} sessions, {messages:,} messages; compare --at {at}; --jobs {args.jobs}",
          flush=True)
    if not args.no_warmup:
        for name, command in commands.items():
            print(f"warm-up {name}: {timed(command, env):.1f} s", flush=True)
    walls: dict[str, list[float]] = {name: [] for name in commands}
    for run in range(args.repeat):
        for name, command in commands.items():
            walls[name].append(timed(command, env))
            print(f"run {run + 1} {name}: {walls[name][-1]:.1f} s", flush=True)
    scan, compare = statistics.median(walls["scan"]), statistics.median(walls["compare"])
    print()
    print(f"{'measure':<10} {'median':>9}  runs")
    for name in commands:
        print(f"{name:<10} {statistics.median(walls[name]):>8.1f}s  {', '.join(f'{w:.1f}' for w in walls[name])}")
    print(f"compare / scan = {compare / scan:.2f}x  (target <= 1.10x)")
    print(json.dumps({"bench": "compare_vs_scan", "dbname": args.dbname, "sessions": sessions, "messages": messages,
                      "jobs": args.jobs, "scan_s": round(scan, 2), "compare_s": round(compare, 2),
                      "ratio": round(compare / scan, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
