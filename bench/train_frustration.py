"""Train text.frustration's models on the labelled user messages of the tune families (never the
locked test), score them with the families held out in groups, and write their weights.

    .venv/bin/python bench/train_frustration.py --folds 6      # held-out figures
    .venv/bin/python bench/train_frustration.py --write        # write nomos_forensics/text/models/frustration.json

Each labelled user message is read as the rule reads it: its session is rebuilt in memory from the
corpus record, and user_frustration.user_contexts gives the message's context (the user's earlier
messages, the agent's turn before it, the rule's phrase signal). The first user message of a
session has no context and is never frustration (the guide says so); it is left out.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import real_corpus  # noqa: E402
import text_corpus  # noqa: E402
import train_text  # noqa: E402
from nomos_forensics_rules import user_frustration  # noqa: E402

from nomos_forensics.testing import session_from_case  # noqa: E402
from nomos_forensics.text import features as feats  # noqa: E402
from nomos_forensics.text import frustration  # noqa: E402

MODEL = HERE.parent / "nomos_forensics" / "text" / "models" / "frustration.json"
PRUNE = 0.005


def user_examples(split: str = "tune") -> list[dict]:
    """(item, family, language, text, features, kind, grade) of every labelled user message of
    `split` that follows an agent's reply."""
    labels = train_text.adjudicated("users")
    chosen = [i for i in text_corpus.items("users") if i["split"] == split and i["item"] in labels]
    records = text_corpus._records_by_key(real_corpus.find_data_dir(), {i["item"].rsplit("#", 1)[0] for i in chosen})
    wanted = defaultdict(dict)
    for item in chosen:
        key, position = item["item"].rsplit("#", 1)
        wanted[key][int(position)] = item
    out = []
    for key, positions in wanted.items():
        messages = records[key]["messages"]
        case = {"name": key, "messages": [{"raw": {"role": m.get("role"), "content": m.get("content")}}
                                          for m in messages]}
        session = session_from_case(case)
        index = {id(m): n for n, m in enumerate(session.messages)}
        for message, _text, context, _reason in user_frustration.user_contexts(session):
            item = positions.get(index[id(message)])
            if item is None:
                continue
            label = labels[item["item"]]
            names = frustration.features(message.text or "", context)
            if names is None:
                continue
            out.append({"item": item["item"], "family": item["family"],
                        "language": label.get("user_language") or item["language"], "text": message.text,
                        "features": feats.hashed(names), "kind": label["frustration"], "signal": context.signal,
                        "grade": label.get("grade") or "medium"})
    return out


def matrix(examples: list[dict]):
    from scipy.sparse import csr_matrix

    column: dict[int, int] = {}
    rows, cols = [], []
    for n, example in enumerate(examples):
        for feature in example["features"]:
            rows.append(n)
            cols.append(column.setdefault(feature, len(column)))
    buckets = sorted(column, key=column.get)
    return csr_matrix(([1.0] * len(rows), (rows, cols)), shape=(len(examples), len(column))), buckets


def train(examples: list[dict], c: float) -> dict:
    """`detect` (none / frustrated), `kind` and `grade` (among the frustrated), as JSON."""
    data, buckets = matrix(examples)
    detect = train_text.fit(data, ["none" if e["kind"] == "none" else "frustrated" for e in examples], c)
    out = {"detect": train_text.export(detect, ("none", "frustrated"), buckets)}
    upset = [e for e in examples if e["kind"] != "none"]
    data, buckets = matrix(upset)
    kinds = tuple(k for k in frustration.KINDS[1:] if any(e["kind"] == k for e in upset))
    out["kind"] = train_text.export(train_text.fit(data, [e["kind"] for e in upset], c), kinds, buckets)
    grades = tuple(g for g in frustration.GRADES if any(e["grade"] == g for e in upset))
    out["grade"] = train_text.export(train_text.fit(data, [e["grade"] for e in upset], c), grades, buckets)
    return out


MARGINS: dict[str, float] = {}


def predict(models: dict, example: dict) -> tuple[str, str | None]:
    scores = models["detect"].scores(example["features"])
    margin = scores[models["detect"].classes.index("frustrated")] - scores[models["detect"].classes.index("none")]
    MARGINS[example["item"]] = margin
    if margin <= frustration.MIN_MARGIN and not example["signal"]:
        return "none", None
    return models["kind"].best(example["features"])[0], models["grade"].best(example["features"])[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--c", type=float, default=0.5)
    parser.add_argument("--folds", type=int, default=None, metavar="K")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    from tabulate import tabulate

    train_text.PRUNE = PRUNE
    examples = user_examples("tune")
    print(f"{len(examples)} labelled tune user messages after a reply, from {len({e['family'] for e in examples})} "
          f"families ({Counter(e['kind'] for e in examples)})")
    if args.folds:
        families = sorted({e["family"] for e in examples})
        predicted: dict[str, tuple[str, str | None]] = {}
        for group in (families[i::args.folds] for i in range(args.folds)):
            models = {k: feats.LinearModel(v) for k, v in train([e for e in examples if e["family"] not in group], args.c).items()}
            for e in examples:
                if e["family"] in group:
                    predicted[e["item"]] = predict(models, e)
        gold = [e["kind"] for e in examples]
        got = [predicted[e["item"]][0] for e in examples]
        print(f"\nfamilies in {args.folds} held-out groups:")
        print(tabulate(train_text.scores(gold, got, frustration.KINDS[1:]),
                       ["kind", "labelled", "TP", "FP", "FN", "precision", "recall"], tablefmt="github"))
        upset_gold = [g != "none" for g in gold]
        upset_got = [g != "none" for g in got]
        tp = sum(a and b for a, b in zip(upset_gold, upset_got))
        print(f"\nany frustration: {sum(upset_gold)} labelled, found {tp}, false alarms "
              f"{sum(b and not a for a, b in zip(upset_gold, upset_got))} (precision {tp / max(1, sum(upset_got)):.2f}, "
              f"recall {tp / max(1, sum(upset_gold)):.2f})")
        curve = []
        for threshold in (0, 0.5, 1, 1.5, 2, 3):
            found = [bool(e["signal"]) or MARGINS[e["item"]] > threshold for e in examples]
            tp = sum(a and b for a, b in zip(upset_gold, found))
            curve.append(f"{threshold:+.1f}: P {tp / max(1, sum(found)):.2f} R {tp / max(1, sum(upset_gold)):.2f}")
        rule_only = [bool(e["signal"]) for e in examples]
        tp = sum(a and b for a, b in zip(upset_gold, rule_only))
        print(f"the rule's phrase signal alone: P {tp / max(1, sum(rule_only)):.2f} R {tp / max(1, sum(upset_gold)):.2f}")
        print("the signal, or the model above a margin: " + "; ".join(curve))
        grades = [(e["grade"], predicted[e["item"]][1]) for e in examples if e["kind"] != "none" and predicted[e["item"]][0] != "none"]
        print(f"grade right on {sum(a == b for a, b in grades)} of {len(grades)} frustrated messages found")
        rule = [e for e in examples]
        by_language = defaultdict(lambda: [0, 0, 0])
        for e, g, p in zip(rule, upset_gold, upset_got):
            row = by_language[e["language"]]
            row[0] += g
            row[1] += g and p
            row[2] += p and not g
        print(tabulate(sorted(([k, *v] for k, v in by_language.items() if v[0]), key=lambda r: -r[1]),
                       ["language", "frustrated", "found", "false alarms"], tablefmt="github"))
    out = train(examples, args.c)
    out["detect"]["meta"] = {"trained_on": len(examples), "families": sorted({e["family"] for e in examples}), "c": args.c}
    print("\nmodels: " + ", ".join(f"{name} {len(model['buckets'])} weighted features" for name, model in out.items()))
    if args.write:
        MODEL.write_text(json.dumps(out, separators=(",", ":")), encoding="utf-8")
        print(f"wrote {MODEL} ({MODEL.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
