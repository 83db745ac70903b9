#!/usr/bin/env python3
"""Before/after in one run: a baseline scan command and this tree's, alternating with the COPY
floor, each run's ratio to the floor beside the other's, and the md5 of both JSONL outputs.

    git archive main | tar -x -C /tmp/base && python3 -m venv /tmp/base/.venv \\
        && /tmp/base/.venv/bin/pip install -q -e /tmp/base
    .venv/bin/python bench/ab.py --baseline /tmp/base/.venv/bin/nomos-forensics [--repeat 3] \\
        [--scan-arg=--jobs=2] [--limit N]
    .venv/bin/python bench/ab.py --baseline ... --review [--repeat 9]

`--review`: the whole `review <the 5,000-message session> --format json` process instead (the
issue's ≤ 1 s target), baseline and current alternating, and the md5 of both cards.

Order rotates every round (floor, baseline, current; then baseline, current, floor; ...), so
a machine that other work slows down slows all three alike; the ratios are what to compare.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import DEFAULT_DBNAME, DEFAULT_SERVER, FLOOR_SQL, db_facts, forensics_cmd, longest_session, measure  # noqa: E402


def md5_of(path: Path) -> str:
    digest = hashlib.md5()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, help="the baseline's nomos-forensics executable")
    ap.add_argument("--dsn", default=None, help="DSN of the bench database")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scan-arg", action="append", default=[], help="extra scan argument for both (repeatable)")
    ap.add_argument("--limit", type=int, help="scan only the newest N sessions (quick checks; no floor ratio)")
    ap.add_argument("--review", action="store_true", help="time `review` of the long session instead of scan")
    ap.add_argument("--session", help="the session --review reads (default: the bench's 5,000-message one)")
    args = ap.parse_args()
    dsn = args.dsn or f"{DEFAULT_SERVER.rsplit('/', 1)[0]}/{DEFAULT_DBNAME}"
    env = {**os.environ, "NOMOS_FORENSICS_LOAD_PLUGINS": ""}
    env.pop("NOMOS_FORENSICS_PLUGINS", None)
    extra = [*args.scan_arg, *(["--limit", str(args.limit)] if args.limit else [])]
    if args.review:
        return review_ab(args, dsn, env)
    commands = {
        "floor": ["psql", "-X", "-q", "-d", dsn, "-c", FLOOR_SQL],
        "baseline": [args.baseline, "scan", "--dsn", dsn, "--format", "jsonl", *extra],
        "current": [*forensics_cmd(), "scan", "--dsn", dsn, "--format", "jsonl", *extra],
    }
    names = ["floor", "baseline", "current"] if not args.limit else ["baseline", "current"]
    walls: dict[str, list[float]] = {n: [] for n in names}
    cpus: dict[str, list[float]] = {n: [] for n in names}
    rss: dict[str, list[int]] = {n: [] for n in names}
    sums: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.repeat):
            order = names[round_ % len(names):] + names[: round_ % len(names)]
            line = []
            for name in order:
                out_path = Path(tmp) / f"{name}.jsonl"
                if name == "floor":  # as run.py measures it: to /dev/null
                    r = measure(commands[name], sample_tree=False, dsn=dsn)
                else:
                    r = measured_into(out_path, commands[name], env, dsn=dsn)
                if r is None or r.code not in (0, 1):
                    return 2
                walls[name].append(r.wall)
                cpus[name].append(r.cpu)
                rss[name].append(r.tree_peak or r.maxrss_kb * 1024)
                if name != "floor":
                    sums.setdefault(name, md5_of(out_path))
                line.append(f"{name} {r.wall:6.1f}s" + (f" (CPU {r.cpu:.1f}s)" if name != "floor" else ""))
            ratio = ""
            if "floor" in walls:
                f = walls["floor"][-1]
                ratio = f"  ratio baseline {walls['baseline'][-1] / f:.2f}  current {walls['current'][-1] / f:.2f}"
            print(f"round {round_ + 1}: " + ", ".join(line) + ratio
                  + f"  current/baseline {walls['current'][-1] / walls['baseline'][-1]:.2f}", flush=True)
    med = {n: statistics.median(v) for n, v in walls.items()}
    print("\nmedian wall: " + ", ".join(f"{n} {med[n]:.1f}s" for n in names))
    if "floor" in med:
        print(f"ratio to the floor: baseline {med['baseline'] / med['floor']:.2f}, current {med['current'] / med['floor']:.2f}")
    print(f"current / baseline: wall {med['current'] / med['baseline']:.2f}, client CPU "
          f"{statistics.median(cpus['current']) / statistics.median(cpus['baseline']):.2f}; peak tree RSS "
          f"baseline {max(rss['baseline']) / 2**20:.0f} MB, current {max(rss['current']) / 2**20:.0f} MB")
    same = sums["baseline"] == sums["current"]
    print(f"jsonl md5: baseline {sums['baseline']}, current {sums['current']}: {'identical' if same else 'DIFFERENT'}")
    return 0 if same else 1


def measured_into(path: Path, command: list[str], env: dict, **options):
    """One measured run (run.measure) with its output in `path`; None, said, when it failed."""
    with path.open("wb") as out:
        r = measure(command, env=env, stdout=out, **options)
    if r.code not in (0, 1):
        print(f"{path.stem} failed (exit {r.code}): {r.stderr.strip().splitlines()[-1:]}")
        return None
    return r


def review_ab(args, dsn: str, env: dict) -> int:
    """Baseline and current `review` processes, alternating; the median wall of each and their ratio."""
    session = args.session or db_facts(dsn).get("long_session")
    if not session:
        session, _ = longest_session(dsn)
    commands = {name: [*exe, "review", session, "--dsn", dsn, "--format", "json"]
                for name, exe in (("baseline", [args.baseline]), ("current", forensics_cmd()))}
    walls: dict[str, list[float]] = {"baseline": [], "current": []}
    sums: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in commands:  # warm-up: the server's cache, the OS's file cache
            measure(commands[name], env=env, sample_tree=False)
        for round_ in range(args.repeat):
            order = ["baseline", "current"] if round_ % 2 == 0 else ["current", "baseline"]
            for name in order:
                out_path = Path(tmp) / f"{name}.json"
                r = measured_into(out_path, commands[name], env, sample_tree=False)
                if r is None:
                    return 2
                walls[name].append(r.wall)
                sums.setdefault(name, md5_of(out_path))
            print(f"round {round_ + 1}: baseline {walls['baseline'][-1]:.2f}s, current {walls['current'][-1]:.2f}s",
                  flush=True)
    med = {n: statistics.median(v) for n, v in walls.items()}
    print(f"\nreview of {session}, median wall: baseline {med['baseline']:.2f}s, current {med['current']:.2f}s"
          f" (current / baseline {med['current'] / med['baseline']:.2f}; target ≤ 1 s)")
    same = sums["baseline"] == sums["current"]
    print(f"card md5: baseline {sums['baseline']}, current {sums['current']}: {'identical' if same else 'DIFFERENT'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
