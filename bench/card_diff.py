"""The cards that changed between two scans of the real corpus, read as the protocol allows:
tune families' cards printed (outcome and findings before and after), locked families' counted.

    nomos-forensics scan --dsn "host=127.0.0.1 user=postgres dbname=nomos_forensics_real" --format jsonl > before.jsonl
    … change a rule …
    nomos-forensics scan --dsn … --format jsonl > after.jsonl
    .venv/bin/python bench/card_diff.py before.jsonl after.jsonl

A card's session id maps back to its corpus record (real_corpus.session_id of the record's key),
the record to its source family (text_corpus.family_of) and the family to its side of
bench/realcorpus/split.yaml. Nothing of a locked or unknown family's card is printed but the count:
a quick script that printed every changed card's evidence once showed locked sessions' messages
(bench/README.md, "A protocol slip").
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import real_corpus  # noqa: E402
import text_corpus  # noqa: E402


def sides() -> dict[str, tuple[str, str, str]]:
    """session id -> (record key, family, split side) of every record of the corpus."""
    split = text_corpus.load_split()["families"]
    family_of = {s["name"]: text_corpus.family_of(s) for s in real_corpus.load_sources()}
    out = {}
    for record in real_corpus.iter_records(real_corpus.find_data_dir()):
        family = family_of.get(record["provenance"]["source"], record["provenance"]["source"])
        out[real_corpus.session_id(record["key"])] = (record["key"], family, split.get(family, {}).get("split", "?"))
    return out


def cards(path: Path) -> dict[str, dict]:
    with path.open(encoding="utf-8") as handle:
        return {c["session"]["id"]: c for c in map(json.loads, handle) if "session" in c}


def findings(card: dict | None) -> set[tuple[str, str, tuple[str, ...]]]:
    return {(f["rule"], f["message"], tuple(e.get("excerpt", "") for e in f.get("evidence", [])))
            for f in (card or {}).get("findings", [])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--width", type=int, default=300, help="characters of each line printed")
    args = parser.parse_args()
    before, after, where = cards(args.before), cards(args.after), sides()
    hidden: Counter = Counter()
    for sid in sorted(before.keys() | after.keys()):
        a, b = before.get(sid), after.get(sid)
        if json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True):
            continue
        key, family, side = where.get(sid, ("?", "?", "?"))
        if side != "tune":
            hidden[side] += 1
            continue
        print(f"== {family} {key}: outcome {(a or {}).get('outcome')} -> {(b or {}).get('outcome')}")
        if (a or {}).get("outcome_reason") != (b or {}).get("outcome_reason"):
            print(f"   reason: {(b or {}).get('outcome_reason', '')[:args.width]}")
        old, new = findings(a), findings(b)
        for sign, items in (("-", old - new), ("+", new - old)):
            for rule, message, evidence in sorted(items):
                print(f"   {sign} {rule}: {message[:args.width]}")
                for excerpt in evidence[:6]:
                    print(f"       {excerpt[:args.width]}")
    print(f"not tune, counted and not read: {dict(hidden) or 0}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
