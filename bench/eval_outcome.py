"""The card's Outcome and unfinished-session against outcomes known from outside the text.

    .venv/bin/python bench/eval_outcome.py --dsn postgresql://postgres@127.0.0.1:5432/postgres
    .venv/bin/python bench/eval_outcome.py --dsn ... --no-build --cases 20   # reuse the DB, list misses
    .venv/bin/python bench/eval_outcome.py --dsn ... --split locked --locked-once   # once, at the end

Every session of the real-text corpus whose source ships its outcome (`external.outcome`:
success, failure or partial, from a benchmark's reward or pass/fail, or a human rating; see
bench/realcorpus/sources.yaml) and whose family is on the chosen side of split.yaml is loaded into
a database of its own, scanned through the CLI, and its card compared with that outcome: on the
sessions judged successful, how often the Outcome says `achieved` and how often
`unfinished-session` fires (issue 32: >= 90% and <= 3%); on the failures, how often the card says
anything but `achieved`; and whether every Outcome cites the message it rests on.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import real_corpus  # noqa: E402
import text_corpus  # noqa: E402

SCRIPT = text_corpus.SCRIPT  # the nomos-forensics beside this Python


def sessions(split: str) -> dict[str, dict]:
    """key -> {family, outcome} of every session of `split` with an outcome from outside."""
    families = text_corpus.load_split()["families"]
    source_family = {s["name"]: text_corpus.family_of(s) for s in real_corpus.load_sources()}
    out = {}
    for record in real_corpus.iter_records(real_corpus.find_data_dir()):
        outcome = (record["session"].get("external") or {}).get("outcome")
        source = record["provenance"]["source"]
        family = source_family.get(source, source)
        if outcome and families.get(family, {}).get("split") == split:
            out[record["key"]] = {"family": family, "outcome": outcome, "record": record}
    return out


def build(admin_dsn: str, dbname: str, chosen: dict[str, dict]) -> str:
    with tempfile.TemporaryDirectory() as folder:
        with (Path(folder) / "outcome.jsonl").open("w", encoding="utf-8") as handle:
            for item in chosen.values():
                handle.write(json.dumps(item["record"], ensure_ascii=False) + "\n")
        return real_corpus.build(admin_dsn, dbname, Path(folder))


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}% ({part}/{whole})" if whole else "-"


CAUSES = ("friction", "blocker")  # the severities a card's reader takes for a cause


def names_a_cause(card: dict) -> bool:
    """The card offers a cause (issue 33): a finding of friction or above, or an Outcome other
    than achieved with its reason. Whether a reader agrees with it is read by hand."""
    return card["outcome"] != "achieved" or any(f["severity"] in CAUSES for f in card["findings"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    text_corpus.split_options(parser)
    parser.add_argument("--cases", type=int, default=0, help="successes not called achieved to print (tune only)")
    parser.add_argument("--tool", type=Path, default=SCRIPT, help="the nomos-forensics to score (another checkout's, "
                        "for a before/after on one database)")
    args = parser.parse_args()
    text_corpus.check_split(args)
    import psycopg.conninfo
    from tabulate import tabulate

    chosen = sessions(args.split)
    if not chosen:
        raise SystemExit(f"no session of the {args.split} side has an outcome from outside (run real_corpus.py extract)")
    dbname = f"nomos_forensics_outcome_{args.split}"
    dsn = psycopg.conninfo.make_conninfo(args.dsn, dbname=dbname) if args.no_build else build(args.dsn, dbname, chosen)
    keys = {real_corpus.session_id(key): key for key in chosen}
    cards = {keys[c["session"]["id"]]: c for c in text_corpus.scan_cards(dsn, args.tool) if c.get("session", {}).get("id") in keys}

    rows, confusion, misses = [], defaultdict(Counter), []
    for family in sorted({i["family"] for i in chosen.values()}):
        mine = {k: i for k, i in chosen.items() if i["family"] == family and k in cards}
        wins = [k for k, i in mine.items() if i["outcome"] == "success"]
        losses = [k for k, i in mine.items() if i["outcome"] == "failure"]
        achieved = [k for k in wins if cards[k]["outcome"] == "achieved"]
        unfinished = [k for k in wins if any(f["rule"] == "unfinished-session" for f in cards[k]["findings"])]
        caught = [k for k in losses if cards[k]["outcome"] != "achieved"]
        cited = [k for k in mine if cards[k].get("outcome_message") is not None]
        named = [k for k in losses if names_a_cause(cards[k])]
        rows.append([family, len(mine), pct(len(achieved), len(wins)), pct(len(unfinished), len(wins)),
                     pct(len(caught), len(losses)), pct(len(named), len(losses)), pct(len(cited), len(mine))])
        for key, item in mine.items():
            confusion[item["outcome"]][cards[key]["outcome"]] += 1
        misses += [(key, cards[key]) for key in wins if key not in achieved or key in unfinished]
    total = [k for k in chosen if k in cards]
    wins = [k for k in total if chosen[k]["outcome"] == "success"]
    losses = [k for k in total if chosen[k]["outcome"] == "failure"]
    rows.append(["all", len(total), pct(sum(cards[k]["outcome"] == "achieved" for k in wins), len(wins)),
                 pct(sum(any(f["rule"] == "unfinished-session" for f in cards[k]["findings"]) for k in wins), len(wins)),
                 pct(sum(cards[k]["outcome"] != "achieved" for k in losses), len(losses)),
                 pct(sum(map(names_a_cause, (cards[k] for k in losses))), len(losses)),
                 pct(sum(cards[k].get("outcome_message") is not None for k in total), len(total))])
    print(f"## Outcome against outcomes known from outside ({args.split}: {len(total)} sessions)\n")
    print(tabulate(rows, headers=["family", "sessions", "successes: achieved", "successes: unfinished-session",
                                  "failures: not achieved", "failures: a cause named", "Outcome cites a message"],
                   tablefmt="github"))
    by_rule = defaultdict(Counter)  # rule -> {outcome from outside: sessions it fired on}
    for key in total:
        for rule in {f["rule"] for f in cards[key]["findings"] if f["severity"] in CAUSES}:
            by_rule[rule][chosen[key]["outcome"]] += 1
    print("\n" + tabulate([[rule, c["failure"], c["success"], c["partial"]] for rule, c in sorted(by_rule.items())],
                          headers=["rule (friction or above)", "on failures", "on successes", "on partials"],
                          tablefmt="github"))
    values = sorted({v for c in confusion.values() for v in c})
    print("\n" + tabulate([[truth, *(confusion[truth][v] for v in values)] for truth in sorted(confusion)],
                          headers=["outside \\ card", *values], tablefmt="github"))
    if args.split == "tune" and args.cases:
        print(f"\n## Successes not called achieved, or with unfinished-session (first {args.cases})\n")
        for key, card in misses[: args.cases]:
            unfinished = [f["message"] for f in card["findings"] if f["rule"] == "unfinished-session"]
            print(f"- {key}: {card['outcome']}: {card.get('outcome_reason', '')}"
                  + (f" | unfinished-session: {unfinished[0]}" if unfinished else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
