"""Scan many sessions: stream sessions, messages and lifecycle rows in session-id order from
server-side cursors, merge them per session, review each, and aggregate a summary.

Memory is bounded by the largest session, not the database: nothing but the current session
and the summary's top-k lists is held. Per-message work (text extraction, tool names, sizes)
happens in SQL, so large tool outputs never leave the server unless a rule needs them.
"""

from __future__ import annotations

import gc
import heapq
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from operator import itemgetter
from typing import Any

import sqlalchemy as sa
from psycopg.rows import dict_row, tuple_row

from .card import Card, RuleError, Stats
from .db import Database, load_query
from .engine import NEED_TABLES, RuleSet, plans_with_steps, review, session_info_from_row
from .model import MESSAGE_COLUMNS, Message, Session, message_from_row, sort_messages
from .render import human_bytes
from .rule import Need
from .schema import SchemaReport

STREAM_BATCH = 2000
TOP_K = 10


@dataclass(frozen=True)
class ScanFilters:
    since: datetime | None = None
    until: datetime | None = None
    status: str | None = None
    model: str | None = None
    limit: int | None = None
    partition: int = 0
    partitions: int = 1

    @property
    def unfiltered(self) -> bool:
        return (
            self.since is None and self.until is None and self.status is None
            and self.model is None and self.limit is None and self.partitions == 1
        )

    def params(self) -> dict[str, Any]:
        return {
            "since": self.since, "until": self.until, "status": self.status, "model": self.model,
            "limit": self.limit, "partition": self.partition, "partitions": self.partitions,
        }


class _Stream:
    """A server-side cursor read in session-id order, handing out one session's rows at a time.

    Rows come from a psycopg named cursor (cheaper than SQLAlchemy rows on the million-row
    path): dicts, or with `columns` plain tuples in that order, the session id last. The SQL
    still comes from sql/queries and its parameters are bound.
    """

    def __init__(self, conn: sa.Connection, name: str, params: Mapping[str, Any] | None = None,
                 batch: int = STREAM_BATCH, columns: tuple[str, ...] | None = None) -> None:
        compiled = sa.text(load_query(name)).compile(dialect=conn.dialect)
        cursor = conn.connection.dbapi_connection.cursor(
            name=f"nomos_forensics_{name}", row_factory=dict_row if columns is None else tuple_row
        )
        cursor.itersize = batch
        cursor.execute(str(compiled), {k: v for k, v in dict(params or {}).items() if k in compiled.params})
        self._rows: Iterator[Any] = iter(cursor)
        self._pending: Any = next(self._rows, None)
        self._key: Callable[[Any], str] = itemgetter("session_id" if columns is None else -1)
        if columns is not None:
            got = tuple(c.name for c in cursor.description or ())
            if got != (*columns, "session_id"):  # the SQL and the positional reader must agree
                raise RuntimeError(f"{name}.sql returns columns {got}, expected {(*columns, 'session_id')}")

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every row, for a stream read whole (the sessions themselves)."""
        while self._pending is not None:
            row, self._pending = self._pending, next(self._rows, None)
            yield row

    def take(self, session_id: str) -> list[dict[str, Any]]:
        rows = []
        pending = self._pending
        key_of = self._key
        while pending is not None:
            key = key_of(pending)
            if key > session_id:
                break
            if key == session_id:
                rows.append(pending)
            pending = next(self._rows, None)
        self._pending = pending
        return rows


def count_sessions(db: Database, conn: sa.Connection, filters: ScanFilters) -> int:
    return int(db.query(conn, "scan_count", filters.params(), purpose="counting sessions")[0].n)


def stream_sessions(
    db: Database,
    conn: sa.Connection,
    ruleset: RuleSet,
    filters: ScanFilters,
    schema: SchemaReport | None,
    manager=None,
) -> Iterator[Card]:
    """Yield one card per session, in session-id order, as each session's rows arrive.

    A reader thread fetches rows and builds sessions while this thread runs the rules:
    psycopg releases the GIL while it waits for the server, so the server computes the next
    batch as Python reviews the previous one (a named cursor only works when asked).
    """
    needs = ruleset.needs
    params = {
        **filters.params(),
        "full_content": Need.CONTENT in needs,
        "logical_floor": ruleset.logical_floor,
    }
    with db.translate_errors("scanning sessions"):
        sessions = _Stream(conn, "scan_sessions", params, batch=500)
        # unfiltered scans read whole tables in dump order; filtered ones only their sessions
        suffix = "" if filters.unfiltered else "_filtered"
        messages = _Stream(conn, "scan_messages" + suffix, params, columns=MESSAGE_COLUMNS)
        extras = {
            need: _Stream(conn, query + suffix, params)
            for need, query in (
                (Need.AUDIT, "scan_audit"), (Need.PLANS, "scan_plan_steps"), (Need.EXECUTIONS, "scan_executions")
            )
            if need in needs and (schema is None or not schema.unmet(NEED_TABLES[need]))
        }
        keep = Need.CONTENT in needs
        query = db.rule_query(conn)
        built: queue.Queue = queue.Queue(maxsize=READ_AHEAD)
        stop = threading.Event()

        def read() -> None:
            try:
                for row in sessions.rows():
                    info = session_info_from_row(row)
                    try:
                        msgs = sort_messages(message_from_row(r, keep_content=keep) for r in messages.take(info.id))
                        session = Session(info, msgs)
                        _attach_extras(session, extras)
                        item: Any = session
                    except Exception as error:  # a session that cannot even be built still gets a card
                        item = _broken_card(info, error)
                    while not stop.is_set():
                        try:
                            built.put(item, timeout=0.2)
                            break
                        except queue.Full:
                            continue
                    if stop.is_set():
                        return
                built.put(_END)
            except BaseException as error:  # handed to the consumer, which raises it
                built.put(error)

        reader = threading.Thread(target=read, name="nomos-forensics-reader", daemon=True)
        reader.start()
        try:
            while True:
                item = built.get()
                if item is _END:
                    break
                if isinstance(item, BaseException):
                    raise item
                yield item if isinstance(item, Card) else review(
                    item, ruleset, query=query, schema=schema, manager=manager
                )
        finally:
            stop.set()
            reader.join(timeout=5)


def settle_memory() -> None:
    """For a process about to scan (the CLI and its workers; it changes the process's garbage
    collector for good): collect less often. Modules, rule patterns and lexicons are loaded by
    now and live as long as the process: frozen, no collection walks them again; sessions come
    and go by reference counting, so young collections can be rarer (1-4% less CPU on the bench)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])


GC_THRESHOLD = 50_000  # allocations between young collections (Python's default: 700)
_END = object()
READ_AHEAD = 64  # sessions built ahead of the rules; bounds memory to a few sessions' rows


def _attach_extras(session: Session, extras: dict[Need, _Stream]) -> None:
    if Need.AUDIT in extras:
        session.extras["audit_log"] = [r["row"] for r in extras[Need.AUDIT].take(session.id)]
    if Need.PLANS in extras:
        session.extras["plans"] = plans_with_steps(extras[Need.PLANS].take(session.id))
    if Need.EXECUTIONS in extras:
        session.extras["executions"] = [r["row"] for r in extras[Need.EXECUTIONS].take(session.id)]


def _broken_card(info, error: Exception) -> Card:
    session = Session(info, [])
    return Card(
        session=session, stats=Stats.of(session), objective="(session could not be read)",
        outcome="unknown", errors=[RuleError("engine", type(error).__name__, str(error)[:300])],
    )


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
    _worst: list = field(default_factory=list)
    _biggest: list = field(default_factory=list)

    def add(self, card: Card) -> None:
        self.sessions += 1
        rules = sorted({f.rule for f in card.findings})
        if rules:
            self.sessions_with_findings += 1
        self.by_rule.update(rules)
        self.by_severity[card.severity.label] += 1
        self.outcomes[card.outcome] += 1
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
        for message in card.session.messages:
            self._consider_message(card, message)

    def _consider_message(self, card: Card, message: Message) -> None:
        size = max(message.logical_bytes or 0, message.disk_bytes or 0)
        # the whole key, ties included, as _push and merge compare it: any --jobs, same list
        if size == 0 or (len(self._biggest) >= TOP_K and (size, message.id) <= self._biggest[0][0]):
            return
        item = ((size, message.id), {
            "message_id": message.id, "session": card.session.id[:8], "role": message.role,
            "tool": message.tool_name or (message.tool_calls[0].display_name if message.tool_calls else None),
            "logical_bytes": message.logical_bytes, "disk_bytes": message.disk_bytes,
        })
        self._push(self._biggest, item)

    def merge(self, other: "Summary") -> None:
        """Fold another partition's summary into this one (scan --jobs)."""
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
        for item in other._worst:
            self._push(self._worst, item)
        for item in other._biggest:
            self._push(self._biggest, item)

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
        }


def ranked(counts: Counter) -> list[tuple[str, int]]:
    """Most common first, ties by name: the same summary whatever order cards were added in."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def summary_tables(summary: Summary) -> list[tuple[str, list[str], list[list[Any]]]]:
    """(heading, headers, rows) for the people-facing summary; rendering is the caller's."""
    s = summary
    pct = lambda n, of=None: f"{100 * s.share(n, of):.1f}%"  # noqa: E731
    tables = [
        ("Overview", ["sessions", "with findings", "blocker", "friction", "cosmetic", "achieved", "failed", "partial", "unknown"],
         [[s.sessions, f"{s.sessions_with_findings} ({pct(s.sessions_with_findings)})",
           s.by_severity["blocker"], s.by_severity["friction"], s.by_severity["cosmetic"],
           s.outcomes["achieved"], s.outcomes["failed"], s.outcomes["partial"], s.outcomes["unknown"]]]),
        ("Signatures", ["rule", "sessions", "share"],
         [[rule, n, pct(n)] for rule, n in ranked(s.by_rule)]),
        ("Worst sessions", ["id", "title", "severity", "outcome", "findings"],
         [[w["id"][:8], _cut(w["title"], 40), w["severity"], w["outcome"], ", ".join(w["findings"])] for w in s.worst]),
        ("Tools", ["tool", "calls", "sessions", "fan-out turns", "max calls in a turn"],
         [[name, n, s.tool_sessions[name], s.fanout.get(name, {}).get("turns", 0),
           s.fanout.get(name, {}).get("max_calls", "")] for name, n in ranked(s.tool_calls)[:15]]),
    ]
    by_model = []
    for model, counts in sorted(s.models.items(), key=lambda kv: (-kv[1]["sessions"], kv[0])):
        fired = [(rule, counts[rule]) for rule, _ in ranked(s.by_rule) if counts[rule]]
        cells = ", ".join(f"{rule} {n} ({pct(n, counts['sessions'])})" for rule, n in fired) or "none"
        by_model.append([model, counts["sessions"], cells])
    tables.append(("Signatures by model", ["model", "sessions", "signatures (sessions, rate)"], by_model))
    tables.append((
        "Biggest messages", ["message", "session", "role", "tool", "logical", "on disk"],
        [[b["message_id"], b["session"], b["role"], b["tool"] or "", human_bytes(b["logical_bytes"]),
          human_bytes(b["disk_bytes"])] for b in s.biggest],
    ))
    if s.rule_errors:
        tables.append(("Rule errors", ["rule", "sessions"], [[r, n] for r, n in ranked(s.rule_errors)]))
    return tables


def _cut(text: str | None, width: int) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# ------------------------------------------------------------------ producers
@dataclass
class ScanJob:
    """Everything a scan worker needs to rebuild its engine and rules in another process."""

    settings: Any  # db.ConnectionSettings
    filters: ScanFilters
    plugin_refs: tuple[str, ...]
    config: Any  # config.Config
    select: tuple[str, ...]
    ignore: tuple[str, ...]
    fail_on: Any  # Severity | None


def card_results(cards: Iterator[Card], summary: Summary, fail_on) -> Iterator[tuple[Card, bool]]:
    from .engine import fail_on_reached

    for card in cards:
        summary.add(card)
        yield card, bool(card.errors) or fail_on_reached([card], fail_on)


def die_with_parent(parent: int) -> None:
    """End this worker when its parent dies, however it dies (SIGTERM, SIGKILL): the kernel
    sends SIGTERM on Linux (PR_SET_PDEATHSIG), and a watchdog thread elsewhere notices the
    re-parenting within a second. Without it a worker would hold its connection for minutes."""
    import ctypes
    import os
    import signal
    import sys

    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
    threading.Thread(target=watch, name="nomos-forensics-parent-watch", daemon=True).start()


def _worker(job: ScanJob, channel, parent: int) -> None:
    """Scan one hash partition and send ("card", session id, json line, failed) ... then
    ("done", summary), or ("error", class name, message)."""
    import signal

    from . import plugins
    from .engine import build_ruleset
    from .errors import ForensicsError
    from .render import card_json
    from .schema import reflect

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what Ctrl-C means
    die_with_parent(parent)
    db = Database(job.settings)
    summary = Summary()
    try:
        registry = plugins.load(job.plugin_refs)
        with db.connect("scanning sessions") as conn:
            schema = reflect(conn, db)
            ruleset = build_ruleset(registry, job.config, select=job.select, ignore=job.ignore, schema=schema)
            settle_memory()
            cards = stream_sessions(db, conn, ruleset, job.filters, schema, manager=registry.manager)
            for card, failed in card_results(cards, summary, job.fail_on):
                channel.put(("card", card.session.id, card_json(card, indent=None), failed))
        channel.put(("done", summary))
    except ForensicsError as error:
        channel.put(("error", type(error).__name__, error.message))
    except Exception as error:  # reported by the parent as one line
        channel.put(("error", "QueryFailed", f"scan worker failed: {type(error).__name__}: {error}"))
    finally:
        db.dispose()


WORKER_QUEUE = 256  # cards a worker may run ahead of the merge


def parallel_scan(job: ScanJob, jobs: int) -> Iterator[tuple[str, bool]]:
    """Run `jobs` worker processes over hash partitions of the sessions.

    Each worker reviews its partition in session-id order; the cards are merged back into
    session-id order, so the output is the same as a single process's. A worker may run at
    most WORKER_QUEUE cards ahead of the slowest, which bounds the parent's memory. Yields
    (card JSON line, failed); the merged summary is in `parallel_scan.summary` once the
    generator is exhausted. Raises the first worker error.
    """
    import multiprocessing
    import os

    context = multiprocessing.get_context("fork")
    channels, workers = [], []
    for partition in range(jobs):
        filters = ScanFilters(**{**job.filters.__dict__, "partition": partition, "partitions": jobs})
        worker_job = ScanJob(**{**job.__dict__, "filters": filters})
        channel = context.Queue(maxsize=WORKER_QUEUE)
        process = context.Process(target=_worker, args=(worker_job, channel, os.getpid()), daemon=True)
        process.start()
        channels.append(channel)
        workers.append(process)
    summary = Summary()
    parallel_scan.summary = summary
    heads: list[tuple[str, str, bool] | None] = [None] * jobs  # each running worker's next card
    running = set(range(jobs))
    try:
        while running or any(heads):
            for index in sorted(running):
                while heads[index] is None and index in running:
                    message = _receive(channels[index], workers[index])
                    if message[0] == "card":
                        heads[index] = message[1:]
                    elif message[0] == "done":
                        summary.merge(message[1])
                        running.discard(index)
                    else:
                        raise _worker_error(message[1], message[2])
            waiting = [i for i in range(jobs) if heads[i] is not None]
            if not waiting:
                continue
            first = min(waiting, key=lambda i: heads[i][0])
            _, line, failed = heads[first]
            heads[first] = None
            yield line, failed
    finally:
        for process in workers:
            if process.is_alive():
                process.terminate()
        for process in workers:
            process.join(timeout=5)


def _receive(channel, process) -> tuple:
    """The next message from one worker; a worker that died without a word is an error."""
    import queue as queue_mod

    from .errors import QueryFailed

    while True:
        try:
            return channel.get(timeout=1.0)
        except queue_mod.Empty:
            if not process.is_alive() and channel.empty():
                raise QueryFailed("a scan worker exited unexpectedly") from None


def _worker_error(name: str, text: str) -> Exception:
    from .errors import ConnectionLost, ForensicsError, QueryTimeout

    return {"ConnectionLost": ConnectionLost, "QueryTimeout": QueryTimeout}.get(name, ForensicsError)(text)
