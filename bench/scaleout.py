#!/usr/bin/env python3
"""Scale-out in one run: the COPY floor, one whole scan, and the same scan split into N shards
(`scan --shard K/N`, one after another, each with the machine to itself as it would have its
own machine and replica) and folded back by `merge`, alternating, with each ratio to the floor.

    .venv/bin/python bench/scaleout.py [--shards 2,4,6] [--jobs 2] [--repeat 3] [--dsn DSN]

N machines take as long as the slowest shard, then `merge` on one of them: that sum is the
wall time of the N-machine scan, and its ratio to the floor is printed beside the whole
scan's. The merged output must be byte-identical to the whole scan's (md5 of the JSONL);
the script exits 1 when it is not.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ab import md5_of  # noqa: E402
from run import DEFAULT_DBNAME, DEFAULT_SERVER, FLOOR_SQL, forensics_cmd, measure  # noqa: E402


def shard_counts(value: str) -> list[int]:
    counts = [int(part) for part in value.split(",") if part.strip()]
    if not counts or any(n < 2 for n in counts):
        raise argparse.ArgumentTypeError("--shards takes whole numbers of 2 or more, e.g. 2,4")
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn", default=None, help="DSN of the bench database")
    ap.add_argument("--shards", type=shard_counts, default=[2, 4], help="comma list of shard counts (default 2,4)")
    ap.add_argument("--jobs", default="1", help="--jobs for the whole scan and for every shard (default 1)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds (medians reported)")
    args = ap.parse_args(argv)
    dsn = args.dsn or f"{DEFAULT_SERVER.rsplit('/', 1)[0]}/{DEFAULT_DBNAME}"
    env = {**os.environ, "NOMOS_FORENSICS_LOAD_PLUGINS": ""}
    env.pop("NOMOS_FORENSICS_PLUGINS", None)
    tool = forensics_cmd()
    scan = [*tool, "scan", "--dsn", dsn, "--format", "jsonl", "--jobs", args.jobs]
    plans = ["floor", "whole", *(f"shards:{n}" for n in args.shards)]
    walls: dict[str, list[float]] = {p: [] for p in plans}
    cpus: dict[str, list[float]] = {p: [] for p in plans}
    spread: dict[str, list[tuple[float, float, float]]] = {p: [] for p in plans}  # (min shard, max shard, merge)
    whole_md5 = None
    merged_md5: dict[tuple[int, int], str] = {}
    mismatches = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for round_ in range(args.repeat):
            order = plans[round_ % len(plans):] + plans[: round_ % len(plans)]
            line = []
            for plan in order:
                if plan == "floor":
                    r = check(plan, measure(["psql", "-X", "-q", "-d", dsn, "-c", FLOOR_SQL], sample_tree=False, dsn=dsn))
                    walls[plan].append(r.wall)
                    line.append(f"floor {r.wall:.1f}s")
                    continue
                if plan == "whole":
                    out = tmp / "whole.jsonl"
                    with out.open("wb") as handle:
                        r = check(plan, measure(scan, env=env, stdout=handle, dsn=dsn))
                    walls[plan].append(r.wall)
                    cpus[plan].append(r.cpu)
                    digest = md5_of(out)
                    if whole_md5 is None:
                        whole_md5 = digest
                    elif digest != whole_md5:
                        mismatches.append(f"round {round_ + 1}: the whole scan's output changed")
                    line.append(f"whole {r.wall:.1f}s")
                    continue
                count = int(plan.split(":")[1])
                shard_walls, cpu = [], 0.0
                files = []
                for k in range(count):
                    path = tmp / f"shard-{k}-of-{count}.jsonl"
                    with path.open("wb") as handle:
                        r = check(f"shard {k}/{count}", measure([*scan, "--shard", f"{k}/{count}"], env=env,
                                                                stdout=handle, dsn=dsn))
                    shard_walls.append(r.wall)
                    cpu += r.cpu
                    files.append(str(path))
                merged = tmp / f"merged-{count}.jsonl"
                with merged.open("wb") as handle:
                    r = check(f"merge of {count}", measure([*tool, "merge", "--format", "jsonl", *files], env=env,
                                                           stdout=handle))
                walls[plan].append(max(shard_walls) + r.wall)
                cpus[plan].append(cpu + r.cpu)
                spread[plan].append((min(shard_walls), max(shard_walls), r.wall))
                merged_md5[(round_, count)] = md5_of(merged)
                line.append(f"{count} shards {max(shard_walls):.1f}s + merge {r.wall:.1f}s")
            print(f"round {round_ + 1}: " + ", ".join(line), flush=True)
    floor = statistics.median(walls["floor"])
    print(f"\nCOPY floor: {floor:.2f} s (median of {len(walls['floor'])}); --jobs {args.jobs} everywhere\n")
    print(f"{'plan':22} {'wall (median)':>13} {'ratio':>6} {'client CPU':>10} {'shard fastest-slowest':>22} {'merge':>6}")
    for plan in plans[1:]:
        wall = statistics.median(walls[plan])
        name = "one machine" if plan == "whole" else f"{plan.split(':')[1]} machines"
        lo_hi = merge = ""
        if spread[plan]:
            lo = statistics.median(s[0] for s in spread[plan])
            hi = statistics.median(s[1] for s in spread[plan])
            lo_hi, merge = f"{lo:.1f}-{hi:.1f} s", f"{statistics.median(s[2] for s in spread[plan]):.2f} s"
        print(f"{name:22} {wall:11.1f} s {wall / floor:5.2f}x {statistics.median(cpus[plan]):8.1f} s"
              f" {lo_hi:>22} {merge:>6}")
    mismatches += [f"round {r + 1}: {n} shards merged differ from the whole scan"
                   for (r, n), digest in merged_md5.items() if digest != whole_md5]
    if mismatches:
        print("\n" + "\n".join(mismatches))
        return 1
    print(f"\nmerged output of every shard count is byte-identical to the whole scan (md5 {whole_md5})")
    return 0


def check(name: str, result):
    if result.code not in (0, 1):
        tail = result.stderr.strip().splitlines()[-1:] or ["no message"]
        raise SystemExit(f"{name} failed (exit {result.code}): {tail[0]}")
    return result


if __name__ == "__main__":
    sys.exit(main())
