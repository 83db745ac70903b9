"""Precision and recall of the built-in rules on the real-transcript corpus, and outcome accuracy.

    .venv/bin/python bench/eval_real.py --dsn postgresql://postgres@127.0.0.1:5432/postgres
    .venv/bin/python bench/eval_real.py --dsn ... --no-build --dbname nomos_forensics_real   # reuse the DB
    .venv/bin/python bench/eval_real.py --dsn ... --cases 20      # list up to 20 FP/FN per rule (default 8)
    .venv/bin/python bench/eval_real.py --dsn ... --by-family     # + one table per kind of source
    .venv/bin/python bench/eval_real.py --dsn ... --json bench/out/real_before.jsonl   # per-session results, to diff
    .venv/bin/python bench/eval_real.py --dsn ... --split heldout # only the held-out sessions (never tuned on)
    .venv/bin/python bench/eval_real.py --dsn ... --split heldout2 # the second held-out set (labelled blind, later)
    .venv/bin/python bench/eval_real.py --dsn ... --split heldout3 # the third held-out set (labelled blind, later still)
    .venv/bin/python bench/eval_real.py --dsn ... --split heldout4 # the fourth: Claude Code sessions (tool calls)
    .venv/bin/python bench/eval_real.py --dsn ... --split heldout5 # the fifth: other users' Claude Code sessions
    .venv/bin/python bench/eval_real.py --dsn ... --split heldout6 # the sixth: Claude Code session files (JSONL)
    .venv/bin/python bench/eval_real.py --dsn ... --split heldout7 # the seventh: aider histories of five more users

Builds the corpus database from the mapped sessions (bench/real_corpus.py build), runs
`nomos-forensics scan --format jsonl` on it through the CLI, and compares every card with the
labels in bench/realcorpus/labels/: per text rule, a session is a true positive when the rule
fired and the label flags it (error-card: when the label lists error cards, `error_cards`; their
causes are also compared card by card with the findings' `data.cause`/`data.count`); tool-fanout and oversized-message are compared as counts (turns
over 30 calls, messages over 50 KiB) against raw_counts.yaml. Sessions without a label are left
out. Prints the per-rule table (markdown), outcome accuracy with its confusion, and each false
positive and miss with a one-line excerpt.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_corpus

TEXT_RULES = ("cant-run", "no-web-tool", "empty-response", "non-english-refusal", "user-frustration",
              "unfinished-session")
COUNT_RULES = {"tool-fanout": "fanout_turns", "oversized-message": "oversized"}
# Rules whose expectation is derived from a label field rather than listed under `flags`:
# error-card is expected on every session whose `error_cards` list is not empty.
DERIVED_RULES = {"error-card": "error_cards"}
ERROR_CAUSES = ("quota", "rate_limit", "context_length", "auth", "config", "provider", "timeout", "tool", "unknown")
OUTCOMES = ("achieved", "partial", "failed", "unknown")
SPLITS = ("all", "tuned", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7")  # a manifest line without `split` is in the tuned set


def in_split(labels: dict[str, dict[str, Any]], manifest: list[dict[str, Any]], split: str) -> dict[str, dict[str, Any]]:
    """The labels of the sessions of one split (`all`: every label)."""
    if split == "all":
        return labels
    split_of = {m["key"]: m.get("split", "tuned") for m in manifest}
    return {key: label for key, label in labels.items() if split_of.get(key) == split}


def load_labels(directory: Path = real_corpus.LABELS) -> dict[str, dict[str, Any]]:
    """Every labelled session (key -> label) of every labels/*.yaml but raw_counts.yaml."""
    labels: dict[str, dict[str, Any]] = {}
    for path in sorted(directory.glob("*.yaml")):
        if path.name == "raw_counts.yaml":
            continue
        for key, label in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).items():
            if key in labels:
                raise SystemExit(f"{path.name}: {key} is labelled twice")
            labels[key] = label
    return labels


def check_labels(labels: dict[str, dict[str, Any]], keys: set[str]) -> list[str]:
    """Problems of the label files: unknown sessions, rules, outcomes, missing reasons."""
    problems = []
    for key, label in labels.items():
        if key not in keys:
            problems.append(f"{key}: no such session in the manifest")
        if label.get("outcome") not in OUTCOMES:
            problems.append(f"{key}: outcome {label.get('outcome')!r} is not one of {', '.join(OUTCOMES)}")
        if not str(label.get("outcome_reason") or "").strip():
            problems.append(f"{key}: no outcome_reason")
        flags = label.get("flags")
        if not isinstance(flags, dict):
            problems.append(f"{key}: flags must be a mapping (use {{}} for none)")
            continue
        for cause in label.get("error_cards") or []:
            if cause not in ERROR_CAUSES:
                problems.append(f"{key}: error card cause {cause!r} is not one of {', '.join(ERROR_CAUSES)}")
        for rule, reason in flags.items():
            if rule not in TEXT_RULES:
                problems.append(f"{key}: unknown rule {rule!r} in flags")
            if not str(reason or "").strip():
                problems.append(f"{key}: flag {rule} has no reason")
    return problems


def scan(dsn: str) -> dict[str, dict[str, Any]]:
    """session id -> card, from the CLI's `scan --format jsonl`."""
    proc = subprocess.run([sys.executable, "-m", "nomos_forensics", "scan", "--format", "jsonl", "--dsn", dsn],
                          capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"scan failed ({proc.returncode}): {proc.stderr.strip()}")
    cards = {}
    for line in proc.stdout.splitlines():
        if line.strip():
            card = json.loads(line)
            cards[card["session"]["id"]] = card
    return cards


def _findings(card: dict[str, Any], rule: str) -> list[dict[str, Any]]:
    return [f for f in card.get("findings") or [] if f.get("rule") == rule]


def _count(card: dict[str, Any], rule: str) -> int:
    """How many turns (tool-fanout) or messages (oversized-message) the rule reported."""
    found = _findings(card, rule)
    if rule == "tool-fanout":
        return len({e.get("turn") for f in found for e in f.get("evidence") or []}) or len(found)
    return sum(len(f.get("evidence") or []) or 1 for f in found)


def _excerpt(text: Any, width: int = 110) -> str:
    return " ".join(str(text or "").split())[:width]


def evaluate(cards: dict[str, dict[str, Any]], labels: dict[str, dict[str, Any]],
             counts: dict[str, dict[str, int]], manifest: list[dict[str, Any]]) -> dict[str, Any]:
    by_key = {m["key"]: m for m in manifest}
    rows, cases = [], {}
    labelled = [k for k in labels if k in by_key and by_key[k]["id"] in cards]
    for rule in TEXT_RULES + tuple(DERIVED_RULES):
        tp = fp = fn = 0
        wrong = []
        for key in labelled:
            card = cards[by_key[key]["id"]]
            got = bool(_findings(card, rule))
            want = _expected(labels[key], rule)
            tp += got and want
            fp += got and not want
            fn += want and not got
            if got and not want:
                ev = (_findings(card, rule)[0].get("evidence") or [{}])[0]
                wrong.append(("FP", key, _excerpt(ev.get("excerpt") or _findings(card, rule)[0].get("message"))))
            elif want and not got:
                wrong.append(("FN", key, _excerpt((labels[key].get("flags") or {}).get(rule)
                                                  or labels[key].get(DERIVED_RULES.get(rule, ""), ""))))
        rows.append(_row(rule, tp, fp, fn, tp + fn))
        cases[rule] = wrong
    for rule, field in COUNT_RULES.items():
        tp = fp = fn = expected = 0
        wrong = []
        for key in labelled:
            want = int((counts.get(key) or {}).get(field, 0))
            got = _count(cards[by_key[key]["id"]], rule)
            tp += min(want, got)
            fp += max(0, got - want)
            fn += max(0, want - got)
            expected += want
            if got != want:
                wrong.append(("FP" if got > want else "FN", key, f"expected {want}, reported {got}"
                              + (f" (max {counts[key]['max_calls_in_turn']} calls in a turn)" if rule == "tool-fanout" else "")))
        rows.append(_row(rule, tp, fp, fn, expected))
        cases[rule] = wrong
    confusion: collections.Counter = collections.Counter()
    outcome_wrong = []
    for key in labelled:
        got = cards[by_key[key]["id"]].get("outcome")
        want = labels[key]["outcome"]
        confusion[(want, got)] += 1
        if got != want:
            outcome_wrong.append((key, want, got, labels[key].get("outcome_reason", "")))
    right = sum(n for (want, got), n in confusion.items() if want == got)
    causes = {"cards": 0, "right": 0, "wrong": []}
    for key in labelled:
        want_causes = collections.Counter(labels[key].get("error_cards") or [])
        got_causes = _causes(cards[by_key[key]["id"]])
        causes["cards"] += max(sum(want_causes.values()), sum(got_causes.values()))
        causes["right"] += sum((want_causes & got_causes).values())
        if want_causes != got_causes:
            causes["wrong"].append((key, sorted(want_causes.elements()), sorted(got_causes.elements())))
    return {"rows": rows, "cases": cases, "labelled": len(labelled), "outcome_right": right,
            "confusion": confusion, "outcome_wrong": outcome_wrong, "causes": causes}


def _expected(label: dict[str, Any], rule: str) -> bool:
    if rule in DERIVED_RULES:
        return bool(label.get(DERIVED_RULES[rule]))
    return rule in (label.get("flags") or {})


def _causes(card: dict[str, Any]) -> collections.Counter:
    """How many error cards the card's error-card findings put under each cause."""
    found: collections.Counter = collections.Counter()
    for finding in _findings(card, "error-card"):
        data = finding.get("data") or {}
        found[data.get("cause", "unknown")] += int(data.get("count") or len(finding.get("evidence") or []) or 1)
    return found


def _row(rule: str, tp: int, fp: int, fn: int, expected: int) -> list[Any]:
    precision = f"{tp / (tp + fp):.2f}" if tp + fp else "n/a"
    recall = f"{tp / (tp + fn):.2f}" if tp + fn else "n/a"
    return [rule, expected, tp, fp, fn, precision, recall]


def report(result: dict[str, Any], show: int) -> None:
    n = result["labelled"]
    print(f"Real-transcript corpus: {n} labelled sessions\n")
    print(tabulate(result["rows"], headers=["rule", "expected", "TP", "FP", "FN", "precision", "recall"],
                   tablefmt="github"))
    causes = result.get("causes")
    if causes and causes["cards"]:
        print(f"\nError-card causes: {causes['right']}/{causes['cards']} cards under the labelled cause")
        for key, want, got in causes["wrong"][:show]:
            print(f"  {key}: label {want}, card {got}")
    right = result["outcome_right"]
    print(f"\nOutcome: {right}/{n} right ({right / n:.0%})" if n else "\nOutcome: 0/0 right (no labelled session in this database)")
    matrix = [[want] + [result["confusion"].get((want, got), 0) for got in OUTCOMES] for want in OUTCOMES]
    print(tabulate(matrix, headers=["label \\ card"] + list(OUTCOMES), tablefmt="github"))
    for rule, wrong in result["cases"].items():
        if not wrong:
            continue
        print(f"\n{rule}: {sum(1 for w in wrong if w[0] == 'FP')} FP, {sum(1 for w in wrong if w[0] == 'FN')} FN")
        for kind, key, text in wrong[:show]:
            print(f"  {kind} {key}: {text}")
        if len(wrong) > show:
            print(f"  … {len(wrong) - show} more (--cases N)")
    if result["outcome_wrong"]:
        print(f"\noutcome: {len(result['outcome_wrong'])} wrong")
        for key, want, got, reason in result["outcome_wrong"][:show]:
            print(f"  {key}: label {want}, card {got}: {_excerpt(reason, 90)}")
        if len(result["outcome_wrong"]) > show:
            print(f"  … {len(result['outcome_wrong']) - show} more (--cases N)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True, help="admin connection; the corpus database is (re)built on its server")
    parser.add_argument("--dbname", default="nomos_forensics_real")
    parser.add_argument("--no-build", action="store_true", help="use the database as it is (built before)")
    parser.add_argument("--data", type=Path, help="the mapped sessions (default: see real_corpus.py)")
    parser.add_argument("--cases", type=int, default=8, help="false positives/misses listed per rule")
    parser.add_argument("--json", type=Path, metavar="PATH",
                        help="also write every labelled session's expected and reported values (one JSON object a line)")
    parser.add_argument("--split", choices=SPLITS, default="all",
                        help="which labelled sessions to score: the tuned set, a held-out set (heldout, heldout2), or all (default)")
    parser.add_argument("--by-family", action="store_true",
                        help="also one table per kind of source (interactive aider, unattended aider, agent runs)")
    args = parser.parse_args(argv)
    manifest = real_corpus.load_manifest()
    labels = load_labels()
    problems = check_labels(labels, {m["key"] for m in manifest})
    if problems:
        print("label problems:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    labels = in_split(labels, manifest, args.split)
    if args.no_build:
        import psycopg.conninfo

        dsn = psycopg.conninfo.make_conninfo(args.dsn, dbname=args.dbname)
    else:
        data = args.data or real_corpus.find_data_dir()
        if data is None:
            print("no mapped sessions found; run `bench/real_corpus.py extract` (see bench/README.md)", file=sys.stderr)
            return 2
        dsn = real_corpus.build(args.dsn, args.dbname, data)
    counts = yaml.safe_load((real_corpus.LABELS / "raw_counts.yaml").read_text(encoding="utf-8")) or {}
    cards = scan(dsn)
    if args.split != "all":
        print(f"Split: {args.split}")
    report(evaluate(cards, labels, counts, manifest), args.cases)
    if args.json:
        write_sessions(args.json, cards, labels, counts, manifest)
    if args.by_family:
        families: dict[str, dict[str, dict[str, Any]]] = {}
        source_of = {m["key"]: m["source"] for m in manifest}
        for key, label in labels.items():
            families.setdefault(family(source_of.get(key, "")), {})[key] = label
        for name, subset in sorted(families.items()):
            result = evaluate(cards, subset, counts, manifest)
            print(f"\n## {name}: {result['labelled']} sessions, outcome {result['outcome_right']}/{result['labelled']} right")
            print(tabulate(result["rows"], headers=["rule", "expected", "TP", "FP", "FN", "precision", "recall"],
                           tablefmt="github"))
    return 0


def write_sessions(path: Path, cards: dict[str, dict[str, Any]], labels: dict[str, dict[str, Any]],
                   counts: dict[str, dict[str, int]], manifest: list[dict[str, Any]]) -> None:
    """One line per labelled session: what the label says and what the card reported, per rule,
    so two runs (before and after a rule change) can be compared session by session."""
    with path.open("w", encoding="utf-8") as fh:
        for m in manifest:
            label, card = labels.get(m["key"]), cards.get(m["id"])
            if label is None or card is None:
                continue
            rules = {rule: {"expected": _expected(label, rule), "reported": bool(_findings(card, rule))}
                     for rule in TEXT_RULES + tuple(DERIVED_RULES)}
            rules.update({rule: {"expected": int((counts.get(m["key"]) or {}).get(field, 0)), "reported": _count(card, rule)}
                          for rule, field in COUNT_RULES.items()})
            fh.write(json.dumps({"key": m["key"], "session": m["id"], "source": m["source"],
                                 "outcome": {"expected": label["outcome"], "reported": card.get("outcome")},
                                 "rules": rules}, ensure_ascii=False) + "\n")


def family(source: str) -> str:
    """The kind of source a session comes from, for --by-family."""
    if source.startswith("mswe"):
        return "agent runs (mini-swe-agent)"
    if source == "aider-tradepirates":
        return "unattended aider runs"
    return "interactive aider sessions"


if __name__ == "__main__":
    sys.exit(main())
