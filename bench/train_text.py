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
import re
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
# the example phrases' lists, as refusal kinds: (file, list) -> kind
PHRASE_KINDS = {("cant-run", "fire"): "cant-run", ("cant-run", "quiet"): "none",
                ("no-web-tool", "fire"): "no-web-tool", ("no-web-tool", "quiet"): "none",
                ("policy-refusal", "fire"): "policy", ("policy-refusal", "by_rule"): "business-rule",
                ("policy-refusal", "quiet"): "none",
                # the known misses are examples like the rest (tests/test_runbook_rules.py checks they are still missed)
                ("cant-run", "xfail_fire"): "cant-run", ("cant-run", "xfail_quiet"): "none",
                ("no-web-tool", "xfail_fire"): "no-web-tool", ("no-web-tool", "xfail_quiet"): "none"}


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
    for (name, side), value in PHRASE_KINDS.items():
        lists = yaml.safe_load((PHRASES / f"{name}.yaml").read_text(encoding="utf-8")).get(side) or []
        by_language = lists if isinstance(lists, dict) else {"en": lists}
        for language, phrases in by_language.items():
            for n, phrase in enumerate(phrases):
                text = phrase[1] if isinstance(phrase, list) else phrase  # [user, reply] pairs: the reply
                out.append({"item": f"phrases:{name}:{side}:{language}:{n}", "family": "phrases", "language": language,
                            "text": text, "kind": value, "partial": False})
    return out


_READ: dict[str, dict[str, list[int]] | None] = {}


def features_of(example: dict, part: str = "features") -> list[int] | None:
    """The hashed features one of the models reads of an example (`part`: features for the
    detector, grounds for the kind model, partial for the partial model; None: not read)."""
    if example["item"] not in _READ:
        reading = refusal.read(example["text"])
        abstract = [f for f in reading.features if not f.startswith(("w|", "b|", "p|"))] if reading else []
        _READ[example["item"]] = None if reading is None else {
            "features": feats.hashed(reading.features),
            "abstract": feats.hashed(abstract),
            "grounds": feats.hashed(reading.grounds),
            "partial": feats.hashed(reading.shape + reading.grounds),
        }
    read = _READ[example["item"]]
    return None if read is None else read[part]


class Vectors:
    """Examples as a sparse matrix over the feature buckets they use (compact columns: fitting
    is over tens of thousands of columns, not the 262,144 buckets)."""

    def __init__(self, examples: list[dict], part: str = "features", abstract: bool = False) -> None:
        from scipy.sparse import csr_matrix

        rows, cols, self.kept = [], [], []
        self.column: dict[int, int] = {}
        views = (part, "abstract") if abstract else (part,)
        for example in examples:
            for view in views:
                features = features_of(example, view)
                if features is None:
                    break
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
    for column in np.nonzero(np.abs(coef).max(axis=0) >= PRUNE)[0]:
        weights[int(buckets[column])] = [round(float(v), 5) for v in coef[:, column]]
    return feats.LinearModel.columns(classes_order, [round(b, 5) for b in bias], weights)


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


def train(examples: list[dict], c: float) -> dict:
    """The learned models of text.refusal, as the JSON it loads: `detect` (none / refusal) over
    words and cues, `partial` over the reply's shape and grounds (the kind is read from the
    grounds by a fixed priority: text.refusal.kind_of)."""
    # each example twice: as read, and with its cue tables and shape only (no words), so that the
    # detector learns to decide from what holds in any language, not only from English words
    vectors = Vectors(examples, abstract=True)
    detect = fit(vectors.matrix, ["none" if e["kind"] == "none" else "refusal" for e in vectors.kept], c)
    out = {"detect": export(detect, ("none", "refusal"), vectors.buckets)}
    refusing = [e for e in examples if e["kind"] != "none" and not e.get("weak") and features_of(e) is not None]
    if sum(e["partial"] for e in refusing) >= 10:
        shape = Vectors(refusing, "partial")
        partial = fit(shape.matrix, ["partial" if e["partial"] else "whole" for e in shape.kept], c)
        out["partial"] = export(partial, ("whole", "partial"), shape.buckets)
    return out


THRESHOLD = 0.0  # the detector's margin above which a reply declines (--threshold)
PRUNE = 0.005  # weights smaller than this are not shipped (--prune): a smaller file, the same decisions
MARGINS: dict[str, float] = {}  # held-out detector margins, refusal over none, by item


def predict(models: dict[str, feats.LinearModel], example: dict) -> str:
    features = features_of(example)
    if features is None:
        MARGINS[example["item"]] = float("-inf")
        return "none"
    scores = models["detect"].scores(features)
    margin = scores[models["detect"].classes.index("refusal")] - scores[models["detect"].classes.index("none")]
    MARGINS[example["item"]] = margin
    reading = refusal.read(example["text"])
    if margin <= THRESHOLD and refusal.plain_decline(reading) is None:
        return "none"  # as text.refusal decides: the detector, or a plain decline whatever it scores
    if refusal.reports_only(reading):
        return "none"
    return refusal.kind_of(reading.kind_grounds)


def held_out(examples: list[dict], c: float, folds: int | None) -> list[str]:
    """Each tune family predicted by models trained on the other families (and the phrases):
    one family out at a time (folds None), or the families dealt into `folds` groups."""
    predicted = {}
    families = sorted({e["family"] for e in examples if e["family"] not in ("phrases", "quotes")})
    groups = [[f] for f in families] if folds is None else [families[i::folds] for i in range(folds)]
    for group in groups:
        trained = {k: feats.LinearModel(v) for k, v in
                   train([e for e in examples if e["family"] not in group], c).items()}
        for example in examples:
            if example["family"] in group:
                predicted[example["item"]] = predict(trained, example)
    return [predicted.get(e["item"], "none") for e in examples]


# the labels some tune families ship, read as refusal or not where they agree with the guide's
# labels on the items labelled both ways (bench/realcorpus/README.md, "Weak labels"): None skips
WEAK = {
    "chatgpt-refusals": lambda e: {"rejected": "policy", "redirected": "policy", "complied": "none"}.get(e.get("tone")),
    "jbb-artifacts": lambda e: {True: "none", False: "policy"}.get(e.get("jailbroken")),
    "saferlhf-mini": lambda e: "none" if e.get("label") == 1 else None,
    "square-ood": lambda e: "none",
}


def weak_examples(split: str = "tune") -> list[dict]:
    """The tune families' replies nobody labelled to the guide, with the label their source
    ships read through WEAK (for the detector only: it says refusal or not, never the kind)."""
    families = {s["name"]: text_corpus.family_of(s) for s in text_corpus.sources()}
    sides = text_corpus.load_split()["families"]
    labelled = {i["item"] for i in text_corpus.items("replies")}
    out = []
    for record in real_corpus.iter_records(real_corpus.find_data_dir()):
        source = record["provenance"]["source"]
        if source not in WEAK or sides[families[source]]["split"] != split:
            continue
        for position, message in enumerate(record["messages"]):
            item = f"{record['key']}#{position}"
            value = WEAK[source](message["external"]) if message.get("external") else None
            if value is None or item in labelled or message["role"] != "assistant":
                continue
            out.append({"item": item, "family": families[source], "language": "xx", "text": text_corpus.text_of(message),
                        "kind": value, "partial": False, "weak": True})
    return out


def quote_examples() -> list[dict]:
    """The replies the 582-session corpus's labels quote as cant-run or no-web-tool (its labels
    are per session, each quoting the sentence: the reply holding it is an example of that kind)."""
    out = []
    quoted: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for path in sorted((HERE / "realcorpus" / "labels").glob("*.yaml")):
        if path.name == "raw_counts.yaml":
            continue
        for key, label in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).items():
            for kind in ("cant-run", "no-web-tool"):
                reason = ((label or {}).get("flags") or {}).get(kind)
                found = re.findall(r'"([^"]{12,})"', reason or "")
                quoted[key].extend((kind, q) for q in found)
    data = real_corpus.find_data_dir()
    for record in real_corpus.iter_records(data):
        for kind, quote in quoted.get(record["key"], ()):
            head = " ".join(quote.split())[:60].lower()
            for position, message in enumerate(record["messages"]):
                text = text_corpus.text_of(message)
                if message["role"] == "assistant" and head and head in " ".join(text.split()).lower():
                    out.append({"item": f"{record['key']}#{position}", "family": "quotes", "language": "xx",
                                "text": text, "kind": kind, "partial": False})
                    break
    return list({e["item"]: e for e in out}.values())


SAMPLE = HERE.parent / "tests" / "data" / "refusal-sample.json"


def write_sample(out: dict) -> None:
    """The decisions the written models make on the project's own phrases (tests/phrases), which
    tests/test_refusal_kinds.py checks the shipped file still makes: the kind, the detector's
    margin, and the share decided as the phrase lists expect."""
    models = {name: feats.LinearModel(value) for name, value in out.items()}
    items = []
    for example in phrase_examples():
        reading = refusal.read(example["text"])
        if reading is None:
            kind, margin = "none", None
        else:
            verdict, margin = models["detect"].best(feats.hashed(reading.features))
            kind = refusal.kind_of(reading.kind_grounds) if verdict == "refusal" else "none"
            margin = round(margin, 3)
        items.append({"text": example["text"], "expected": example["kind"], "kind": kind, "margin": margin})
    right = sum(i["kind"] == i["expected"] for i in items) / len(items)
    SAMPLE.parent.mkdir(exist_ok=True)
    SAMPLE.write_text(json.dumps({"right": right, "items": items}, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"wrote {SAMPLE.relative_to(HERE.parent)}: {len(items)} phrases, {right:.3f} decided as their lists say")


def main() -> int:
    global THRESHOLD, PRUNE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=("refusal",))
    parser.add_argument("--c", type=float, default=0.5, help="inverse regularisation strength")
    parser.add_argument("--lofo", action="store_true", help="score leave-one-family-out")
    parser.add_argument("--folds", type=int, default=None, metavar="K",
                        help="score with the families dealt into K groups (faster than --lofo)")
    parser.add_argument("--write", action="store_true", help="write nomos_forensics/text/models/refusal.json")
    parser.add_argument("--threshold", type=float, default=0.0, help="the detector's margin to call a refusal")
    parser.add_argument("--prune", type=float, default=PRUNE, help="the smallest weight shipped")
    parser.add_argument("--weak", action="store_true", help="add the tune families' own labels (WEAK) to the detector's examples")
    parser.add_argument("--errors", type=int, default=0, metavar="N",
                        help="with --lofo: print N misses and N false alarms per kind (tune texts only)")
    args = parser.parse_args()
    from tabulate import tabulate

    THRESHOLD, PRUNE = args.threshold, args.prune
    replies = reply_examples("tune")
    examples = replies + phrase_examples() + quote_examples() + (weak_examples() if args.weak else [])
    positives = [e for e in replies if e["kind"] != "none"]
    missed = [e for e in positives if features_of(e) is None]
    print(f"{len(replies)} labelled tune replies from {len({e['family'] for e in replies})} families "
          f"({Counter(e['kind'] for e in replies)}), + {len(examples) - len(replies)} example phrases")
    print(f"gate: {len(missed)} of {len(positives)} labelled refusals hold no cue word "
          f"({Counter(e['language'] for e in missed)})")
    if args.lofo or args.folds:
        predicted = held_out(examples, args.c, None if args.lofo else args.folds)
        gold = [e["kind"] for e in examples]
        real = [i for i, e in enumerate(examples) if e["family"] not in ("phrases", "quotes") and not e.get("weak")]
        print(f"\n{'leave-one-family-out' if args.lofo else f'families in {args.folds} held-out groups'}, real replies only:")
        print(tabulate(scores([gold[i] for i in real], [predicted[i] for i in real], refusal.REFUSAL_KINDS),
                       ["kind", "labelled", "TP", "FP", "FN", "precision", "recall"], tablefmt="github"))
        gold_any = [gold[i] != "none" for i in real]
        got_any = [predicted[i] != "none" for i in real]
        tp = sum(g and p for g, p in zip(gold_any, got_any))
        print(f"\ndetection (any kind): {sum(gold_any)} refusals, found {tp}, false alarms {sum(p and not g for g, p in zip(gold_any, got_any))}"
              f" (precision {tp / max(1, sum(got_any)):.2f}, recall {tp / max(1, sum(gold_any)):.2f}); "
              f"kind right on {sum(gold[i] == predicted[i] for i in real if gold[i] != 'none' and predicted[i] != 'none')}"
              f" of {sum(1 for i in real if gold[i] != 'none' and predicted[i] != 'none')} refusals found")
        per_family = defaultdict(lambda: [0, 0, 0, 0])  # refusals, found, false alarms, replies
        for i in real:
            row = per_family[examples[i]["family"]]
            row[0] += gold[i] != "none"
            row[1] += gold[i] != "none" and predicted[i] != "none"
            row[2] += gold[i] == "none" and predicted[i] != "none"
            row[3] += 1
        print(tabulate(sorted(([f, *v] for f, v in per_family.items() if v[0] or v[2]), key=lambda r: -(r[1] + r[3])),
                       ["family", "refusals", "found", "false alarms", "replies"], tablefmt="github"))
        curve = []
        for threshold in (-2, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3):
            found = [MARGINS.get(examples[i]["item"], float("-inf")) > threshold for i in real]
            tp = sum(g and f for g, f in zip(gold_any, found))
            curve.append(f"{threshold:+.1f}: P {tp / max(1, sum(found)):.2f} R {tp / max(1, sum(gold_any)):.2f}")
        print("detection by threshold: " + "; ".join(curve))
        confusion = Counter((gold[i], predicted[i]) for i in real if gold[i] != "none" and predicted[i] != "none")
        print("kind confusion (gold -> got): " + ", ".join(f"{g}->{p} {n}" for (g, p), n in sorted(confusion.items())))
        if args.errors:
            for kind in refusal.REFUSAL_KINDS:
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
    out = train(examples, args.c)
    out["detect"]["meta"] = {"trained_on": sum(1 for e in examples if features_of(e) is not None),
                             "families": sorted({e["family"] for e in examples}), "c": args.c}
    print("\nmodels: " + ", ".join(f"{name} {len(model['buckets'])} weighted features" for name, model in out.items()))
    if args.write:
        MODELS.mkdir(exist_ok=True)
        (MODELS / "refusal.json").write_text(json.dumps(out, separators=(",", ":")), encoding="utf-8")
        write_sample(out)
        print(f"wrote {MODELS / 'refusal.json'} ({(MODELS / 'refusal.json').stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
