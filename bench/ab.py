#!/usr/bin/env python3
"""Before/after in one run: a baseline scan command and this tree's, alternating with the COPY
floor, each run's ratio to the floor beside the other's, and the md5 of both JSONL outputs.

    git archive main | tar -x -C /tmp/base && python3 -m venv /tmp/base/.venv \\
        && /tmp/base/.venv/bin/pip install -q -e /tmp/base
    .venv/bin/python bench/ab.py --baseline /tmp/base/.venv/bin/nomos-forensics [--repeat 3] \\
        [--scan-arg=--jobs=2] [--limit N]

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

from run import DEFAULT_DBNAME, DEFAULT_SERVER, FLOOR_SQL, forensics_cmd, measure  # noqa: E402


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
    args = ap.parse_args()
    dsn = args.dsn or f"{DEFAULT_SERVER.rsplit('/', 1)[0]}/{DEFAULT_DBNAME}"
    env = {**os.environ, "NOMOS_FORENSICS_LOAD_PLUGINS": ""}
    env.pop("NOMOS_FORENSICS_PLUGINS", None)
    extra = [*args.scan_arg, *(["--limit", str(args.limit)] if args.limit else [])]
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
                    with out_path.open("wb") as out:
                        r = measure(commands[name], env=env, stdout=out, dsn=dsn)
                if r.code not in (0, 1):
                    print(f"{name} failed (exit {r.code}): {r.stderr.strip().splitlines()[-1:]}")
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


if __name__ == "__main__":
    sys.exit(main())
