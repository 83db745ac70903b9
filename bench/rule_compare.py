"""A rule's CPU per message against its version at another git ref, side by side in one run.

    .venv/bin/python bench/rule_compare.py --against main --sessions 2000 non_english_refusal empty_response

Reads the first N sessions of the bench database once (as `scan` does), loads each named rule
module twice, from the working tree and from `git show REF:rules/<module>.py`, and times both
versions' `check` on the same Session objects, alternating old and new `--repeat` times and
keeping the best of each, so machine load hits both alike. Both versions share today's
nomos_forensics package (rulekit, langid), so the figure is the cost of the rule's own code.
A module new on this side (no version at REF) is timed alone.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import rule_times  # noqa: E402

import nomos_forensics.scan.stream as scan_mod  # noqa: E402
from nomos_forensics import plugins  # noqa: E402
from nomos_forensics.config import Config  # noqa: E402
from nomos_forensics.db import ConnectionSettings, Database  # noqa: E402
from nomos_forensics.engine import build_ruleset  # noqa: E402
from nomos_forensics.rule import Rule, RuleContext  # noqa: E402
from nomos_forensics.scan import ScanFilters, stream_sessions  # noqa: E402
from nomos_forensics.schema import reflect  # noqa: E402


def _module(name: str, source: str) -> types.ModuleType:
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


def _rule(module: types.ModuleType) -> Rule:
    (cls,) = module.nomos_forensics_rules()
    return cls()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="+", help="rule modules under rules/ (e.g. non_english_refusal)")
    ap.add_argument("--against", default="main", help="git ref of the old versions")
    ap.add_argument("--dsn", default=None)
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    db = Database(ConnectionSettings.resolve(args.dsn or rule_times.default_dsn()))
    with db.connect("comparing rules") as conn:
        schema = reflect(conn, db)
        ruleset = build_ruleset(plugins.load(()), Config(), schema=schema)
        original = scan_mod.review
        scan_mod.review = lambda session, *a, **k: session
        try:
            sessions = list(stream_sessions(db, conn, ruleset, ScanFilters(limit=args.sessions), schema))
        finally:
            scan_mod.review = original
    db.dispose()
    messages = sum(len(s.messages) for s in sessions)
    ctx = RuleContext(query=None, schema=schema)
    root = HERE.parent
    print(f"{len(sessions)} sessions, {messages} messages; best of {args.repeat}, old and new alternating "
          f"(CPU time, µs per message)\n")
    print(f"{'rule':28} {args.against:>10} {'this tree':>10} {'ratio':>7}  findings (old → new)")
    for name in args.modules:
        new = _rule(_module(f"new_{name}", (root / "rules" / f"{name}.py").read_text(encoding="utf-8")))
        shown = subprocess.run(["git", "-C", str(root), "show", f"{args.against}:rules/{name}.py"],
                               capture_output=True, text=True)
        old = _rule(_module(f"old_{name}", shown.stdout)) if shown.returncode == 0 else None
        best = {"old": float("inf"), "new": float("inf")}
        found = {"old": 0, "new": 0}
        for _ in range(args.repeat):
            for side, rule in (("old", old), ("new", new)):
                if rule is None:
                    continue
                count = 0
                t0 = time.process_time()
                for s in sessions:
                    for _finding in rule.check(s, ctx) or ():
                        count += 1
                best[side] = min(best[side], time.process_time() - t0)
                found[side] = count
        new_us = 1e6 * best["new"] / messages
        if old is None:
            print(f"{new.code + ' ' + new.name:28} {'—':>10} {new_us:10.2f} {'new':>7}  {found['new']}")
            continue
        old_us = 1e6 * best["old"] / messages
        print(f"{new.code + ' ' + new.name:28} {old_us:10.2f} {new_us:10.2f} {new_us / old_us:6.2f}×  "
              f"{found['old']} → {found['new']}")


if __name__ == "__main__":
    main()
