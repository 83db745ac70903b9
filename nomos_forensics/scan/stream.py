"""Stream sessions for a scan: sessions, messages and lifecycle rows in session-id order from
server-side cursors, merged per session and reviewed as they arrive.

Memory is bounded by the largest session, not the database: nothing but the current session is
held. Per-message work (text extraction, tool names, sizes) happens in SQL, so large tool
outputs never leave the server unless a rule needs them.
"""

from __future__ import annotations

import gc
import queue
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from operator import itemgetter
from typing import Any

import psycopg
import sqlalchemy as sa
from psycopg.rows import dict_row, tuple_row

from ..card import Card, RuleError, Stats
from ..db import Database, load_query
from ..decode import lenient_json_loads
from ..engine import NEED_TABLES, RuleSet, plans_with_steps, review, session_info_from_row
from ..model import MESSAGE_COLUMNS, Session, build_session, message_from_row
from ..rule import Need
from ..schema import SchemaReport

STREAM_BATCH = 2000
EXTRAS_BATCH = 200  # sessions per fetch of a lifecycle stream (a row is a session's rows)



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
                 batch: int = STREAM_BATCH, columns: tuple[str, ...] | None = None, prefetch: bool = False) -> None:
        compiled = sa.text(load_query(name)).compile(dialect=conn.dialect)
        cursor = conn.connection.dbapi_connection.cursor(
            name=f"nomos_forensics_{name}", row_factory=dict_row if columns is None else tuple_row
        )
        cursor.itersize = batch
        cursor.execute(str(compiled), {k: v for k, v in dict(params or {}).items() if k in compiled.params})
        if columns is not None:
            got = tuple(c.name for c in cursor.description or ())
            if got != (*columns, "session_id"):  # the SQL and the positional reader must agree
                raise RuntimeError(f"{name}.sql returns columns {got}, expected {(*columns, 'session_id')}")
        self._prefetch = _Prefetch(cursor, batch) if prefetch else None
        self._rows: Iterator[Any] = iter(self._prefetch) if self._prefetch is not None else iter(cursor)
        self._pending: Any = next(self._rows, None)
        self._key: Callable[[Any], str] = itemgetter("session_id" if columns is None else -1)

    def close(self) -> None:
        """Stop fetching ahead (before the connection is given back)."""
        if self._prefetch is not None:
            self._prefetch.close()

    @property
    def failure(self) -> BaseException | None:
        return self._prefetch.failure if self._prefetch is not None else None

    def rows(self) -> Iterator[dict[str, Any]]:
        """Every row, for a stream read whole (the sessions themselves)."""
        while self._pending is not None:
            row, self._pending = self._pending, next(self._rows, None)
            yield row

    def take(self, session_id: str) -> list[dict[str, Any]]:
        return list(self.take_iter(session_id))

    def take_iter(self, session_id: str) -> Iterator[Any]:
        """The rows of `session_id` as they are fetched (read it to the end before the next take)."""
        pending = self._pending
        key_of = self._key
        rows = self._rows
        try:
            while pending is not None:
                key = key_of(pending)
                if key > session_id:
                    break
                if key == session_id:
                    yield pending
                pending = next(rows, None)
        finally:
            self._pending = pending


class _Prefetch:
    """A named cursor's pages fetched in a thread of its own, PREFETCH_PAGES ahead of the
    reader: the server computes the next page while the client builds sessions from this one
    (psycopg releases the GIL while it waits). A fetch error is raised to the reader."""

    def __init__(self, cursor, batch: int) -> None:
        self._pages: queue.Queue = queue.Queue(maxsize=PREFETCH_PAGES)
        self._stop = threading.Event()
        self.failure: BaseException | None = None  # what ended the fetch (it aborts the transaction)
        self._thread = threading.Thread(target=self._fetch, args=(cursor, batch), name="nomos-forensics-fetch",
                                        daemon=True)
        self._thread.start()

    def _fetch(self, cursor, batch: int) -> None:
        try:
            while not self._stop.is_set():
                page = cursor.fetchmany(batch)
                self._put(page)
                if len(page) < batch:
                    if page:
                        self._put([])
                    return
        except BaseException as error:  # raised by the reader
            self.failure = error
            self._put(error)

    def _put(self, item) -> None:
        while not self._stop.is_set():
            try:
                self._pages.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    def __iter__(self) -> Iterator[Any]:
        while True:
            page = self._pages.get()
            if isinstance(page, BaseException):
                raise page
            if not page:
                return
            yield from page

    def close(self) -> None:
        """Stop fetching, and wake a reader still waiting for a page (it then sees the end)."""
        self._stop.set()
        self._thread.join(timeout=30)  # at most one page's fetch in flight
        while True:
            try:
                self._pages.get_nowait()
            except queue.Empty:
                break
        self._pages.put_nowait([])


PREFETCH_PAGES = 2  # pages (STREAM_BATCH rows each) fetched ahead of the reader


def count_sessions(db: Database, conn: sa.Connection, filters: ScanFilters) -> int:
    return int(db.query(conn, "scan_count", filters.params(), purpose="counting sessions")[0].n)


@dataclass(frozen=True)
class Span:
    """What the database holds: its sessions and the first and last day they were created (UTC)."""

    sessions: int
    first: str | None
    last: str | None

    def describe(self) -> str:
        if not self.sessions:
            return "the database holds no sessions"
        held = f"the database holds {self.sessions:,} session{'s' if self.sessions != 1 else ''}"
        return f"{held}, created {self.first} – {self.last}" if self.first else held


def session_span(db: Database, conn: sa.Connection) -> Span:
    row = db.query(conn, "session_span", purpose="reading which days the sessions cover")[0]
    return Span(int(row.sessions), row.first, row.last)


def describe_filters(filters: ScanFilters) -> str:
    """The selection as a person typed it: `created since 2026-12-01 00:00 UTC, status failed`."""
    def when(moment: datetime) -> str:
        moment = moment.astimezone(timezone.utc) if moment.tzinfo else moment
        return moment.strftime("%Y-%m-%d %H:%M UTC")

    parts = []
    if filters.since is not None:
        parts.append(f"created since {when(filters.since)}")
    if filters.until is not None:
        parts.append(f"created before {when(filters.until)}")
    if filters.status is not None:
        parts.append(f"status {filters.status}")
    if filters.model is not None:
        parts.append(f"model {filters.model}")
    return ", ".join(parts) or "no filter"


def stream_sessions(
    db: Database,
    conn: sa.Connection,
    ruleset: RuleSet,
    filters: ScanFilters,
    schema: SchemaReport | None,
    manager=None,
) -> Iterator[Card]:
    """Yield one card per session, in session-id order, as each session's rows arrive.

    A reader thread builds sessions while this thread runs the rules, and a fetch thread keeps
    the messages two pages ahead of the reader: psycopg releases the GIL while it waits for
    the server, so the server computes the next page while Python builds and reviews the
    previous ones (a named cursor only works when asked).
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
        extras = {
            need: _Stream(conn, query + suffix, params, batch=EXTRAS_BATCH, columns=("rows",))
            for need, query in _EXTRAS.items()
            if need in needs and (schema is None or not schema.unmet(NEED_TABLES[need]))
        }
        # last: its fetch thread starts here, and the finally below stops it
        messages = _Stream(conn, "scan_messages" + suffix, params, batch=STREAM_BATCH, columns=MESSAGE_COLUMNS,
                           prefetch=True)
        keep = Need.CONTENT in needs
        query = db.rule_query(conn)
        built: queue.Queue = queue.Queue(maxsize=READ_AHEAD)
        stop = threading.Event()

        def read() -> None:
            try:
                previous = None
                for row in sessions.rows():
                    info = session_info_from_row(row)
                    if info.id == previous:  # a view may list a session twice: one card
                        continue
                    previous = info.id
                    try:
                        rows = messages.take_iter(info.id)
                        session = build_session(info, (message_from_row(r, keep_content=keep) for r in rows),
                                                ordered=False)
                        _attach_extras(session, extras, conn)
                        item: Any = session
                    except psycopg.Error as error:  # the stream itself failed (a lost connection): no session can be read
                        # a fetch that failed first (a timeout) aborted the transaction the others then
                        # fail in ("current transaction is aborted"): the first failure is the one to tell
                        raise messages.failure or error from None
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
            messages.close()  # no fetch may outlive the pass, nor leave the reader waiting
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


# the lifecycle streams of a scan (one row per session: its rows as one JSON array), and the
# one-session query each falls back to when that array cannot be decoded whole
_EXTRAS = {Need.AUDIT: "scan_audit", Need.PLANS: "scan_plan_steps", Need.EXECUTIONS: "scan_executions"}
_ONE_SESSION = {Need.AUDIT: "session_audit", Need.PLANS: "session_plan_steps", Need.EXECUTIONS: "session_executions"}


def _attach_extras(session: Session, extras: dict[Need, _Stream], conn: sa.Connection) -> None:
    if Need.AUDIT in extras:
        session.extras["audit_log"] = _session_rows(extras, Need.AUDIT, session.id, conn)
    if Need.PLANS in extras:
        pairs = _session_rows(extras, Need.PLANS, session.id, conn)
        session.extras["plans"] = plans_with_steps(
            row if isinstance(row, Mapping) else {"plan": row[0], "step": row[1]} for row in pairs
        )
    if Need.EXECUTIONS in extras:
        session.extras["executions"] = _session_rows(extras, Need.EXECUTIONS, session.id, conn)


def _session_rows(extras: dict[Need, _Stream], need: Need, session_id: str, conn: sa.Connection) -> list:
    """The session's rows of one lifecycle stream, decoded from its JSON array in one call. An
    array that cannot be decoded whole (a row nested too deeply for Python) is read again row by
    row, so that only that row becomes unreadable, as `review` reads it."""
    got = extras[need].take(session_id)
    if not got or got[0][0] is None:
        return []
    rows = lenient_json_loads(got[0][0])
    if isinstance(rows, list):
        return rows
    return _one_session(conn, _ONE_SESSION[need], session_id)


def _one_session(conn: sa.Connection, name: str, session_id: str) -> list:
    """One session's rows of a session_*.sql lifecycle query (dicts for plans, values otherwise)."""
    compiled = sa.text(load_query(name)).compile(dialect=conn.dialect)
    with conn.connection.dbapi_connection.cursor(row_factory=dict_row) as cursor:
        cursor.execute(str(compiled), {"session_id": session_id})
        rows = cursor.fetchall()
    return [row if "row" not in row else row["row"] for row in rows]


def _broken_card(info, error: Exception) -> Card:
    session = Session(info, [])
    return Card(
        session=session, stats=Stats.of(session), objective="(session could not be read)",
        outcome="unknown", errors=[RuleError("engine", type(error).__name__, str(error)[:300])],
        unexplained="unreadable",  # not grouped: counted apart (unexplained.LEFT_OUT)
    )
