"""The unexplained-failure groups of a scan: exact counts and a bottom-k sample per signature
(unexplained.py reads the signature), mergeable exactly across `--jobs` and shards."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..unexplained import EXAMPLES, FAILURE_OUTCOMES, MIN_GROUP, QUOTED, SAMPLE, Signature, mask, rule_skeleton


def _rank(session_id: str) -> str:
    return hashlib.sha1(session_id.encode("utf-8")).hexdigest()


@dataclass
class Group:
    """Exact counts and a bottom-k sample of one signature's sessions."""

    sessions: int = 0
    outcomes: Counter = field(default_factory=Counter)
    models: Counter = field(default_factory=Counter)
    sample: list = field(default_factory=list)  # [rank, example], sorted by rank, at most SAMPLE

    def add_example(self, rank: str, example: dict[str, Any]) -> None:
        sample = self.sample
        if len(sample) >= SAMPLE and rank >= sample[-1][0]:
            return
        if any(r == rank for r, _ in sample):
            return
        sample.append([rank, example])
        sample.sort(key=lambda item: item[0])
        del sample[SAMPLE:]


class Unexplained:
    """The unexplained failures of a scan, grouped: Summary.add feeds it every card."""

    def __init__(self) -> None:
        self.failures = 0  # sessions whose outcome is failed, partial or unknown
        self.explained = 0  # of them, with a finding of severity friction or above
        self.left_out: Counter = Counter()  # LEFT_OUT reason -> sessions
        self.groups: dict[str, Group] = {}  # Signature.key -> group
        self.names: dict[str, str] = {}  # config `[unexplained.names]`: shown, not state
        self.muted: frozenset[str] = frozenset()  # config `[unexplained] mute`

    def show(self, names: dict[str, str], muted) -> None:
        """Name and mute groups as the config says (what to_json prints, not what it counts)."""
        self.names, self.muted = dict(names), frozenset(muted)

    def add(self, card) -> None:
        if card.outcome not in FAILURE_OUTCOMES:
            return
        self.failures += 1
        reading = card.unexplained
        if reading is None:
            self.explained += 1
        elif isinstance(reading, str):
            self.left_out[reading] += 1
        else:
            group = self.groups.setdefault(reading.signature.key, Group())
            group.sessions += 1
            group.outcomes[card.outcome] += 1
            group.models[card.session.info.model or "(unknown)"] += 1
            group.add_example(_rank(card.session.info.id), reading.example)

    @property
    def sessions(self) -> int:
        return sum(g.sessions for g in self.groups.values())

    def merge(self, other: "Unexplained") -> None:
        self.failures += other.failures
        self.explained += other.explained
        self.left_out.update(other.left_out)
        for key, theirs in other.groups.items():
            mine = self.groups.setdefault(key, Group())
            mine.sessions += theirs.sessions
            mine.outcomes.update(theirs.outcomes)
            mine.models.update(theirs.models)
            for rank, example in theirs.sample:
                mine.add_example(rank, example)

    def to_state(self) -> dict[str, Any]:
        return {
            "failures": self.failures, "explained": self.explained, "left_out": dict(sorted(self.left_out.items())),
            "groups": {key: {"sessions": g.sessions, "outcomes": dict(sorted(g.outcomes.items())),
                             "models": dict(sorted(g.models.items())), "sample": g.sample}
                       for key, g in sorted(self.groups.items())},
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> "Unexplained":
        """What to_state() wrote; raises KeyError, TypeError or ValueError on anything else."""
        self = cls()
        self.failures, self.explained = int(state["failures"]), int(state["explained"])
        self.left_out.update({str(k): int(v) for k, v in state["left_out"].items()})
        for key, g in state["groups"].items():
            sample = g["sample"]
            if not isinstance(sample, list) or len(sample) > SAMPLE or not all(
                    isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                    and isinstance(item[1], dict) for item in sample):
                raise TypeError("a group's sample is not of the shape scan writes")
            group = Group(int(g["sessions"]), Counter({str(k): int(v) for k, v in g["outcomes"].items()}),
                          Counter({str(k): int(v) for k, v in g["models"].items()}))
            for rank, example in sample:
                group.add_example(rank, example)
            self.groups[str(key)] = group
        return self

    def ranked(self) -> list[tuple[Signature, Group]]:
        """Largest group first, ties by signature: the same list whatever the order of the cards."""
        return [(Signature.from_key(key), group)
                for key, group in sorted(self.groups.items(), key=lambda kv: (-kv[1].sessions, kv[0]))]

    def to_json(self, top: int = 20) -> dict[str, Any]:
        """The schema's `unexplained` object: counts, then the groups, largest first; muted
        groups are counted, not listed."""
        names, muted = self.names, self.muted
        listed, muted_sessions, grouped = [], 0, 0
        for signature, group in self.ranked():
            if signature.id in muted:
                muted_sessions += group.sessions
                continue
            if group.sessions >= MIN_GROUP:
                grouped += group.sessions
            if len(listed) < top and group.sessions >= MIN_GROUP:
                listed.append(group_json(signature, group, self.failures, names.get(signature.id)))
        unexplained = self.sessions
        return {
            "failures": self.failures,
            "explained": self.explained,
            "unexplained": unexplained,
            "muted": muted_sessions,
            "left_out": dict(sorted(self.left_out.items())),
            "grouped": grouped,
            "grouped_share": round(grouped / (unexplained - muted_sessions), 4) if unexplained > muted_sessions
            else 0.0,
            "signatures": len(self.groups),
            "groups": listed,
        }


def group_json(signature: Signature, group: Group, failures: int, name: str | None) -> dict[str, Any]:
    examples = [example for _, example in group.sample]
    topics = Counter(word for example in examples for word in example.get("topic") or ())
    cue = (common_phrase([" ".join(QUOTED.findall(example.get("reason") or "")) for example in examples])
           or common_phrase([(example.get("final") or {}).get("quote") or "" for example in examples]))
    description = signature.describe() + (f'; the last replies say "… {cue} …"' if cue else "")
    return {
        "id": signature.id,
        "name": name,
        "sessions": group.sessions,
        "share_of_failures": round(group.sessions / failures, 4) if failures else 0.0,
        "description": description,
        "cue": cue,
        "signature": {"ending": signature.ending, "reply": signature.shape, "chat": signature.chat,
                      "tool": signature.tool, "error": signature.error},
        "outcomes": dict(sorted(group.outcomes.items(), key=lambda kv: (-kv[1], kv[0]))),
        "models": dict(sorted(group.models.items(), key=lambda kv: (-kv[1], kv[0]))[:5]),
        "topic_words": [word for word, n in sorted(topics.items(), key=lambda kv: (-kv[1], kv[0])) if n > 1][:6],
        "examples": examples[:EXAMPLES],
        "rule_skeleton": rule_skeleton(signature, name),
    }


def common_phrase(quotes: list[str], longest: int = 6) -> str | None:
    """The longest run of words (masked, two to `longest`) that at least half of the sample's
    last replies hold, and at least two of them; None when they share none."""
    texts = [mask(quote).split() for quote in quotes if quote.strip()]
    if len(texts) < 2:
        return None
    need = max(2, (len(texts) + 1) // 2)
    for length in range(longest, 1, -1):
        counts: Counter = Counter()
        for words in texts:
            counts.update({" ".join(words[i:i + length]) for i in range(len(words) - length + 1)})
        shared = [(n, phrase) for phrase, n in counts.items() if n >= need and not phrase.startswith("<")]
        if shared:
            return max(shared, key=lambda item: (item[0], -len(item[1]), item[1]))[1]
    return None


def merged_groups(mine: Unexplained | None, theirs: Unexplained | None) -> Unexplained | None:
    """`mine` with `theirs` folded in; None when either part did not group (older shards)."""
    if mine is None or theirs is None:
        return None
    mine.merge(theirs)
    return mine


def groups_from_state(state: dict[str, Any] | None) -> Unexplained | None:
    """Unexplained.from_state, or None for a shard written before groups were kept."""
    return None if state is None else Unexplained.from_state(state)
