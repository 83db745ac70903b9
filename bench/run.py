#!/usr/bin/env python3
"""Benchmark harness for nomos-forensics on the synthetic database built by bench/generate.py.

In one run, on one database, it measures (alternating, so drift hits both sides alike):
  scan    `nomos-forensics scan --dsn DB --format jsonl > /dev/null` (every built-in rule)
  floor   `psql DB -c "COPY (SELECT session_id, id, role, created_at, content FROM messages
           ORDER BY session_id, id) TO STDOUT" > /dev/null`
and prints the ratio scan/floor and the scan's peak RSS; then
  review  `nomos-forensics review <the 5,000-message session> --dsn DB --format json > /dev/null`
  sizes   `nomos-forensics sizes --dsn DB > /dev/null` (when the command exists)
Each figure is a median (scan/floor/sizes: --repeat, default 3; review: --review-repeat,
default 5), after one untimed warm-up of each command (--no-warmup to skip).

Also: --profile (the scan under cProfile, top 25 functions; py-spy too when available) and
--score (one scan kept on disk and compared with the ground truth in bench.labels).
Results: a table, then one JSON line; also appended to bench/out/results.jsonl.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg
import psycopg.conninfo

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
DEFAULT_DBNAME = "nomos_forensics_bench"
DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"
FLOOR_SQL = ("COPY (SELECT session_id, id, role, created_at, content FROM messages "
             "ORDER BY session_id, id) TO STDOUT")
# which near-miss labels belong to which rule (a near miss flagged by its rule is a false positive)
NEAR_TO_RULE = {"near:can-run-later": "cant-run", "near:user-cant-run": "cant-run",
                "near:no-web-with-fetch": "no-web-tool", "near:fanout-30": "tool-fanout",
                "near:fanout-spread": "tool-fanout", "near:foreign-user": "non-english-refusal"}
SIGNATURES = ("cant-run", "no-web-tool", "empty-response", "non-english-refusal", "tool-fanout",
              "oversized-message")

try:
    import psutil
except ImportError:  # the harness still works, without tree RSS and backend CPU
    psutil = None


# ------------------------------------------------------------------------------ processes


class Result:
    def __init__(self, wall: float, code: int, maxrss_kb: int, cpu: float, tree_peak: int | None,
                 backend_cpu: float | None, stderr: str, tree_pss: int | None = None) -> None:
        self.wall, self.code, self.maxrss_kb, self.cpu = wall, code, maxrss_kb, cpu
        self.tree_peak, self.backend_cpu, self.stderr = tree_peak, backend_cpu, stderr
        self.tree_pss = tree_pss  # peak of the tree's summed PSS: shared pages counted once


def wait_idle(max_wait: float, threshold: float = 0.85) -> float:
    """Wait (up to max_wait s) until the machine is at least `threshold` idle over one second."""
    if max_wait <= 0 or psutil is None:
        return 0.0
    start = time.perf_counter()
    while time.perf_counter() - start < max_wait:
        idle = psutil.cpu_times_percent(interval=1.0).idle / 100
        if idle >= threshold:
            break
    return time.perf_counter() - start


class Backends:
    """Tracks the CPU time of the server backends serving a child process tree (matched by the
    client's TCP port in pg_stat_activity, parallel workers through leader_pid): the server-side
    cost of one command, unaffected by other people's queries on a shared server."""

    def __init__(self, dsn: str | None) -> None:
        self.conn = None
        self.cpu: dict[int, float] = {}
        if dsn is None or psutil is None:
            return
        params = psycopg.conninfo.conninfo_to_dict(dsn)
        self.port = int(params.get("port") or 5432)
        try:
            self.conn = psycopg.connect(dsn, autocommit=True, application_name="nomos-forensics-bench-monitor")
        except psycopg.Error:
            self.conn = None

    def sample(self, procs) -> None:
        if self.conn is None:
            return
        ports = set()
        for p in procs:
            try:
                for c in p.net_connections(kind="tcp"):
                    if c.raddr and c.raddr.port == self.port:
                        ports.add(c.laddr.port)
            except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
                pass
        if not ports:
            return
        try:
            rows = self.conn.execute(
                "SELECT a.pid FROM pg_stat_activity a WHERE a.client_port = ANY(%s) "
                "UNION SELECT w.pid FROM pg_stat_activity w JOIN pg_stat_activity l ON w.leader_pid = l.pid "
                "WHERE l.client_port = ANY(%s) AND w.pid <> l.pid", (list(ports), list(ports))).fetchall()
        except psycopg.Error:
            return
        for (pid,) in rows:
            try:
                t = psutil.Process(pid).cpu_times()
                self.cpu[pid] = t.user + t.system
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass

    def total(self) -> float | None:
        return sum(self.cpu.values()) if self.cpu else None

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


def measure(cmd: list[str], *, env: dict | None = None, stdout=None, sample_tree: bool = True,
            dsn: str | None = None) -> Result:
    """Run cmd with stdout to /dev/null (or a file): wall time, exit code, peak RSS, client CPU
    (rusage) and CPU of its server backends (sampled every 50 ms: may miss the last 50 ms)."""
    err = tempfile.TemporaryFile()
    out = stdout if stdout is not None else subprocess.DEVNULL
    backends = Backends(dsn)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
    peak, pss_peak = [0], [0]
    done = threading.Event()

    def sampler() -> None:
        try:
            root = psutil.Process(proc.pid)
        except Exception:
            return
        while not done.is_set():
            try:
                procs = [root] + root.children(recursive=True)
            except (psutil.NoSuchProcess, psutil.ZombieProcess):
                return
            rss = pss = 0
            for p in procs:
                try:
                    rss += p.memory_info().rss
                    if len(procs) > 1:  # forked workers share the parent's pages, which RSS counts in each
                        pss += getattr(p.memory_full_info(), "pss", 0)
                except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
                    pass
            peak[0] = max(peak[0], rss)
            pss_peak[0] = max(pss_peak[0], pss or rss)
            backends.sample(procs)
            done.wait(0.05)

    thread = None
    if (sample_tree or dsn) and psutil is not None:
        thread = threading.Thread(target=sampler, daemon=True)
        thread.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    if thread:
        thread.join()
    backends.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    err.seek(0)
    stderr = err.read().decode("utf-8", "replace")
    err.close()
    return Result(wall, proc.returncode, usage.ru_maxrss, usage.ru_utime + usage.ru_stime,
                  (peak[0] or None) if sample_tree else None, backends.total(), stderr,
                  (pss_peak[0] or None) if sample_tree else None)


def forensics_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "nomos-forensics"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("nomos-forensics")
    return [found] if found else [sys.executable, "-m", "nomos_forensics"]


def command_available(base: list[str], name: str, env: dict) -> tuple[bool, str]:
    try:
        p = subprocess.run(base + [name, "--help"], capture_output=True, text=True, env=env, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return False, str(error)
    lines = (p.stderr or p.stdout).strip().splitlines()
    return p.returncode == 0, (lines[-1] if lines else "")


# ------------------------------------------------------------------------------ database facts


def resolve_dsn(args) -> str:
    if args.dsn and not args.dbname:
        return args.dsn
    if args.dbname:
        return psycopg.conninfo.make_conninfo(args.dsn or DEFAULT_SERVER, dbname=args.dbname)
    meta = OUT / "meta.json"
    if meta.exists():
        return json.loads(meta.read_text())["dsn"]
    return psycopg.conninfo.make_conninfo(DEFAULT_SERVER, dbname=DEFAULT_DBNAME)


def db_facts(dsn: str) -> dict:
    facts: dict = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        facts["dbname"] = conn.info.dbname
        facts["server_version"] = conn.info.parameter_status("server_version")
        facts["messages_total_bytes"] = conn.execute("SELECT pg_total_relation_size('messages')").fetchone()[0]
        facts["messages_est"] = conn.execute(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = 'messages'::regclass").fetchone()[0]
        facts["sessions_est"] = conn.execute(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = 'sessions'::regclass").fetchone()[0]
        has_meta = conn.execute("SELECT to_regclass('bench.meta') IS NOT NULL").fetchone()[0]
        if has_meta:
            rows = dict(conn.execute("SELECT key, value FROM bench.meta").fetchall())
            facts["long_session"] = rows.get("long_session", {}).get("id")
            facts["long_session_messages"] = rows.get("long_session", {}).get("messages")
            counts = rows.get("counts", {})
            facts["messages"] = counts.get("messages")
            facts["sessions"] = counts.get("sessions")
    return facts


def longest_session(dsn: str) -> tuple[str, int]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT session_id::text, count(*) FROM messages GROUP BY 1 "
                           "ORDER BY 2 DESC LIMIT 1").fetchone()
    return row[0], row[1]


def messages_blocks(dsn: str) -> int | None:
    """Blocks of messages (heap + TOAST + indexes) read or hit so far, per the statistics views."""
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            row = conn.execute(
                "SELECT coalesce(heap_blks_read, 0) + coalesce(heap_blks_hit, 0) + coalesce(idx_blks_read, 0) "
                "+ coalesce(idx_blks_hit, 0) + coalesce(toast_blks_read, 0) + coalesce(toast_blks_hit, 0) "
                "+ coalesce(tidx_blks_read, 0) + coalesce(tidx_blks_hit, 0) "
                "FROM pg_statio_user_tables WHERE relid = 'messages'::regclass").fetchone()
        return int(row[0]) if row else None
    except psycopg.Error:
        return None


# ------------------------------------------------------------------------------ reporting


def med(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def fmt_s(v) -> str:
    return "-" if v is None else f"{v:.2f}"


def fmt_mb(kb_or_bytes, unit_kb: bool = True) -> str:
    if not kb_or_bytes:
        return "-"
    return f"{kb_or_bytes / 1024:.0f}" if unit_kb else f"{kb_or_bytes / 1048576:.0f}"


def summarise(name: str, results: list[Result]) -> dict:
    ok = [r for r in results if r.code in (0, 1)]
    walls = [r.wall for r in ok]
    d = {
        "runs": len(results), "ok_runs": len(ok),
        "median_s": med(walls), "min_s": min(walls) if walls else None, "max_s": max(walls) if walls else None,
        "walls_s": [round(w, 3) for w in walls],
        "peak_rss_mb": round(max(r.maxrss_kb for r in ok) / 1024, 1) if ok else None,
        "tree_peak_rss_mb": (round(max(r.tree_peak or 0 for r in ok) / 1048576, 1) if ok and any(r.tree_peak for r in ok) else None),
        "tree_peak_pss_mb": (round(max(r.tree_pss or 0 for r in ok) / 1048576, 1) if ok and any(r.tree_pss for r in ok) else None),
        "client_cpu_s": med([r.cpu for r in ok]),
        "backend_cpu_s": med([r.backend_cpu for r in ok if r.backend_cpu is not None]),
        "exit_codes": sorted({r.code for r in results}),
    }
    bad = [r for r in results if r.code not in (0, 1)]
    if bad:
        d["error"] = bad[-1].stderr.strip().splitlines()[-3:]
    return d


def score(dsn: str, jsonl: Path) -> dict:
    """Compare scan cards with bench.labels: per rule, recall over labelled sessions and hits elsewhere."""
    flagged: dict[str, set[str]] = {}
    cards = 0
    with jsonl.open() as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            card = json.loads(line)
            cards += 1
            sid = (card.get("session") or {}).get("id")
            for finding in card.get("findings") or []:
                flagged.setdefault(finding.get("rule"), set()).add(sid)
    with psycopg.connect(dsn, autocommit=True) as conn:
        labels: dict[str, set[str]] = {}
        for sid, label in conn.execute("SELECT DISTINCT session_id::text, label FROM bench.labels"):
            labels.setdefault(label, set()).add(sid)
        n_sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    out: dict = {"cards": cards, "sessions": n_sessions, "rules": {}}
    any_signature = set().union(*[labels.get(k, set()) for k in SIGNATURES])
    for rule in SIGNATURES:
        truth = labels.get(rule, set())
        got = flagged.get(rule, set())
        # near misses in sessions that carry no signature at all (so any hit there is a false positive)
        near = set().union(*[labels.get(k, set()) for k, v in NEAR_TO_RULE.items() if v == rule]) - any_signature
        out["rules"][rule] = {
            "labelled": len(truth), "flagged": len(got), "recall": round(len(got & truth) / len(truth), 4) if truth else None,
            "flagged_unlabelled": len(got - truth),
            # unlabelled for this rule but carrying another signature (e.g. a Spanish refusal read as cant-run)
            "flagged_other_signature": len((got - truth) & any_signature),
            "flagged_clean": len(got - any_signature),
            "fp_rate_unlabelled": round(len(got - truth) / max(1, n_sessions - len(truth)), 5),
            "near_misses": len(near), "near_misses_flagged": len(got & near),
        }
    extra = sorted(set(flagged) - set(SIGNATURES))
    if extra:
        out["other_rules"] = {k: len(flagged[k]) for k in extra}
    return out


def profile_scan(base: list[str], dsn: str, env: dict, extra: list[str], top: int = 25) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    prof = OUT / "scan.prof"
    cmd = [sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "nomos_forensics", "scan", "--dsn", dsn,
           "--format", "jsonl", *extra]
    print(f"profiling: {' '.join(cmd)}", flush=True)
    r = measure(cmd, env=env, dsn=dsn)
    print(f"  wall {r.wall:.2f}s, client cpu {r.cpu:.2f}s, its backends' cpu {fmt_s(r.backend_cpu)}s, "
          f"peak rss {r.maxrss_kb / 1024:.0f} MB, exit {r.code}")
    if r.code not in (0, 1):
        print("  " + "\n  ".join(r.stderr.strip().splitlines()[-5:]))
    if prof.exists():
        import pstats
        for key in ("tottime", "cumulative"):
            print(f"\n--- top {top} by {key} ---")
            pstats.Stats(str(prof)).strip_dirs().sort_stats(key).print_stats(top)
    pyspy = shutil.which("py-spy") or next((str(p) for p in [OUT / "tools" / "bin" / "py-spy"] if p.exists()), None)
    if pyspy:
        raw = OUT / "scan-pyspy.txt"
        cmd = [pyspy, "record", "--idle", "--subprocesses", "--rate", "50", "--format", "raw", "-o", str(raw), "--",
               *base, "scan", "--dsn", dsn, "--format", "jsonl", *extra]
        print(f"\npy-spy: {' '.join(cmd)}", flush=True)
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        if p.returncode != 0 or not raw.exists():
            print("  py-spy failed: " + p.stderr.strip()[-500:])
            return
        leaf: dict[str, int] = {}
        incl: dict[str, int] = {}
        total = 0
        for line in raw.read_text().splitlines():
            stack, _, n = line.rpartition(" ")
            try:
                n = int(n)
            except ValueError:
                continue
            total += n
            frames = stack.split(";") if stack else ["?"]
            leaf[frames[-1]] = leaf.get(frames[-1], 0) + n
            for frame in set(frames):
                incl[frame] = incl.get(frame, 0) + n
        print(f"  {total} samples at 50 Hz (idle time included: waits on the server show up as socket/select frames);"
              f" raw stacks in {raw} (flamegraph.pl / speedscope read them)")
        own = {k: v for k, v in incl.items() if ("nomos_forensics" in k or "rules/" in k) and v < total}
        for title, table in (("self (leaf frame)", leaf), ("inclusive, nomos-forensics code only", own)):
            print(f"\n--- py-spy: top {top} functions, {title} ---")
            for frame, n in sorted(table.items(), key=lambda kv: -kv[1])[:top]:
                print(f"  {100 * n / max(total, 1):5.1f}%  {frame}")
    else:
        print("\n(py-spy not found: `pip install --target bench/out/tools py-spy` to add a sampling profile)")


# ------------------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dsn", help="DSN of the bench database (or of the server, with --dbname); "
                                  "default: bench/out/meta.json, else the local nomos_forensics_bench")
    ap.add_argument("--dbname", help="bench database name on the --dsn server")
    ap.add_argument("--repeat", type=int, default=3, help="runs of scan, floor and sizes (median reported)")
    ap.add_argument("--review-repeat", type=int, default=5)
    ap.add_argument("--only", action="append", default=[],
                    help="scan (with the floor), floor, review, sizes; comma list or repeatable")
    ap.add_argument("--jobs", type=int, help="passed to scan as --jobs N")
    ap.add_argument("--scan-arg", action="append", default=[], help="extra argument for scan (repeatable)")
    ap.add_argument("--session", help="session for the review timing (default: the 5,000-message one)")
    ap.add_argument("--no-warmup", action="store_true")
    ap.add_argument("--wait-idle", type=float, default=0, metavar="SECONDS",
                    help="before each timed run, wait up to SECONDS for the machine to be >= 85%% idle "
                         "(shared machines: other people's tests skew wall times)")
    ap.add_argument("--profile", action="store_true", help="profile one scan (cProfile, py-spy if present) and exit")
    ap.add_argument("--score", action="store_true", help="also score one scan's findings against bench.labels")
    ap.add_argument("--score-file", type=Path, help="only score this existing scan JSONL against bench.labels")
    args = ap.parse_args(argv)

    only = {x.strip() for v in args.only for x in v.split(",") if x.strip()} or {"scan", "floor", "review", "sizes"}
    if "scan" in only:
        only.add("floor")
    unknown = only - {"scan", "floor", "review", "sizes"}
    if unknown:
        ap.error(f"unknown --only value(s): {', '.join(sorted(unknown))}")

    dsn = resolve_dsn(args)
    facts = db_facts(dsn)
    env = dict(os.environ)
    env["NOMOS_FORENSICS_LOAD_PLUGINS"] = ""   # built-in rules only: no third-party plugins
    env.pop("NOMOS_FORENSICS_PLUGINS", None)
    env.pop("NOMOS_FORENSICS_DSN", None)
    base = forensics_cmd()
    scan_extra = list(args.scan_arg) + (["--jobs", str(args.jobs)] if args.jobs else [])
    notes: list[str] = []
    print(f"database {facts['dbname']}: {facts.get('messages') or facts['messages_est']} messages, "
          f"{facts.get('sessions') or facts['sessions_est']} sessions, messages table "
          f"{facts['messages_total_bytes'] / 1048576:.0f} MB; PostgreSQL {facts['server_version']}; "
          f"{os.cpu_count()} cores", flush=True)

    if args.score_file:
        print(json.dumps(score(dsn, args.score_file), indent=1))
        return 0
    scan_ok, why = command_available(base, "scan", env)
    if args.profile:
        if not scan_ok:
            print("scan: not available" + (f" ({why})" if why else ""))
            return 2
        profile_scan(base, dsn, env, scan_extra)
        return 0

    scan_cmd = base + ["scan", "--dsn", dsn, "--format", "jsonl", *scan_extra]
    floor_cmd = ["psql", "-X", "-q", "-d", dsn, "-c", FLOOR_SQL]
    results: dict[str, list[Result]] = {"scan": [], "floor": []}
    blocks: dict[str, int | None] = {}

    if "scan" in only and not scan_ok:
        print("scan: not available" + (f" ({why})" if why else ""), flush=True)
        notes.append("scan: not available")
    do_scan = "scan" in only and scan_ok
    if "floor" in only or do_scan:
        if not args.no_warmup:
            print("warm-up: floor" + (" + scan" if do_scan else ""), flush=True)
            measure(floor_cmd, sample_tree=False)
            if do_scan:
                w = measure(scan_cmd, env=env)
                if w.code not in (0, 1):
                    print(f"  scan warm-up failed (exit {w.code}): " + " | ".join(w.stderr.strip().splitlines()[-3:]))
        for i in range(args.repeat):
            order = [("scan", scan_cmd), ("floor", floor_cmd)] if i % 2 == 0 else [("floor", floor_cmd), ("scan", scan_cmd)]
            for name, cmd in order:
                if name == "scan" and not do_scan:
                    continue
                b0 = messages_blocks(dsn) if i == 0 else None
                waited = wait_idle(args.wait_idle)
                r = measure(cmd, env=env if name == "scan" else None, sample_tree=(name == "scan"), dsn=dsn)
                r.waited = waited
                if i == 0 and b0 is not None:
                    time.sleep(0.6)
                    b1 = messages_blocks(dsn)
                    blocks[name] = (b1 - b0) if b1 is not None else None
                results[name].append(r)
                print(f"  run {i + 1}/{args.repeat} {name:<5} {r.wall:7.2f}s  exit {r.code}"
                      + (f"  rss {r.maxrss_kb / 1024:.0f} MB" if name == "scan" else ""), flush=True)
                if r.code not in (0, 1):
                    print("    " + " | ".join(r.stderr.strip().splitlines()[-3:]), flush=True)

    review = []
    if "review" in only:
        session = args.session or facts.get("long_session")
        n_msgs = facts.get("long_session_messages")
        if not session:
            session, n_msgs = longest_session(dsn)
        review_cmd = base + ["review", session, "--dsn", dsn, "--format", "json"]
        ok, why = command_available(base, "review", env)
        if not ok:
            notes.append("review: not available")
            print("review: not available" + (f" ({why})" if why else ""))
        else:
            print(f"review of {session} ({n_msgs} messages)", flush=True)
            if not args.no_warmup:
                measure(review_cmd, env=env)
            for i in range(args.review_repeat):
                wait_idle(args.wait_idle)
                r = measure(review_cmd, env=env, dsn=dsn)
                review.append(r)
                print(f"  run {i + 1}/{args.review_repeat} review {r.wall:6.2f}s  exit {r.code}", flush=True)
                if r.code not in (0, 1):
                    print("    " + " | ".join(r.stderr.strip().splitlines()[-3:]), flush=True)
            facts["review_session"] = session
            facts["review_session_messages"] = n_msgs

    sizes = []
    if "sizes" in only:
        ok, why = command_available(base, "sizes", env)
        if not ok:
            notes.append("sizes: not available (skipped)")
            print("sizes: not available (skipped)", flush=True)
        else:
            sizes_cmd = base + ["sizes", "--dsn", dsn]
            if not args.no_warmup:
                measure(sizes_cmd, env=env)
            for i in range(args.repeat):
                b0 = messages_blocks(dsn) if i == 0 else None
                wait_idle(args.wait_idle)
                r = measure(sizes_cmd, env=env, dsn=dsn)
                if i == 0 and b0 is not None:
                    time.sleep(0.6)
                    b1 = messages_blocks(dsn)
                    blocks["sizes"] = (b1 - b0) if b1 is not None else None
                sizes.append(r)
                print(f"  run {i + 1}/{args.repeat} sizes {r.wall:7.2f}s  exit {r.code}", flush=True)
                if r.code not in (0, 1):
                    print("    " + " | ".join(r.stderr.strip().splitlines()[-3:]), flush=True)

    scored = None
    if args.score and scan_ok:
        OUT.mkdir(parents=True, exist_ok=True)
        path = OUT / f"scan-{facts['dbname']}.jsonl"
        with path.open("wb") as f:
            r = measure(scan_cmd, env=env, stdout=f)
        if r.code in (0, 1):
            scored = score(dsn, path)
        else:
            notes.append(f"score: scan failed (exit {r.code})")

    # ---- report
    summary = {k: summarise(k, v) for k, v in (("scan", results["scan"]), ("floor", results["floor"]),
                                                ("review", review), ("sizes", sizes)) if v}
    ratio = None
    if summary.get("scan", {}).get("median_s") and summary.get("floor", {}).get("median_s"):
        ratio = summary["scan"]["median_s"] / summary["floor"]["median_s"]
    table_bytes = facts["messages_total_bytes"]
    print()
    print(f"{'measure':<8} {'median s':>9} {'min s':>7} {'max s':>7} {'runs':>5} {'peak RSS MB':>12} "
          f"{'tree RSS MB':>12} {'tree PSS MB':>12} {'client CPU s':>13} {'backend CPU s':>14} {'messages read':>14}")
    for name, d in summary.items():
        blk = blocks.get(name)
        read = f"{blk * 8192 / 1048576:.0f} MB" if blk is not None else "-"
        print(f"{name:<8} {fmt_s(d['median_s']):>9} {fmt_s(d['min_s']):>7} {fmt_s(d['max_s']):>7} "
              f"{d['ok_runs']:>2}/{d['runs']:<2} {d['peak_rss_mb'] if d['peak_rss_mb'] is not None else '-':>12} "
              f"{d['tree_peak_rss_mb'] if d['tree_peak_rss_mb'] is not None else '-':>12} "
              f"{d.get('tree_peak_pss_mb') if d.get('tree_peak_pss_mb') is not None else '-':>12} "
              f"{fmt_s(d['client_cpu_s']):>13} {fmt_s(d['backend_cpu_s']):>14} {read:>14}")
    print(f"(messages table: {table_bytes / 1048576:.0f} MB on disk. client CPU: the command's own processes; "
          f"backend CPU: the server processes serving it;\n 'messages read': "
          f"heap+TOAST+index blocks of messages read or hit in the first run, from pg_statio, other sessions included)")
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores"
          + ("  (busy machine: wall times are inflated, compare the CPU columns)" if load[1] > 1.5 else ""))
    if ratio is not None:
        verdict = "meets" if ratio <= 1.0 else "misses"
        print(f"scan/floor ratio: {ratio:.2f}  ({verdict} the <= 1.0 target)")
    if "scan" in summary and summary["scan"]["peak_rss_mb"] is not None:
        # one process: its RSS; a --jobs tree: the summed PSS (RSS counts the pages forked workers share once per process)
        rss = max(summary["scan"]["peak_rss_mb"], summary["scan"].get("tree_peak_pss_mb") or 0)
        print(f"scan peak memory: {rss:.0f} MB (RSS of one process, PSS of a --jobs tree)  "
              f"({'meets' if rss <= 250 else 'misses'} the <= 250 MB target; check flatness with a --scale 2 database)")
    if "review" in summary and summary["review"]["median_s"] is not None:
        print(f"review of {facts.get('review_session_messages')} messages: {summary['review']['median_s']:.2f}s  "
              f"({'meets' if summary['review']['median_s'] <= 1.0 else 'misses'} the <= 1 s target)")
    if "sizes" in summary and summary["sizes"]["median_s"] is not None:
        print(f"sizes: {summary['sizes']['median_s']:.2f}s  ({'meets' if summary['sizes']['median_s'] <= 5 else 'misses'} "
              f"the <= 5 s target)")
    for note in notes:
        print(note)
    if scored:
        print(f"\nscore ({scored['cards']} cards for {scored['sessions']} sessions):")
        print(f"  {'rule':<22} {'labelled':>8} {'flagged':>8} {'recall':>7} {'unlabelled hits':>16} "
              f"{'…on other sig.':>15} {'…on clean':>10} {'near misses hit':>16}")
        for rule, d in scored["rules"].items():
            print(f"  {rule:<22} {d['labelled']:>8} {d['flagged']:>8} {d['recall'] if d['recall'] is not None else '-':>7} "
                  f"{d['flagged_unlabelled']:>16} {d['flagged_other_signature']:>15} {d['flagged_clean']:>10} "
                  f"{str(d['near_misses_flagged']) + '/' + str(d['near_misses']):>16}")
        if scored.get("other_rules"):
            print("  other rules (no labels): " + ", ".join(f"{k} {v}" for k, v in scored["other_rules"].items()))

    record = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "dbname": facts["dbname"], "messages": facts.get("messages") or facts["messages_est"],
        "sessions": facts.get("sessions") or facts["sessions_est"], "messages_total_bytes": table_bytes,
        "scan_s": summary.get("scan", {}).get("median_s"), "floor_s": summary.get("floor", {}).get("median_s"),
        "ratio": round(ratio, 3) if ratio is not None else None,
        "scan_peak_rss_mb": summary.get("scan", {}).get("peak_rss_mb"),
        "scan_tree_peak_rss_mb": summary.get("scan", {}).get("tree_peak_rss_mb"),
        "scan_tree_peak_pss_mb": summary.get("scan", {}).get("tree_peak_pss_mb"),
        "review_s": summary.get("review", {}).get("median_s"),
        "review_messages": facts.get("review_session_messages"),
        "sizes_s": summary.get("sizes", {}).get("median_s"),
        "blocks_read": blocks, "jobs": args.jobs, "loadavg": os.getloadavg(), "details": summary, "notes": notes,
    }
    if scored:
        record["score"] = scored
    line = json.dumps(record, separators=(",", ":"))
    print(line)
    try:
        OUT.mkdir(parents=True, exist_ok=True)
        with (OUT / "results.jsonl").open("a") as f:
            f.write(line + "\n")
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
