"""Where a scan's client time goes, rule by rule: CPU per message of building sessions, of each
rule's check, and of building the card, on the first N sessions of the bench database.

    .venv/bin/python bench/rule_times.py [--dsn DSN] [--sessions 5000] [--repeat 3]

Sessions are read as `scan` reads them (timed, each dropped once built), then read again and
held in memory (frozen from the garbage collector, which in a scan never sees more than a few
sessions), and each stage is timed `--repeat` times on the same objects and the best run is
kept, so the figures compare stages measured side by side in one process rather than across
noisy runs. The card stage recomputes
each session's ending (`Session.ending` is cached on first use, by the first rule that asks), and
the refusal decisions every text rule shares (`rulekit.refusals`, cached on the session by the
first rule that asks) are a stage of their own: without it, whichever rule asked first paid for
them only in the first of the `--repeat` runs, and the best run hid them. So is the reading of
tool outputs as errors (`rounds.failed_row`, cached on each tool row by the first reader).

    .venv/bin/python bench/rule_times.py --sessions 2000 --compare /path/to/other/checkout
    .venv/bin/python bench/rule_times.py --sessions 3000 --profile user-frustration

`--compare DIR` also runs DIR's bench/rule_times.py (DIR's code, with DIR/.venv/bin/python when
there is one) on the same sessions and prints both columns and their ratio, stage by stage.
`--profile RULE` (a name or code) prints cProfile's top functions of that rule's check instead.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import nomos_forensics.scan.stream as scan_mod  # noqa: E402  (stream_sessions calls review from there)
from nomos_forensics import plugins  # noqa: E402
from nomos_forensics.card import Stats, decide_outcome, objective_of  # noqa: E402
from nomos_forensics.config import Config  # noqa: E402
from nomos_forensics.db import ConnectionSettings, Database  # noqa: E402
from nomos_forensics.engine import build_ruleset, review  # noqa: E402
from nomos_forensics.render import card_json  # noqa: E402
from nomos_forensics.rounds import failed_row  # noqa: E402
from nomos_forensics.rule import RuleContext  # noqa: E402
from nomos_forensics.rulekit import refusals  # noqa: E402
from nomos_forensics.scan import ScanFilters, Summary, stream_sessions  # noqa: E402
from nomos_forensics.scan.stream import settle_memory  # noqa: E402
from nomos_forensics.schema import reflect  # noqa: E402


def default_dsn() -> str:
    meta = HERE / "out" / "meta.json"
    if meta.exists():
        return json.loads(meta.read_text())["dsn"]
    return "host=127.0.0.1 user=postgres dbname=nomos_forensics_bench"


def best_of(repeat: int, fn, setup=None) -> float:
    best = float("inf")
    for _ in range(repeat):
        if setup is not None:
            setup()
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn", default=None)
    ap.add_argument("--sessions", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print the stages as one JSON object")
    ap.add_argument("--compare", type=Path, metavar="DIR", help="another checkout to time side by side")
    ap.add_argument("--profile", metavar="RULE", help="print cProfile's top functions of one rule (name or code) instead")
    args = ap.parse_args()

    db = Database(ConnectionSettings.resolve(args.dsn or default_dsn()))
    registry = plugins.load(())
    with db.connect("timing rules") as conn:
        schema = reflect(conn, db)
        ruleset = build_ruleset(registry, Config(), schema=schema)
        settle_memory()  # the collector as scan sets it
        # the stream as scan reads it, with review() swapped for "keep the session": timed once
        # as scan holds sessions (one at a time, dropped when reviewed), then read again and held
        original = scan_mod.review
        scan_mod.review = lambda session, *a, **k: session
        try:
            t0 = time.process_time()
            for _ in stream_sessions(db, conn, ruleset, ScanFilters(limit=args.sessions), schema):
                pass
            read_s = time.process_time() - t0
            with db.connect("timing rules") as again:  # a pass's named cursors live until its transaction ends
                sessions = list(stream_sessions(db, again, ruleset, ScanFilters(limit=args.sessions), schema))
        finally:
            scan_mod.review = original
    db.dispose()
    # held, the sessions would be walked by every full collection, which a scan never does
    gc.collect()
    gc.freeze()

    messages = sum(len(s.messages) for s in sessions)
    ctx = RuleContext(query=None, schema=schema)
    rows = [("read + build sessions (client CPU)", read_s)]

    tool_rows = [m for s in sessions for m in s.messages if m.role == "tool"]

    def forget_outputs():
        # whether a tool row's output reads as an error is cached on it by the first reader
        # (rounds.failed_row): the card is timed as that first one
        for m in tool_rows:
            m.failed_output = None

    def card_only():
        for s in sessions:
            s.__dict__.pop("ending", None)  # measure the ending model too, not its cached value
            Stats.of(s)
            objective_of(s)
            decide_outcome(s, [])

    rows.append(("card: stats, objective, outcome", best_of(args.repeat, card_only, forget_outputs)))

    def decisions():
        for s in sessions:
            s.__dict__.pop("_refusals", None)  # cached on the session by whichever rule asks first
            refusals(s)

    # timed on its own, then left cached: each rule below is timed without it, as in a scan,
    # where the first rule to ask pays for it once
    rows.append(("refusal decisions (shared by the text rules)", best_of(args.repeat, decisions)))

    def outputs():
        for m in tool_rows:
            failed_row(m)

    # the same for the tool outputs read as errors (shared by the card and the record rules)
    rows.append(("tool outputs read as errors (shared)", best_of(args.repeat, outputs, forget_outputs)))
    if args.profile:
        profile(args.profile, ruleset, sessions, ctx)
        return
    for active in ruleset.active:
        rule = active.rule

        def run(rule=rule):
            for s in sessions:
                for _ in rule.check(s, ctx) or ():
                    pass

        rows.append((f"{rule.code} {rule.name}", best_of(args.repeat, run)))
    cards = [review(s, ruleset, query=None, schema=schema) for s in sessions]

    def render():
        for card in cards:
            card_json(card, indent=None)

    def summarise():
        summary = Summary()
        for card in cards:
            summary.add(card)

    rows.append(("render the JSON line", best_of(args.repeat, render)))
    rows.append(("add to the summary", best_of(args.repeat, summarise)))
    total = sum(s for _, s in rows)
    if args.json:
        print(json.dumps({"sessions": len(sessions), "messages": messages, "stages": rows}))
        return
    if args.compare:
        compare(args, rows, messages)
        return
    print(f"{len(sessions)} sessions, {messages} messages; best of {args.repeat} (CPU time)\n")
    print(f"{'stage':45} {'s':>8} {'us/message':>11} {'share':>6}")
    for name, seconds in rows:
        print(f"{name:45} {seconds:8.3f} {1e6 * seconds / messages:11.2f} {100 * seconds / total:5.1f}%")
    print(f"{'total':45} {total:8.3f} {1e6 * total / messages:11.2f}")


def profile(wanted: str, ruleset, sessions, ctx) -> None:
    """cProfile of one rule's check over the held sessions, top 30 by own time (after one warm run)."""
    import cProfile
    import pstats

    rules = [a.rule for a in ruleset.active if wanted in (a.rule.name, a.rule.code)]
    if not rules:
        raise SystemExit(f"no active rule named {wanted!r}")
    rule = rules[0]

    def run():
        for s in sessions:
            for _ in rule.check(s, ctx) or ():
                pass

    run()
    profiler = cProfile.Profile()
    profiler.runcall(run)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(30)


def compare(args, rows: list[tuple[str, float]], messages: int) -> None:
    """Run the other checkout's rule_times.py on the same sessions; print both and the ratio."""
    other = args.compare.resolve()
    python = other / ".venv" / "bin" / "python"
    cmd = [str(python if python.exists() else sys.executable), str(other / "bench" / "rule_times.py"),
           "--sessions", str(args.sessions), "--repeat", str(args.repeat), "--json"]
    if args.dsn:
        cmd += ["--dsn", args.dsn]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    base = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout)
    theirs = dict(base["stages"])
    print(f"{base['messages']} / {messages} messages (other / this); best of {args.repeat} (CPU time), us per message\n")
    print(f"{'stage':45} {'other':>9} {'this':>9} {'this/other':>10}")
    names = list(dict.fromkeys([n for n, _ in base["stages"]] + [n for n, _ in rows]))
    ours = dict(rows)
    for name in names:
        a = 1e6 * theirs[name] / base["messages"] if name in theirs else None
        b = 1e6 * ours[name] / messages if name in ours else None
        ratio = f"{b / a:10.2f}" if a and b is not None else f"{'n/a':>10}"
        print(f"{name:45} {a if a is not None else float('nan'):9.2f} {b if b is not None else float('nan'):9.2f} {ratio}")
    ta, tb = 1e6 * sum(theirs.values()) / base["messages"], 1e6 * sum(ours.values()) / messages
    print(f"{'total':45} {ta:9.2f} {tb:9.2f} {tb / ta:10.2f}")


if __name__ == "__main__":
    main()
