"""Series of signature rates: sessions, messages and per-signature session counts per bucket
(day, week, month, model, or combinations such as week,model), built from session facts in
constant memory per bucket, mergeable across scan partitions, as table rows, JSON, JSONL or CSV."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from .card import Card
from .facts import UNKNOWN, SessionFacts
from .render import neutralise

BUCKETS = ("day", "week", "month", "model")
SCHEMA_VERSION = 1
SESSIONS, MESSAGES, ERRORED = "#sessions", "#messages", "#errored"  # rule names are kebab-case
TOTALS = (SESSIONS, MESSAGES, ERRORED)
GROUP = "#group:"  # + an unexplained-failure group's key: counted when the series asks (`groups`)


def parse_by(value: str) -> tuple[str, ...]:
    """`week,model` -> ("week", "model"); ValueError naming what is wrong."""
    parts = tuple(p.strip().lower() for p in value.split(",") if p.strip())
    if not parts:
        raise ValueError("give at least one of " + ", ".join(BUCKETS))
    unknown = [p for p in parts if p not in BUCKETS]
    if unknown:
        raise ValueError(f"unknown bucket {unknown[0]!r} (choose from {', '.join(BUCKETS)}, or a comma list)")
    if len(set(parts)) != len(parts):
        raise ValueError(f"{value!r} names a bucket twice")
    if sum(p in ("day", "week", "month") for p in parts) > 1:
        raise ValueError(f"{value!r}: give one of day, week, month")
    return parts


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(timezone.utc) if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def bucket_label(kind: str, facts: SessionFacts) -> str:
    if kind == "model":
        return facts.model
    if facts.created_at is None:
        return UNKNOWN
    moment = _utc(facts.created_at)
    if kind == "day":
        return moment.strftime("%Y-%m-%d")
    if kind == "month":
        return moment.strftime("%Y-%m")
    year, week, _ = moment.isocalendar()
    return f"{year}-W{week:02d}"


@dataclass(frozen=True)
class TimeBuckets:
    """The bucketing of `scan --by`: one label per dimension."""

    by: tuple[str, ...]

    @property
    def dimensions(self) -> tuple[str, ...]:
        return self.by

    def key(self, facts: SessionFacts) -> tuple[str, ...] | None:
        return tuple(bucket_label(kind, facts) for kind in self.by)


@dataclass
class Series:
    """Counts per bucket key: sessions, messages, rule errors (keys no rule name can take) and
    one entry per fired rule.

    `bucketer` maps a session's facts to a key (a tuple, one label per dimension), or None for
    a session that belongs to no bucket. `rules` are the rule names every bucket reports,
    zero counts included (set from the rule selection)."""

    bucketer: Any  # TimeBuckets, or compare.Periods
    rules: list[str] = field(default_factory=list)
    counts: dict[tuple[str, ...], Counter] = field(default_factory=dict)
    groups: bool = False  # count the unexplained-failure groups too (compare)

    def empty(self) -> "Series":
        return Series(self.bucketer, list(self.rules), groups=self.groups)

    def add(self, card: Card) -> None:
        self.add_facts(SessionFacts.of(card))

    def add_facts(self, facts: SessionFacts) -> None:
        key = self.bucketer.key(facts)
        if key is None:
            return
        counts = self.counts.get(key)
        if counts is None:
            counts = self.counts[key] = Counter()
        counts[SESSIONS] += 1
        counts[MESSAGES] += facts.messages
        if facts.errored:
            counts[ERRORED] += 1
        counts.update(facts.fired)
        if self.groups and facts.group is not None:
            counts[GROUP + facts.group] += 1

    def merge(self, other: "Series") -> None:
        for key, counts in other.counts.items():
            self.counts.setdefault(key, Counter()).update(counts)

    @property
    def reported_rules(self) -> list[str]:
        """The selected rules, then any other rule that fired (a plugin's), by name."""
        fired = {r for c in self.counts.values() for r in c if r not in TOTALS and not r.startswith(GROUP)}
        return list(self.rules) + sorted(fired - set(self.rules))

    @property
    def reported_groups(self) -> list[str]:
        """The unexplained-failure groups counted (their keys, GROUP-prefixed), by key."""
        return sorted({r for c in self.counts.values() for r in c if r.startswith(GROUP)})

    def keys(self) -> list[tuple[str, ...]]:
        return sorted(self.counts, key=lambda k: tuple((label == UNKNOWN, label) for label in k))

    # ------------------------------------------------------------------ output
    def buckets_json(self) -> Iterable[dict[str, Any]]:
        rules = self.reported_rules
        dims = self.bucketer.dimensions
        for key in self.keys():
            counts = self.counts[key]
            n = counts[SESSIONS]
            yield {
                "bucket": dict(zip(dims, key)),
                "sessions": n,
                "messages": counts[MESSAGES],
                "rule_errors": counts[ERRORED],
                "signatures": {
                    rule: {"sessions": counts[rule], "rate": round(counts[rule] / n, 6) if n else 0.0}
                    for rule in rules
                },
            }

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "by": list(self.bucketer.dimensions),
            "rules": self.reported_rules,
            "buckets": list(self.buckets_json()),
        }

    def jsonl_records(self) -> Iterable[dict[str, Any]]:
        for bucket in self.buckets_json():
            yield {"schema_version": SCHEMA_VERSION, **bucket}

    def table(self) -> tuple[list[str], list[list[Any]]]:
        """One row per bucket: its labels, sessions, messages and the signatures that fired."""
        dims = list(self.bucketer.dimensions)
        rows = []
        for bucket in self.buckets_json():
            fired = sorted(((r, s["sessions"], s["rate"]) for r, s in bucket["signatures"].items() if s["sessions"]),
                           key=lambda item: (-item[1], item[0]))
            cells = ", ".join(f"{r} {n} ({100 * rate:.1f}%)" for r, n, rate in fired) or "none"
            rows.append([*bucket["bucket"].values(), bucket["sessions"], bucket["messages"], cells])
        return [*dims, "sessions", "messages", "signatures (sessions, rate)"], rows

    def to_csv(self) -> str:
        """Tidy CSV for charts: one row per bucket and rule, zero counts included."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        dims = list(self.bucketer.dimensions)
        writer.writerow([*dims, "sessions", "messages", "rule", "rule_sessions", "rate"])
        for bucket in self.buckets_json():
            labels = [_csv_safe(v) for v in bucket["bucket"].values()]
            for rule, entry in bucket["signatures"].items():
                writer.writerow([*labels, bucket["sessions"], bucket["messages"], rule, entry["sessions"],
                                 f"{entry['rate']:.6f}"])
        return out.getvalue()


def _csv_safe(text: str) -> str:
    # a model name from the database must not become a formula in a spreadsheet (a leading tab
    # or carriage return is dropped by spreadsheets before they read one), nor drive a terminal
    text = neutralise(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
