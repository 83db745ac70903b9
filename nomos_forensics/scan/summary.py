"""The scan's summary: aggregates over cards in constant memory (counters and top-k lists),
mergeable across partitions with the same result in any order."""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..card import Card
from ..model import Message
from ..sizes.options import DEFAULT_TRUNCATE_AT_KB
from .groups import Unexplained, groups_from_state, merged_groups

TOP_K = 10
TRUNCATE_AT = int(DEFAULT_TRUNCATE_AT_KB * 1024)  # what `sizes` assumes a tool output is cut to


# ------------------------------------------------------------------ the summary
@dataclass
class Summary:
    """Aggregates over cards in constant memory (top-k lists only)."""

    sessions: int = 0
    sessions_with_findings: int = 0
    by_rule: Counter = field(default_factory=Counter)  # rule -> sessions with >= 1 finding
    by_severity: Counter = field(default_factory=Counter)
    outcomes: Counter = field(default_factory=Counter)
    tool_calls: Counter = field(default_factory=Counter)
    tool_sessions: Counter = field(default_factory=Counter)
    fanout: dict[str, dict[str, int]] = field(default_factory=dict)  # tool -> turns, max_calls
    models: dict[str, Counter] = field(default_factory=dict)
    rule_errors: Counter = field(default_factory=Counter)
    # tool -> [outputs over TRUNCATE_AT, bytes cutting them there saves]: the report's panel,
    # kept here so that shard files carry it (None: shards of an older version did not record it)
    truncation: dict[str, list[int]] | None = field(default_factory=dict)
    _worst: list = field(default_factory=list)
    _biggest: list = field(default_factory=list)
    series: Any = None  # a trends.Series fed every card too (scan --by, compare), or None
    unexplained: Unexplained | None = field(default_factory=Unexplained)  # None: older shards did not group

    def add(self, card: Card) -> None:
        if self.series is not None:
            self.series.add(card)
        self.sessions += 1
        rules = sorted({f.rule for f in card.findings})
        if rules:
            self.sessions_with_findings += 1
        self.by_rule.update(rules)
        self.by_severity[card.severity.label] += 1
        self.outcomes[card.outcome] += 1
        if self.unexplained is not None:
            self.unexplained.add(card)
        model = card.session.info.model or "(unknown)"
        counts = self.models.setdefault(model, Counter())
        counts["sessions"] += 1
        counts.update(rules)
        self.tool_calls.update(card.session.tool_counts)
        self.tool_sessions.update(card.session.tool_counts.keys())
        for error in card.errors:
            self.rule_errors[error.rule] += 1
        for finding in card.findings:
            if finding.rule == "tool-fanout" and finding.data.get("tool"):
                entry = self.fanout.setdefault(finding.data["tool"], {"turns": 0, "max_calls": 0})
                entry["turns"] += 1
                entry["max_calls"] = max(entry["max_calls"], int(finding.data.get("count", 0)))
        if card.findings:
            key = (int(card.severity), len(card.findings), card.session.id)
            item = (key, {
                "id": card.session.id, "title": card.session.info.title, "severity": card.severity.label,
                "outcome": card.outcome, "findings": rules,
            })
            self._push(self._worst, item)
        biggest = self._biggest
        floor = biggest[0][0][0] if len(biggest) >= TOP_K else 0  # a smaller size can never enter the list
        truncation = self.truncation
        for message in card.session.messages:  # once per message: the common case inline
            size = message.disk_bytes or 0
            logical = message.logical_bytes
            if truncation is not None and (logical or size) > TRUNCATE_AT and (
                    message.role == "tool" or message.tool_results):
                entry = truncation.setdefault(message.tool_name or "(unnamed)", [0, 0])
                entry[0] += 1
                entry[1] += (logical or size) - TRUNCATE_AT
            if logical and logical > size:
                size = logical
            # the whole key, ties included, as _push and merge compare it: any --jobs, same list
            if size and size >= floor and (len(biggest) < TOP_K or (size, message.id) > biggest[0][0]):
                self._consider_message(card, message, size)
                floor = biggest[0][0][0] if len(biggest) >= TOP_K else 0

    def derived_state(self) -> dict[str, Any]:
        """The part of to_state() that count_card_json() recounts from card lines."""
        state = self.to_state()
        return {key: state[key] for key in DERIVED}

    def _consider_message(self, card: Card, message: Message, size: int) -> None:
        item = ((size, message.id), {
            "message_id": message.id, "session": card.session.id[:8], "role": message.role,
            "tool": message.tool_name or (message.tool_calls[0].display_name if message.tool_calls else None),
            "logical_bytes": message.logical_bytes, "disk_bytes": message.disk_bytes,
        })
        self._push(self._biggest, item)

    def merge(self, other: "Summary") -> None:
        """Fold another partition's summary into this one (scan --jobs)."""
        if self.series is not None and other.series is not None:
            self.series.merge(other.series)
        self.sessions += other.sessions
        self.sessions_with_findings += other.sessions_with_findings
        for mine, theirs in ((self.by_rule, other.by_rule), (self.by_severity, other.by_severity),
                             (self.outcomes, other.outcomes), (self.tool_calls, other.tool_calls),
                             (self.tool_sessions, other.tool_sessions), (self.rule_errors, other.rule_errors)):
            mine.update(theirs)
        for tool, entry in other.fanout.items():
            current = self.fanout.setdefault(tool, {"turns": 0, "max_calls": 0})
            current["turns"] += entry["turns"]
            current["max_calls"] = max(current["max_calls"], entry["max_calls"])
        for model, counts in other.models.items():
            self.models.setdefault(model, Counter()).update(counts)
        if self.truncation is not None and other.truncation is not None:
            for tool, (cut, saved) in other.truncation.items():
                entry = self.truncation.setdefault(tool, [0, 0])
                entry[0] += cut
                entry[1] += saved
        else:
            self.truncation = None  # not known for every part: not known
        self.unexplained = merged_groups(self.unexplained, other.unexplained)
        for item in other._worst:
            self._push(self._worst, item)
        for item in other._biggest:
            self._push(self._biggest, item)

    def to_state(self) -> dict[str, Any]:
        """Everything merge() reads, as plain JSON (scan --shard writes it, `merge` reads it back):
        exact counts and the top-k candidates with their ordering keys."""
        return {  # sorted: the same state for the same cards, whatever --jobs added them in
            "sessions": self.sessions, "sessions_with_findings": self.sessions_with_findings,
            **{name: dict(sorted(getattr(self, name).items())) for name in _COUNTERS},
            "fanout": dict(sorted(self.fanout.items())),
            "truncation": None if self.truncation is None else dict(sorted(self.truncation.items())),
            "models": {model: dict(sorted(counts.items())) for model, counts in sorted(self.models.items())},
            "worst": [[list(key), item] for key, item in sorted(self._worst, key=lambda x: x[0], reverse=True)],
            "biggest": [[list(key), item] for key, item in sorted(self._biggest, key=lambda x: x[0], reverse=True)],
            "unexplained": None if self.unexplained is None else self.unexplained.to_state(),
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> "Summary":
        """The summary to_state() wrote; raises KeyError, TypeError or ValueError on anything else."""
        summary = cls(sessions=int(state["sessions"]), sessions_with_findings=int(state["sessions_with_findings"]))
        for name in _COUNTERS:
            getattr(summary, name).update({str(k): int(v) for k, v in state[name].items()})
        summary.fanout = {str(tool): {"turns": int(e["turns"]), "max_calls": int(e["max_calls"])}
                          for tool, e in state["fanout"].items()}
        summary.models = {str(model): Counter({str(k): int(v) for k, v in counts.items()})
                          for model, counts in state["models"].items()}
        truncation = state.get("truncation")  # absent from the shards of earlier versions
        summary.truncation = None if truncation is None else {
            str(tool): [int(cut), int(saved)] for tool, (cut, saved) in truncation.items()}
        summary.unexplained = groups_from_state(state.get("unexplained"))  # None in older shards
        for heap, items, shape in ((summary._worst, state["worst"], _WORST), (summary._biggest, state["biggest"], _BIGGEST)):
            for key, item in items:
                if not isinstance(item, dict) or not _has_shape(key, item, shape):
                    raise TypeError("a top-k entry is not of the shape scan writes")
                cls._push(heap, (tuple(key), item))
        return summary

    @staticmethod
    def _push(heap: list, item) -> None:
        if len(heap) < TOP_K:
            heapq.heappush(heap, item)
        elif item[0] > heap[0][0]:
            heapq.heapreplace(heap, item)

    @property
    def worst(self) -> list[dict[str, Any]]:
        return [item for _, item in sorted(self._worst, key=lambda x: x[0], reverse=True)]

    @property
    def biggest(self) -> list[dict[str, Any]]:
        return [item for _, item in sorted(self._biggest, key=lambda x: x[0], reverse=True)]

    def share(self, n: int, of: int | None = None) -> float:
        total = self.sessions if of is None else of
        return round(n / total, 4) if total else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "sessions_with_findings": self.sessions_with_findings,
            "signatures": [
                {"rule": rule, "sessions": n, "share": self.share(n)}
                for rule, n in ranked(self.by_rule)
            ],
            "severity": dict(ranked(self.by_severity)),
            "outcomes": dict(ranked(self.outcomes)),
            "worst_sessions": self.worst,
            "tools": [
                {"name": name, "calls": n, "sessions": self.tool_sessions[name]}
                for name, n in ranked(self.tool_calls)
            ],
            "fanout_offenders": [
                {"tool": tool, **entry} for tool, entry in sorted(self.fanout.items(), key=lambda kv: (-kv[1]["turns"], kv[0]))
            ],
            "models": [
                {
                    "model": model,
                    "sessions": counts["sessions"],
                    "signatures": {
                        rule: {"sessions": counts[rule], "rate": self.share(counts[rule], counts["sessions"])}
                        for rule, _ in ranked(self.by_rule) if counts[rule]
                    },
                }
                for model, counts in sorted(self.models.items(), key=lambda kv: (-kv[1]["sessions"], kv[0]))
            ],
            "biggest_messages": self.biggest,
            "rule_errors": dict(ranked(self.rule_errors)),
            "unexplained": None if self.unexplained is None else self.unexplained.to_json(),
        }


_COUNTERS = ("by_rule", "by_severity", "outcomes", "tool_calls", "tool_sessions", "rule_errors")
# what a card line carries, so `merge` recounts it rather than trusting a trailer
DERIVED = ("sessions", "sessions_with_findings", "by_rule", "by_severity", "outcomes", "rule_errors", "models",
           "fanout", "worst")
SEVERITY_RANK = {"none": 0, "cosmetic": 1, "friction": 2, "blocker": 3}

# the top-k entries' keys (types in order) and fields (name -> accepted types)
_OPT_INT, _OPT_STR = (int, type(None)), (str, type(None))
_WORST = ((int, int, str), {"id": (str,), "title": _OPT_STR, "severity": (str,), "outcome": (str,), "findings": (list,)})
_BIGGEST = ((int, int), {"message_id": (int,), "session": (str,), "role": _OPT_STR, "tool": _OPT_STR,
                         "logical_bytes": _OPT_INT, "disk_bytes": _OPT_INT})


def _has_shape(key: Any, item: dict[str, Any], shape: tuple) -> bool:
    types, fields = shape
    return (isinstance(key, list) and len(key) == len(types)
            and all(isinstance(k, t) and not isinstance(k, bool) for k, t in zip(key, types))
            and set(item) == set(fields) and all(isinstance(item[name], ok) for name, ok in fields.items()))


def ranked(counts: Counter) -> list[tuple[str, int]]:
    """Most common first, ties by name: the same summary whatever order cards were added in."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def count_card_json(summary: Summary, card: dict[str, Any]) -> None:
    """What Summary.add counts that a card line carries (a shard's line, decoded): every counter
    but the tools' and the messages' sizes, which the card does not hold. `merge` recounts a
    shard's trailer with it (docs/scale-out.md); raises KeyError, TypeError
    or ValueError on a line that is not a card."""
    summary.sessions += 1
    findings = card["findings"]
    rules = sorted({str(f["rule"]) for f in findings})
    if rules:
        summary.sessions_with_findings += 1
    summary.by_rule.update(rules)
    summary.by_severity[str(card["severity"])] += 1
    summary.outcomes[str(card["outcome"])] += 1
    session = card["session"]
    counts = summary.models.setdefault(session.get("model") or "(unknown)", Counter())
    counts["sessions"] += 1
    counts.update(rules)
    for error in card["errors"]:
        summary.rule_errors[str(error["rule"])] += 1
    for finding in findings:
        data = finding.get("data") or {}
        if finding["rule"] == "tool-fanout" and data.get("tool"):
            entry = summary.fanout.setdefault(data["tool"], {"turns": 0, "max_calls": 0})
            entry["turns"] += 1
            entry["max_calls"] = max(entry["max_calls"], int(data.get("count", 0)))
    if findings:
        key = (SEVERITY_RANK[card["severity"]], len(findings), str(session["id"]))
        Summary._push(summary._worst, (key, {"id": session["id"], "title": session.get("title"),
                                       "severity": card["severity"], "outcome": card["outcome"],
                                       "findings": rules}))
