"""Train the learned text models of nomos_forensics/text/ on the TUNE side of the real-text corpus
(never the locked test), score them leave-one-family-out, and write their weights as package data.

    .venv/bin/pip install scikit-learn          # training only: inference is pure Python
    .venv/bin/python bench/train_text.py refusal [--write] [--c 0.5]
    .venv/bin/python bench/train_text.py refusal --folds 8     # + scores with families held out in 8 groups
    .venv/bin/python bench/train_text.py refusal --lofo        # + leave-one-family-out scores (slow)

Examples: every labelled tune reply (bench/realcorpus/labels/text/, adjudicated values first),
plus the project's own example phrases (tests/phrases/: our words, in 14 languages) as one more
family. The model reads what `text.refusal.read` reads; a reply it does not read (no cue word)
is `none` at inference, so it is left out of training and counted as a gate miss when labelled
a refusal.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import real_corpus  # noqa: E402
import text_corpus  # noqa: E402

from nomos_forensics.text import features as feats  # noqa: E402
from nomos_forensics.text import refusal  # noqa: E402

MODELS = HERE.parent / "nomos_forensics" / "text" / "models"
PHRASES = HERE.parent / "tests" / "phrases"
# the example phrases' lists, as refusal kinds (policy-refusal's examples are operators' rules)
PHRASE_KINDS = {"cant-run": "cant-run", "no-web-tool": "no-web-tool", "policy-refusal": "business-rule"}


def adjudicated(unit: str) -> dict[str, dict]:
    """Annotator a's labels, with the adjudicated value where the two annotators differed."""
    labels = text_corpus.load_labels(unit, "a")
    for item, row in text_corpus.load_labels(unit, "final").items():
        labels[item] = {**labels.get(item, {}), **row}
    return labels


def reply_examples(split: str = "tune") -> list[dict]:
    """(item, family, language, text, kind, partial) of every labelled reply of `split`."""
    labels = adjudicated("replies")
    chosen = [i for i in text_corpus.items("replies") if i["split"] == split and i["item"] in labels]
    data = real_corpus.find_data_dir()
    records = text_corpus._records_by_key(data, {i["item"].rsplit("#", 1)[0] for i in chosen})
    out = []
    for item in chosen:
        key, position = item["item"].rsplit("#", 1)
        text = text_corpus.text_of(records[key]["messages"][int(position)])
        label = labels[item["item"]]
        out.append({"item": item["item"], "family": item["family"], "language": label.get("reply_language") or item["language"],
                    "text": text, "kind": label["refusal"], "partial": bool(label.get("partial"))})
    return out


def phrase_examples() -> list[dict]:
    out = []
    for name, kind in PHRASE_KINDS.items():
        data = yaml.safe_load((PHRASES / f"{name}.yaml").read_text(encoding="utf-8"))
        for side, value in (("fire", kind), ("quiet", "none")):
            lists = data.get(side) or []
            by_language = lists if isinstance(lists, dict) else {"en": lists}
            for language, phrases in by_language.items():
                for n, phrase in enumerate(phrases):
                    out.append({"item": f"phrases:{name}:{side}:{language}:{n}", "family": "phrases", "language": language,
                                "text": phrase, "kind": value, "partial": False})
    return out


_READ: dict[str, list[int] | None] = {}


def features_of(example: dict) -> list[int] | None:
    """The hashed features the model reads of an example (None: not read), computed once."""
    if example["item"] not in _READ:
        reading = refusal.read(example["text"])
        _READ[example["item"]] = None if reading is None else sorted(set(feats.hashed(reading.features)))
    return _READ[example["item"]]


class Vectors:
    """Examples as a sparse matrix over the feature buckets they use (compact columns: fitting
    is over tens of thousands of columns, not the 262,144 buckets)."""

    def __init__(self, examples: list[dict]) -> None:
        from scipy.sparse import csr_matrix

        rows, cols, self.kept = [], [], []
        self.column: dict[int, int] = {}
        for example in examples:
            features = features_of(example)
            if features is None:
                continue
            for feature in features:
                rows.append(len(self.kept))
                cols.append(self.column.setdefault(feature, len(self.column)))
            self.kept.append(example)
        self.buckets = sorted(self.column, key=self.column.get)
        self.matrix = csr_matrix(([1.0] * len(rows), (rows, cols)), shape=(len(self.kept), len(self.column)))


def fit(matrix, targets: list[str], c: float):
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, max_iter=3000, class_weight="balanced")
    model.fit(matrix, targets)
    return model


def export(model, classes_order: tuple[str, ...], buckets: list[int]) -> dict:
    """Bias and the nonzero weights per bucket (`buckets`: the bucket of each column), in
    `classes_order` (binary models: [other, positive])."""
    import numpy as np

    learned = list(model.classes_)
    coef = model.coef_
    if coef.shape[0] == 1:  # binary: sklearn keeps one row, for classes_[1]
        coef = np.vstack([-coef[0] / 2, coef[0] / 2])
        bias = [-model.intercept_[0] / 2, model.intercept_[0] / 2]
    else:
        bias = list(model.intercept_)
    order = [learned.index(c) for c in classes_order]
    coef = coef[order]
    bias = [float(bias[i]) for i in order]
    weights = {}
    for column in np.nonzero(np.abs(coef).max(axis=0) > 1e-4)[0]:
        weights[str(buckets[column])] = [round(float(v), 5) for v in coef[:, column]]
    return {"classes": list(classes_order), "bias": [round(b, 5) for b in bias], "weights": weights}


def scores(gold: list[str], predicted: list[str], kinds: tuple[str, ...]) -> list[list]:
    rows = []
    for kind in kinds:
        tp = sum(g == kind and p == kind for g, p in zip(gold, predicted))
        fp = sum(g != kind and p == kind for g, p in zip(gold, predicted))
        fn = sum(g == kind and p != kind for g, p in zip(gold, predicted))
        precision = tp / (tp + fp) if tp + fp else float("nan")
        recall = tp / (tp + fn) if tp + fn else float("nan")
        rows.append([kind, tp + fn, tp, fp, fn, f"{precision:.2f}", f"{recall:.2f}"])
    return rows


def held_out(examples: list[dict], c: float, folds: int | None) -> list[str]:
    """Each tune family predicted by a model trained on the other families (and the phrases):
    one family out at a time (folds None), or the families dealt into `folds` groups."""
    predicted = {}
    families = sorted({e["family"] for e in examples if e["family"] != "phrases"})
    groups = [[f] for f in families] if folds is None else [families[i::folds] for i in range(folds)]
    for group in groups:
        train = [e for e in examples if e["family"] not in group]
        test = [e for e in examples if e["family"] in group]
        vectors = Vectors(train)
        model = fit(vectors.matrix, [e["kind"] for e in vectors.kept], c)
        exported = feats.LinearModel(export(model, refusal.KINDS, vectors.buckets))
        for example in test:
            features = features_of(example)
            predicted[example["item"]] = "none" if features is None else exported.best(features)[0]
    return [predicted.get(e["item"], "none") for e in examples]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=("refusal",))
    parser.add_argument("--c", type=float, default=0.5, help="inverse regularisation strength")
    parser.add_argument("--lofo", action="store_true", help="score leave-one-family-out")
    parser.add_argument("--folds", type=int, default=None, metavar="K",
                        help="score with the families dealt into K groups (faster than --lofo)")
    parser.add_argument("--write", action="store_true", help="write nomos_forensics/text/models/refusal.json")
    parser.add_argument("--errors", type=int, default=0, metavar="N",
                        help="with --lofo: print N misses and N false alarms per kind (tune texts only)")
    args = parser.parse_args()
    from tabulate import tabulate

    replies = reply_examples("tune")
    examples = replies + phrase_examples()
    positives = [e for e in replies if e["kind"] != "none"]
    missed = [e for e in positives if features_of(e) is None]
    print(f"{len(replies)} labelled tune replies from {len({e['family'] for e in replies})} families "
          f"({Counter(e['kind'] for e in replies)}), + {len(examples) - len(replies)} example phrases")
    print(f"gate: {len(missed)} of {len(positives)} labelled refusals hold no cue word "
          f"({Counter(e['language'] for e in missed)})")
    if args.lofo or args.folds:
        predicted = held_out(examples, args.c, None if args.lofo else args.folds)
        gold = [e["kind"] for e in examples]
        real = [i for i, e in enumerate(examples) if e["family"] != "phrases"]
        print(f"\n{'leave-one-family-out' if args.lofo else f'families in {args.folds} held-out groups'}, real replies only:")
        print(tabulate(scores([gold[i] for i in real], [predicted[i] for i in real], refusal.KINDS[1:]),
                       ["kind", "labelled", "TP", "FP", "FN", "precision", "recall"], tablefmt="github"))
        if args.errors:
            for kind in refusal.KINDS[1:]:
                for title, wrong in (("missed", lambda i, k=kind: gold[i] == k and predicted[i] != k),
                                     ("false alarm", lambda i, k=kind: predicted[i] == k and gold[i] != k)):
                    shown = [i for i in real if wrong(i)][: args.errors]
                    for i in shown:
                        e = examples[i]
                        flat = " ".join(e["text"].split())
                        print(f"[{kind} {title}: gold {gold[i]}, got {predicted[i]}] {e['item']}\n    {flat[:300]}")
        by_language = defaultdict(list)
        for i in real:
            by_language[examples[i]["language"]].append(i)
        rows = []
        for language, indexes in sorted(by_language.items(), key=lambda kv: -len(kv[1])):
            refusing = [i for i in indexes if gold[i] != "none"]
            if not refusing:
                continue
            caught = sum(predicted[i] != "none" for i in refusing)
            false = sum(predicted[i] != "none" for i in indexes if gold[i] == "none")
            rows.append([language, len(indexes), len(refusing), caught, false])
        print("\nby language (any refusal kind):")
        print(tabulate(rows, ["language", "replies", "refusals", "found", "false alarms"], tablefmt="github"))
    vectors = Vectors(examples)
    kept = vectors.kept
    model = fit(vectors.matrix, [e["kind"] for e in kept], args.c)
    out = {"kind": export(model, refusal.KINDS, vectors.buckets)}
    refusing = [e for e in kept if e["kind"] != "none"]
    if sum(e["partial"] for e in refusing) >= 10:
        partial_vectors = Vectors(refusing)
        partial = fit(partial_vectors.matrix, ["partial" if e["partial"] else "whole" for e in partial_vectors.kept], args.c)
        out["partial"] = export(partial, ("whole", "partial"), partial_vectors.buckets)
    out["kind"]["meta"] = {"trained_on": len(kept), "families": sorted({e["family"] for e in kept}), "c": args.c}
    print(f"\nmodel: {len(out['kind']['weights'])} weighted features"
          + (f", partial model: {len(out['partial']['weights'])}" if "partial" in out else ""))
    if args.write:
        MODELS.mkdir(exist_ok=True)
        (MODELS / "refusal.json").write_text(json.dumps(out, separators=(",", ":")), encoding="utf-8")
        print(f"wrote {MODELS / 'refusal.json'} ({(MODELS / 'refusal.json').stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
