"""Unexplained failures on real sessions whose outcome is known from outside the text (issue 34).

    .venv/bin/python bench/eval_unexplained.py --dsn postgresql://postgres@127.0.0.1:5432/postgres
    .venv/bin/python bench/eval_unexplained.py --dsn ... --no-build            # reuse eval_outcome's DB
    .venv/bin/python bench/eval_unexplained.py --dsn ... --split locked --locked-once

Scans eval_outcome.py's database of one side of split.yaml (the sessions whose source ships an
outcome) and reports, of the sessions judged failed from outside: how many carry a finding
that explains them, how many are unexplained, and what share of those falls into groups of 3
or more (the target is 60%); then the top groups with their descriptions and examples, for a
person to read (`--show N` prints each example's ending).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import eval_outcome  # noqa: E402
import real_corpus  # noqa: E402
import text_corpus  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    text_corpus.split_options(parser)
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument("--show", type=int, default=0, help="examples of each top group to print in full (tune only)")
    args = parser.parse_args()
    text_corpus.check_split(args)
    import psycopg.conninfo

    chosen = eval_outcome.sessions(args.split)
    dbname = f"nomos_forensics_outcome_{args.split}"
    dsn = (psycopg.conninfo.make_conninfo(args.dsn, dbname=dbname) if args.no_build
           else eval_outcome.build(args.dsn, dbname, chosen))
    keys = {real_corpus.session_id(key): key for key in chosen}
    document = json.loads(text_corpus.run_scan(dsn, fmt="json"))
    cards = {keys[c["session"]["id"]]: c for c in document["cards"] if c["session"]["id"] in keys}
    sizes = Counter(c["unexplained"]["group"] for c in cards.values() if c.get("unexplained"))
    failed = [k for k in cards if chosen[k]["outcome"] == "failure"]
    flagged = [k for k in failed if cards[k]["outcome"] in ("failed", "partial", "unknown")]
    unexplained = [k for k in flagged if cards[k].get("unexplained")]
    grouped = [k for k in unexplained if sizes[cards[k]["unexplained"]["group"]] >= 3]
    by_family = Counter(chosen[k]["family"] for k in unexplained)
    print(f"## Unexplained failures ({args.split}: {len(cards)} sessions, {len(failed)} failed from outside)\n")
    print(f"- failed from outside, and the Outcome says failed, partial or unknown: {len(flagged)}")
    print(f"- of them, no finding of friction or above: {len(unexplained)} "
          f"({', '.join(f'{f} {n}' for f, n in by_family.most_common())})")
    share = f"{100 * len(grouped) / len(unexplained):.0f}%" if unexplained else "-"
    print(f"- of those, in groups of 3 or more: {len(grouped)} ({share}; target >= 60%)")
    summary = document["summary"]["unexplained"]
    print(f"- the whole scan: {summary['unexplained']} unexplained of {summary['failures']} failures, "
          f"{summary['signatures']} signatures, {100 * summary['grouped_share']:.0f}% in groups of 3 or more\n")
    if args.split == "locked":  # figures only: the locked texts are not read, not even as group descriptions
        return 0
    for group in summary["groups"][: args.top]:
        mine = [k for k, c in cards.items() if (c.get("unexplained") or {}).get("group") == group["id"]]
        truth = Counter(chosen[k]["outcome"] for k in mine)
        print(f"### {group['id']}: {group['sessions']} sessions ({dict(truth)} from outside)\n{group['description']}")
        print(f"models {group['models']}; topic words {group['topic_words']}")
        for example in group["examples"][: args.show]:
            print(f"  - {example['id'][:8]} {example['outcome']}: {example['reason']}")
            if example.get("final"):
                print(f"    final: {example['final']['quote']}")
            if example.get("error"):
                print(f"    error: {example['error']['quote']}")
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
