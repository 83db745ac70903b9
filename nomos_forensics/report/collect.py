"""What the report needs beyond the scan's summary, gathered from the same stream of cards in
the same pass (or from the card lines of shard files): sessions and signatures per day,
messages, outcome mix, and the worst sessions, the first `transcripts` of them with their
messages (as the pass read them: no tool output text, which stays on the server). What
truncating tool outputs would save is in the scan's summary, so that shard files carry it.

Memory is bounded: counters per day and rule, and heaps of fixed size. Mergeable across
`--jobs` partitions with the same result in any order (every heap key is total).
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..card import Card
from ..model import Message
from ..rule import Severity
from ..scan import Summary

DEFAULT_TRANSCRIPTS = 200  # sessions whose transcript the report carries
DEFAULT_LISTED = 500  # sessions in the worst-sessions table (with their card)
PER_RULE = 20  # the worst sessions of each signature are listed even when not among the worst
# and the worst session of each day and signature (a row, without its card): a click on any
# point of the rate chart lists at least one session (a week's point, up to seven)
PER_DAY_RULE = 1
TEXT_KEEP = 1500  # characters of a user/assistant message kept in a report's transcript (head and tail)
MAX_MESSAGES = 60  # a longer transcript keeps its first and last EDGE, then CONTEXT around each message
EDGE, CONTEXT = 10, 1  # that carries a finding's evidence, in order, up to MAX_MESSAGES in all


def session_key(card: Card) -> tuple:
    """Worst first: severity, then number of findings, then id (a total order, as merges need)."""
    return (int(card.severity), len(card.findings), card.session.id)


@dataclass
class ReportSummary(Summary):
    """The scan's Summary plus the report's own aggregates (see the module docstring)."""

    transcripts: int = DEFAULT_TRANSCRIPTS
    listed: int = DEFAULT_LISTED
    messages: int = 0
    first: str | None = None  # earliest and latest session creation (ISO)
    last: str | None = None
    days: Counter = field(default_factory=Counter)  # day -> sessions
    day_rules: Counter = field(default_factory=Counter)  # (day, rule) -> sessions
    _listed: list = field(default_factory=list)  # (key, row, card json)
    _per_rule: dict[str, list] = field(default_factory=dict)
    _per_day_rule: dict[tuple[str, str], list] = field(default_factory=dict)  # (day, rule) -> (key, row)
    _transcripts: list = field(default_factory=list)  # (key, messages)

    def add(self, card: Card) -> None:
        super().add(card)
        self._add_report(
            card.session.info.created_at, sorted({f.rule for f in card.findings}), session_key(card),
            len(card.session.messages), lambda: session_row(card), card.to_json, lambda: select_messages(card),
        )

    def add_card_json(self, card: dict[str, Any], line: str) -> None:
        """The report's own aggregates of one card line of a shard file (`card`: `line`
        decoded); the scan's summary comes merged from the shards' trailers. The transcript is
        not in the line: a carried session holds its line until `carry_transcript` gives it the
        messages of its session reviewed again."""
        session = card["session"]
        created = _parse_stamp(session.get("created_at"))
        rules = sorted({f["rule"] for f in card["findings"]})
        key = (int(Severity.parse(card["severity"])), len(card["findings"]), session["id"])
        self._add_report(created, rules, key, int(card["stats"]["messages"]),
                         lambda: row_of_json(card, created), lambda: card, lambda: line)

    def _add_report(self, created, rules: list[str], key: tuple, messages: int, row_of, card_of, selection) -> None:
        """What `add` adds beyond the scan's summary. `row_of()`, `card_of()` and `selection()`
        give the session's table row, its card JSON and its transcript's messages, each called
        only when it is kept."""
        self.messages += messages
        day = None
        if created is not None:
            if created.tzinfo is not None:  # compared and bucketed in UTC
                created = created.astimezone(timezone.utc)
            stamp = created.isoformat()
            self.first = stamp if self.first is None or stamp < self.first else self.first
            self.last = stamp if self.last is None or stamp > self.last else self.last
            day = stamp[:10]
            self.days[day] += 1
        if day is not None:
            self.day_rules.update((day, rule) for rule in rules)
        if not rules:
            return
        wanted = _wants(self._listed, key, self.listed) or any(
            _wants(self._per_rule.get(rule, []), key, PER_RULE) for rule in rules
        )
        row = None
        if wanted:
            row = row_of()
            item = (key, row, card_of())
            _push(self._listed, item, self.listed)
            for rule in rules:
                _push(self._per_rule.setdefault(rule, []), item, PER_RULE)
        if _wants(self._transcripts, key, self.transcripts):  # the messages now, their entries at the end
            _push(self._transcripts, (key, selection()), self.transcripts)
        if day is not None:
            for rule in rules:
                heap = self._per_day_rule.setdefault((day, rule), [])
                if _wants(heap, key, PER_DAY_RULE):
                    row = row or row_of()
                    _push(heap, (key, row), PER_DAY_RULE)

    def pending_transcripts(self) -> list[tuple[str, str]]:
        """(session id, card line) of each carried session whose messages are still to be read
        (a report from shards), in session-id order."""
        return sorted((key[2], held) for key, held in self._transcripts if isinstance(held, str))

    def carry_transcript(self, card: Card) -> None:
        """The messages of a carried session, from its card reviewed again (report from shards)."""
        self._settle_transcript(card.session.id, select_messages(card))

    def leave_out_transcript(self, session_id: str) -> None:
        """A carried session whose messages cannot be the scan's (report from shards): no transcript."""
        self._settle_transcript(session_id, None)

    def _settle_transcript(self, session_id: str, selection) -> None:
        for index, (key, held) in enumerate(self._transcripts):
            if key[2] == session_id and isinstance(held, str):
                self._transcripts[index] = (key, selection)  # same key: the heap stays a heap

    def merge(self, other: Summary) -> None:
        super().merge(other)
        if not isinstance(other, ReportSummary):
            return
        self.messages += other.messages
        for stamp in (other.first, other.last):
            if stamp is not None:
                self.first = stamp if self.first is None or stamp < self.first else self.first
                self.last = stamp if self.last is None or stamp > self.last else self.last
        self.days.update(other.days)
        self.day_rules.update(other.day_rules)
        for item in other._listed:
            _push(self._listed, item, self.listed)
        for rule, items in other._per_rule.items():
            for item in items:
                _push(self._per_rule.setdefault(rule, []), item, PER_RULE)
        for item in other._transcripts:
            _push(self._transcripts, item, self.transcripts)
        for day_rule, items in other._per_day_rule.items():
            for item in items:
                _push(self._per_day_rule.setdefault(day_rule, []), item, PER_DAY_RULE)

    def worst_sessions(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(row, card json) of every listed session, worst first: the overall worst, then any
        signature's worst that are not among them."""
        seen: dict[str, tuple] = {}
        for key, row, card in [*self._listed, *(i for items in self._per_rule.values() for i in items)]:
            seen.setdefault(row["id"], (key, row, card))
        return [(row, card) for _, row, card in sorted(seen.values(), key=lambda x: x[0], reverse=True)]

    def bucket_sessions(self) -> list[dict[str, Any]]:
        """Rows (no card) of each day and signature's worst session that `worst_sessions` does
        not list, worst first: what a click on a point of the rate chart may need."""
        listed = {row["id"] for _, row, _ in self._listed} | {
            row["id"] for items in self._per_rule.values() for _, row, _ in items}
        seen: dict[str, tuple] = {}
        for items in self._per_day_rule.values():
            for key, row in items:
                if row["id"] not in listed:
                    seen.setdefault(row["id"], (key, row))
        return [row for _, row in sorted(seen.values(), key=lambda x: x[0], reverse=True)]

    def transcript_map(self) -> dict[str, list[dict[str, Any]]]:
        """Session id -> its messages, for the `transcripts` worst sessions."""
        return {key[2]: entries(selection) for key, selection in self._transcripts if selection is not None}


def _utc_day(moment) -> str:
    """The ISO day of a session's creation, in UTC when it has a zone ("" when unknown)."""
    if moment is None:
        return ""
    return (moment.astimezone(timezone.utc) if moment.tzinfo is not None else moment).date().isoformat()


def _when(moment) -> str | None:
    """A message's time, to the second, in UTC when it has a zone."""
    if moment is None:
        return None
    if moment.tzinfo is not None:
        return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _wants(heap: list, key: tuple, size: int) -> bool:
    return size > 0 and (len(heap) < size or key > heap[0][0])


def _push(heap: list, item: tuple, size: int) -> None:
    if size <= 0:
        return
    if len(heap) < size:
        heapq.heappush(heap, item)
    elif item[0] > heap[0][0]:
        heapq.heapreplace(heap, item)


def session_row(card: Card) -> dict[str, Any]:
    """One line of the worst-sessions table."""
    info = card.session.info
    return {
        "id": info.id, "title": info.title or "", "severity": card.severity.label, "outcome": card.outcome,
        "model": info.model or "(unknown)", "created": info.created_at.isoformat() if info.created_at else "",
        "day": _utc_day(info.created_at),  # the chart's day (UTC), whatever the server's time zone
        "rules": sorted({f.rule for f in card.findings}), "findings": len(card.findings),
        "messages": len(card.session.messages),
    }


def row_of_json(card: dict[str, Any], created) -> dict[str, Any]:
    """`session_row` of a card line (`created`: its session's creation, parsed)."""
    session = card["session"]
    return {
        "id": session["id"], "title": session.get("title") or "", "severity": card["severity"],
        "outcome": card["outcome"], "model": session.get("model") or "(unknown)",
        "created": session.get("created_at") or "", "day": _utc_day(created),
        "rules": sorted({f["rule"] for f in card["findings"]}), "findings": len(card["findings"]),
        "messages": int(card["stats"]["messages"]),
    }


def _parse_stamp(value: str | None):
    """A card's `created_at` (isoformat, as Card.to_json wrote it) back as a datetime."""
    return datetime.fromisoformat(value) if value else None


def clip(text: str | None, keep: int = TEXT_KEEP) -> tuple[str | None, int]:
    """`text` whole when short; else its head and tail around an omission mark. Also the
    number of characters omitted."""
    if text is None or len(text) <= keep:
        return text, 0
    head, tail = keep * 3 // 4, keep // 4
    return text[:head] + "\n…\n" + text[-tail:], len(text) - head - tail


def select_messages(card: Card, limit: int | None = MAX_MESSAGES, edge: int = EDGE) -> list[Message | int]:
    """The messages a transcript shows, in order, with the number of messages left out (an int)
    wherever some are: all of them up to `limit`; beyond, the first and last `edge`, then CONTEXT
    around each message that carries a finding's evidence, in order, up to `limit` in all. The
    messages a long session's card never held (its elision) are a gap where they were."""
    messages = card.session.messages
    elision = card.session.elision
    if (limit is None or len(messages) <= limit) and elision is None:
        return list(messages)
    limit = len(messages) if limit is None else limit
    hits = {e.message_id for f in card.findings for e in f.evidence if e.message_id is not None}
    wanted = set(range(edge)) | set(range(len(messages) - edge, len(messages)))
    for index, message in enumerate(messages):
        if message.id in hits:
            window = set(range(max(0, index - CONTEXT), index + CONTEXT + 1)) - wanted
            if len(wanted) + len(window) > limit:
                break
            wanted |= window
    out: list[Message | int] = []
    gap = 0
    for index, message in enumerate(messages):
        if elision is not None and index == elision.at:
            gap += elision.left_out
        if index in wanted:
            if gap:
                out.append(gap)
                gap = 0
            out.append(message)
        else:
            gap += 1
    if gap:
        out.append(gap)
    return out


def entries(selection: list[Message | int], keep: int = TEXT_KEEP) -> list[dict[str, Any]]:
    """A selection as the page shows it: a dict per message, {"gap": n} for n left out."""
    return [{"gap": item} if isinstance(item, int) else message_entry(item, keep) for item in selection]


def transcript_of(card: Card, limit: int | None = MAX_MESSAGES, keep: int = TEXT_KEEP,
                  edge: int = EDGE) -> list[dict[str, Any]]:
    """The session's messages as the report shows them, from what the scan read (select_messages)."""
    return entries(select_messages(card, limit, edge), keep)


def message_entry(message: Message, keep: int = TEXT_KEEP) -> dict[str, Any]:
    text, omitted = clip(message.text, keep)
    return {
        "id": message.id, "role": message.role, "turn": message.turn,
        "at": _when(message.created_at),
        "text": text, "omitted": omitted, "calls": [c.display_name for c in message.tool_calls],
        "arguments": None, "tool": message.tool_name, "is_error": message.is_error, "error": clip(message.error)[0],
        "finish": message.finish_reason, "disk": message.disk_bytes, "logical": message.logical_bytes,
        "shape": message.shape, "output": None,
    }
