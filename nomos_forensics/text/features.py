"""Features of a text for the learned models of `text/` (refusal, frustration): hashed words,
word pairs, word prefixes and character pairs of scripts written without spaces, cue words by
table, and what surrounds them. One function serves training (bench/train_text.py) and
inference, so the two never drift apart. Pure Python: crc32 (C) hashes each feature.

A message is read in bounded windows (its opening and its closing), whatever its length.
"""

from __future__ import annotations

import operator
import re
import zlib
from collections.abc import Iterable, Mapping

BUCKETS = 1 << 18  # hashed feature space; the shipped weights hold only the features training saw
OPENING, CLOSING = 1500, 700  # characters of prose read at the start and at the end

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
# scripts written without spaces between words (kana, CJK ideographs) read as character pairs;
# Hangul is spaced, but its words carry endings: pairs too
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def window(prose: str) -> str:
    """The part of a message's prose that is read: all of it when short, else its opening and
    its closing (a decline is said at the start or at the end)."""
    if len(prose) <= OPENING + CLOSING:
        return prose
    return prose[:OPENING] + "\n" + prose[-CLOSING:]


def tokens(text: str) -> list[str]:
    """Lower-case words; a run of an unspaced script becomes its character pairs."""
    if not _UNSPACED.search(text):  # nearly every text: its words as they are
        return _WORD.findall(text.lower())
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        if _UNSPACED.search(word):
            if len(word) == 1:
                out.append(word)
            else:
                out.extend(word[i:i + 2] for i in range(len(word) - 1))
        else:
            out.append(word)
    return out


def hashed(names: Iterable[str]) -> list[int]:
    """The feature buckets of `names`, each once: the models read whether a feature is there,
    not how often (as they were trained), so a long reply's repeated "the" weighs once."""
    mask = BUCKETS - 1
    return sorted({zlib.crc32(name.encode("utf-8", "replace")) & mask for name in names})


def text_features(text: str, prefix: str = "") -> list[str]:
    """Words, word pairs and 5-letter word prefixes of `text`, named with `prefix`."""
    words = tokens(text)
    names = [f"{prefix}w|{w}" for w in words]
    names.extend(f"{prefix}b|{a} {b}" for a, b in zip(words, words[1:]))
    names.extend(f"{prefix}p|{w[:5]}" for w in words if len(w) > 6 and not _UNSPACED.search(w))
    return names


def bucket(value: int, edges: tuple[int, ...]) -> int:
    """The index of the first edge `value` is under (len(edges) when over all of them)."""
    for index, edge in enumerate(edges):
        if value < edge:
            return index
    return len(edges)


class LinearModel:
    """A linear model over hashed features: per class a bias and a weight per feature bucket
    (the buckets training never saw weigh nothing). Loaded from the JSON bench/train_text.py
    writes: `buckets` lists the weighted buckets and `weights` their weights, flat, one row of
    len(classes) per bucket. Columns parse about twice as fast as a map from bucket to row,
    and the model loads in start-up (`review` of one session)."""

    def __init__(self, data: Mapping) -> None:
        self.classes: tuple[str, ...] = tuple(data["classes"])
        self.bias: tuple[float, ...] = tuple(data["bias"])
        buckets, flat, width = data["buckets"], data["weights"], len(self.classes)
        if len(flat) != width * len(buckets):
            raise ValueError(f"model weights: {len(flat)} values for {len(buckets)} buckets of {width} classes")
        self._buckets: list[int] = buckets
        self._columns: list[list[float]] = [flat[index::width] for index in range(width)]
        self.weights: dict[int, tuple[float, ...]] = dict(zip(buckets, zip(*self._columns)))
        self.meta: dict = dict(data.get("meta", {}))

    @staticmethod
    def columns(classes, bias, weights: Mapping[int, Iterable[float]]) -> dict:
        """The JSON form of a model (what __init__ reads), from a map of bucket to class weights."""
        return {"classes": list(classes), "bias": list(bias), "buckets": [int(b) for b in weights],
                "weights": [w for row in weights.values() for w in row]}

    def scores(self, features: Iterable[int]) -> list[float]:
        total = list(self.bias)
        weights = self.weights
        width = len(total)
        for feature in features:
            row = weights.get(feature)
            if row is not None:
                for index in range(width):
                    total[index] += row[index]
        return total

    def margin(self, features: Iterable[int], positive: str) -> float:
        """A two-class model's score of `positive` minus the other's (`best`'s margin, signed),
        summed in C over one weight per feature: the hot path of a per-message model."""
        diff = self.__dict__.get("_diff")
        if diff is None:
            at = self.classes.index(positive)
            diff = self.__dict__["_diff"] = (
                dict(zip(self._buckets, map(operator.sub, self._columns[at], self._columns[1 - at]))),
                self.bias[at] - self.bias[1 - at])
        weights, bias = diff
        return bias + sum(filter(None, map(weights.get, features)))

    def best(self, features: Iterable[int]) -> tuple[str, float]:
        """The class with the highest score, and its margin over the runner-up."""
        scores = self.scores(features)
        order = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)
        return self.classes[order[0]], scores[order[0]] - scores[order[1]] if len(order) > 1 else scores[order[0]]
