"""One enormous session (issue 36, F6): peak memory, output size and time of `review` (json,
html) and `scan` on a session of a million tiny messages, against the targets (250 MB RSS,
2 MB of output), each command in a process of its own.

    .venv/bin/python bench/big_session.py --dsn postgresql://postgres@127.0.0.1:5432/postgres
    .venv/bin/python bench/big_session.py --dsn ... --messages 200000 --keep   # smaller; keep the DB

Two sessions are made: a quiet one (user and assistant lines) and a noisy one, every message of
which a rule points at (repeated corrections, blank replies, replies declining to act), so that
evidence, not only messages, has to stay bounded.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from nomos_forensics import devdb

QUIET, NOISY = "b16b16b1-0000-4000-8000-000000000001", "b16b16b1-0000-4000-8000-000000000002"
RSS_TARGET_MB, OUTPUT_TARGET_MB = 250, 2

# the CLI in a child process that reports its own peak RSS (kB on Linux) on its last stderr line
CHILD = ("import resource, sys\nfrom nomos_forensics.cli import run\ncode = run(sys.argv[1:])\n"
         "sys.stdout.flush()\nprint('maxrss', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
         "sys.exit(code)")


def build(admin: str, messages: int) -> str:
    dsn = devdb.create_database(admin, prefix="nomos_forensics_bigsession")
    devdb.apply_migrations(dsn)
    with psycopg.connect(dsn) as conn:
        for session, title in ((QUIET, "quiet"), (NOISY, "noisy")):
            conn.execute("INSERT INTO sessions (id, title, status, created_at) VALUES (%s, %s, 'completed', now())",
                         (session, title))
        conn.execute(
            "INSERT INTO messages (session_id, role, content, created_at) SELECT %s, "
            "CASE WHEN g %% 2 = 0 THEN 'user' ELSE 'assistant' END, "
            "jsonb_build_object('text', CASE WHEN g %% 2 = 0 THEN 'hi ' || g ELSE 'ok' END), "
            "now() + g * interval '1 second' FROM generate_series(1, %s) g", (QUIET, messages))
        conn.execute(
            "INSERT INTO messages (session_id, role, content, created_at) SELECT %s, "
            "CASE WHEN g %% 2 = 0 THEN 'user' ELSE 'assistant' END, "
            "CASE WHEN g %% 2 = 0 THEN jsonb_build_object('text', 'that is not what I asked, restart nginx') "
            "WHEN g %% 3 = 0 THEN jsonb_build_object('text', '') "
            "ELSE jsonb_build_object('text', 'Sorry, I cannot run commands on that host.') END, "
            "now() + g * interval '1 second' FROM generate_series(1, %s) g", (NOISY, messages))
        conn.execute("ANALYZE")
    return dsn


def measure(args: list[str]) -> tuple[float, float, float, int]:
    """(seconds, peak RSS in MB, output in MB, exit code) of `nomos-forensics ARGS`."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True)
    seconds = time.perf_counter() - start
    last = done.stderr.decode(errors="replace").strip().splitlines()[-1]
    rss_kb = int(last.split()[1]) if last.startswith("maxrss") else -1
    return seconds, rss_kb / 1024, len(done.stdout) / 1e6, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True, help="an admin connection; the database is made and dropped on its server")
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--keep", action="store_true", help="keep the database")
    args = parser.parse_args()
    dsn = build(args.dsn, args.messages)
    print(f"{args.messages:,} messages per session; targets: under {RSS_TARGET_MB} MB RSS, under {OUTPUT_TARGET_MB} MB output")
    print(f"{'command':42} {'seconds':>8} {'RSS MB':>8} {'out MB':>8}  within")
    ok = True
    try:
        for session in (QUIET, NOISY):
            for fmt in ("json", "html", "text"):
                row = measure(["review", session, "--dsn", dsn, "--format", fmt])
                ok &= _print(f"review {session[:8]}… --format {fmt}", row, output=True)
        ok &= _print("scan --format jsonl (both)", measure(["scan", "--dsn", dsn, "--format", "jsonl"]), output=True)
        ok &= _print("report -o - (both)", measure(["report", "--dsn", dsn, "-o", "-"]), output=True)
    finally:
        if not args.keep:
            devdb.drop_database(args.dsn, dsn)
    print("all within the targets" if ok else "OVER A TARGET")
    return 0 if ok else 1


def _print(name: str, row: tuple[float, float, float, int], output: bool) -> bool:
    seconds, rss, out, code = row
    within = code in (0, 1) and 0 < rss < RSS_TARGET_MB and (not output or out < OUTPUT_TARGET_MB)
    print(f"{name:42} {seconds:8.1f} {rss:8.0f} {out:8.2f}  {'yes' if within else 'NO (exit %d)' % code}")
    return within


if __name__ == "__main__":
    sys.exit(main())
