"""Read-only access to a Nomos database: DSN handling, the guarded engine, named SQL queries.

Every connection the tool opens is read-only (psycopg `read_only` plus the server-side
`default_transaction_read_only`), carries statement and lock timeouts and an application
name, and reports failures as one-line `ForensicsError`s with passwords masked.
"""

from __future__ import annotations

import functools
import importlib.resources
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import psycopg
import psycopg.conninfo
import psycopg.errors
import sqlalchemy as sa
from psycopg.adapt import Loader
from psycopg.pq import Format
from psycopg.rows import dict_row, tuple_row
from psycopg.types.json import set_json_loads
from sqlalchemy import exc as sa_exc

from .decode import decode_utf8, lenient_json_loads
from .errors import (
    ConnectionFailed,
    ConnectionLost,
    ForensicsError,
    QueryFailed,
    QueryTimeout,
    SchemaMismatch,
)

DSN_ENV = "NOMOS_FORENSICS_DSN"
APPLICATION_NAME = "nomos-forensics"
DEFAULT_STATEMENT_TIMEOUT_S = 30.0
DEFAULT_LOCK_TIMEOUT_S = 2.0
STANDBY_CONFLICT_RETRIES = 3
DEFAULT_CONNECT_TIMEOUT_S = 10
PG_MAX_MS = 2**31 - 1  # the largest value a millisecond setting such as a timeout takes

T = TypeVar("T")

_URL_PASSWORD = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://[^:/@\s]*:)(?P<pw>[^@\s]*)(?=@)", re.I)
_KW_PASSWORD = re.compile(r"(?P<key>\bpassword\s*=\s*)(?P<pw>'(?:[^'\\]|\\.)*'|\S+)", re.I)
_QUERY_PASSWORD = re.compile(r"(?P<key>[?&]password=)(?P<pw>[^&\s]+)", re.I)


def mask_secrets(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Hide passwords in URLs, keyword strings and query parameters, and any known secret value."""
    text = _URL_PASSWORD.sub(lambda m: m.group("scheme") + "***", text)
    text = _KW_PASSWORD.sub(lambda m: m.group("key") + "***", text)
    text = _QUERY_PASSWORD.sub(lambda m: m.group("key") + "***", text)
    for secret in secrets:
        if secret and len(secret) >= 2:
            text = text.replace(secret, "***")
    return text


@dataclass(frozen=True)
class ConnectionSettings:
    """Where and how to connect; `conninfo` is a libpq string ('' means libpq's own defaults)."""

    conninfo: str = ""
    statement_timeout_s: float = DEFAULT_STATEMENT_TIMEOUT_S
    lock_timeout_s: float = DEFAULT_LOCK_TIMEOUT_S

    @classmethod
    def resolve(
        cls,
        dsn: str | None,
        *,
        statement_timeout_s: float | None = None,
        lock_timeout_s: float | None = None,
    ) -> "ConnectionSettings":
        """`--dsn`, else $NOMOS_FORENSICS_DSN, else libpq defaults (PGHOST, ~/.pgpass, services)."""
        raw = dsn if dsn is not None else os.environ.get(DSN_ENV, "")
        return cls(
            conninfo=normalise_dsn(raw),
            statement_timeout_s=(
                DEFAULT_STATEMENT_TIMEOUT_S if statement_timeout_s is None else statement_timeout_s
            ),
            lock_timeout_s=DEFAULT_LOCK_TIMEOUT_S if lock_timeout_s is None else lock_timeout_s,
        )

    @property
    def connect_timeout_s(self) -> int:
        """The DSN's connect_timeout (or $PGCONNECT_TIMEOUT), else 10 s."""
        try:
            value = psycopg.conninfo.conninfo_to_dict(self.conninfo).get("connect_timeout")
            seconds = int(str(value or os.environ.get("PGCONNECT_TIMEOUT") or DEFAULT_CONNECT_TIMEOUT_S))
        except (psycopg.Error, ValueError):
            return DEFAULT_CONNECT_TIMEOUT_S
        return seconds if seconds > 0 else DEFAULT_CONNECT_TIMEOUT_S

    @property
    def secrets(self) -> tuple[str, ...]:
        try:
            password = psycopg.conninfo.conninfo_to_dict(self.conninfo).get("password")
        except psycopg.Error:
            return ()
        return (str(password),) if password else ()

    def mask(self, text: str) -> str:
        return mask_secrets(text, self.secrets)

    def describe(self) -> str:
        """Human description of the target without credentials, e.g. `postgres@127.0.0.1:5432/nomos`."""
        try:
            params = psycopg.conninfo.conninfo_to_dict(self.conninfo)
        except psycopg.Error:
            return "<unparseable DSN>"
        user = params.get("user") or os.environ.get("PGUSER") or ""
        host = params.get("host") or params.get("hostaddr") or os.environ.get("PGHOST") or "local socket"
        port = params.get("port") or os.environ.get("PGPORT") or ""
        dbname = params.get("dbname") or os.environ.get("PGDATABASE") or ""
        service = params.get("service") or os.environ.get("PGSERVICE")
        if service and not params.get("host"):
            return f"service {service}"
        where = f"{host}:{port}" if port else str(host)
        return f"{user + '@' if user else ''}{where}{'/' + str(dbname) if dbname else ''}"

    def startup_conninfo(self) -> str:
        """The user's conninfo plus the read-only, timeout and application-name settings."""
        params = psycopg.conninfo.conninfo_to_dict(self.conninfo)
        ours = (
            f"-c default_transaction_read_only=on"
            f" -c statement_timeout={int(self.statement_timeout_s * 1000)}"
            f" -c lock_timeout={int(self.lock_timeout_s * 1000)}"
            f" -c idle_in_transaction_session_timeout={min(int(max(self.statement_timeout_s, 60) * 2000), PG_MAX_MS)}"
        )
        options = f"{params['options']} {ours}" if params.get("options") else ours
        return psycopg.conninfo.make_conninfo(
            self.conninfo, options=options, application_name=APPLICATION_NAME
        )


def lenient_loaders(conn: psycopg.Connection) -> None:
    """Loaders that never fail a whole query for one odd value: JSON nested deeper than Python
    parses becomes an UnreadableJSON, and timestamps Python cannot hold ('infinity',
    '-infinity', BC dates, years after 9999) become None (unknown)."""
    set_json_loads(lenient_json_loads, conn)
    for name in ("timestamptz", "timestamp", "date"):
        oid = psycopg.postgres.types[name].oid
        conn.adapters.register_loader(oid, _lenient(psycopg.adapters.get_loader(oid, Format.TEXT)))
    if conn.info.parameter_status("server_encoding") == "SQL_ASCII":
        for name in TEXT_TYPES:
            conn.adapters.register_loader(name, LenientTextLoader)


# a SQL_ASCII database stores any bytes: these are read as UTF-8 with U+FFFD for the rest
TEXT_TYPES = ("text", "varchar", "bpchar", "name", '"char"')


class LenientTextLoader(Loader):
    def load(self, data) -> str:
        return decode_utf8(bytes(data))


@functools.cache
def _lenient(base: type) -> type:
    class Lenient(Loader):
        def __init__(self, oid: int, context=None) -> None:
            super().__init__(oid, context)
            self._load = base(oid, context).load

        def load(self, data):
            try:
                return self._load(data)
            except psycopg.DataError:
                return None

    Lenient.__name__ = f"Lenient{base.__name__}"
    return Lenient


def normalise_dsn(raw: str) -> str:
    """Turn a URL (postgresql://, postgres://, postgresql+psycopg://) or keyword string into libpq conninfo."""
    raw = raw.strip()
    raw = re.sub(r"^postgres(?:ql)?\+[a-z0-9_]+://", "postgresql://", raw, flags=re.I)
    if raw.lower().startswith("postgres://"):
        raw = "postgresql://" + raw[len("postgres://"):]
    try:
        psycopg.conninfo.conninfo_to_dict(raw)
    except psycopg.Error as error:
        reason = mask_secrets(str(error).splitlines()[0] if str(error) else type(error).__name__)
        raise ConnectionFailed(f"invalid DSN: {reason}", hint="use a postgresql:// URL or libpq keyword string") from None
    return raw


MEMOIZE_SINCE = 140000  # server_version_num of PostgreSQL 14, which added enable_memoize


class Database:
    """A read-only SQLAlchemy engine over psycopg 3 with error mapping and named queries."""

    def __init__(self, settings: ConnectionSettings) -> None:
        self.settings = settings
        conninfo = settings.startup_conninfo()
        connect_timeout = settings.connect_timeout_s

        def connect() -> psycopg.Connection:
            raw = psycopg.connect(conninfo, connect_timeout=connect_timeout)
            raw.read_only = True  # every BEGIN is BEGIN READ ONLY, whatever the session defaults say
            server_encoding = raw.info.parameter_status("server_encoding")
            if server_encoding == "SQL_ASCII":
                # SQL_ASCII stores any bytes and refuses to send what is not UTF-8 as UTF8: read its
                # bytes as they are (lenient_loaders decodes them as UTF-8 with replacement)
                raw.execute("SET client_encoding TO 'SQL_ASCII'")
                raw.commit()
            elif raw.info.parameter_status("client_encoding") != "UTF8":
                raw.execute("SET client_encoding TO 'UTF8'")  # the server converts LATIN1, EUC_JP, ...
                raw.commit()
            lenient_loaders(raw)
            if raw.info.server_version >= MEMOIZE_SINCE:
                # The message queries detoast each value once in a LATERAL subquery (see
                # _message_source.sql). PostgreSQL 14+ may put a Memoize node over it, keyed by
                # the content itself: every lookup detoasts and hashes the value, and misses
                # compute it again. On the bench database that read 7.7x the floor's blocks and
                # tripled the server's CPU. Our queries are single passes; Memoize never pays.
                raw.execute("SET enable_memoize = off")
                raw.commit()
            return raw

        self._connect = connect
        self.engine = sa.create_engine(
            "postgresql+psycopg://", creator=connect, pool_size=2, max_overflow=8
        )

    # ---------------------------------------------------------------- connections
    @contextmanager
    def connect(self, purpose: str = "connecting") -> Iterator[sa.Connection]:
        """A pooled connection inside one read-only transaction; errors become ForensicsErrors."""
        try:
            conn = self.engine.connect()
        except sa_exc.DBAPIError as error:
            raise self._connection_error(error) from None
        try:
            with self.translate_errors(purpose):
                yield conn
        finally:
            try:
                conn.close()
            except Exception:  # the connection may already be dead; closing must not mask the cause
                pass

    def raw_connection(self) -> psycopg.Connection:
        """A fresh, unpooled read-only psycopg connection (for streaming scans and COPY-like reads)."""
        try:
            return self._connect()
        except psycopg.Error as error:
            raise self._connection_error(error) from None

    def dispose(self) -> None:
        self.engine.dispose()

    # ---------------------------------------------------------------- queries
    def query(
        self,
        conn: sa.Connection,
        name: str,
        params: Mapping[str, Any] | None = None,
        *,
        purpose: str | None = None,
    ) -> list[sa.Row]:
        """Run the named query from sql/queries/<name>.sql with bound parameters and return all rows."""
        statement = sa.text(load_query(name))
        return retry_on_standby_conflict(
            lambda: self._fetch_all(conn, statement, params or {}, purpose or f"running {name}")
        )

    def stream(self, conn: sa.Connection, name: str, params: Mapping[str, Any], *, columns: tuple[str, ...],
               batch: int = 2000) -> Iterator[tuple]:
        """The rows of the named query as plain tuples (`columns`, in order, checked), fetched
        `batch` at a time through a server-side cursor in the connection's transaction."""
        compiled = sa.text(load_query(name)).compile(dialect=conn.dialect)
        with conn.connection.dbapi_connection.cursor(name=f"nomos_forensics_{name}", row_factory=tuple_row) as cursor:
            cursor.itersize = batch
            cursor.execute(str(compiled), {k: v for k, v in dict(params).items() if k in compiled.params})
            got = tuple(c.name for c in cursor.description or ())
            if got[:len(columns)] != columns:
                raise RuntimeError(f"{name}.sql returns columns {got}, expected {columns}")
            yield from cursor

    def _fetch_all(self, conn, statement, params, purpose) -> list[sa.Row]:
        with self.translate_errors(purpose):
            try:
                return list(conn.execute(statement, dict(params)))
            except BaseException:
                _rollback_quietly(conn)
                raise

    def rule_query(self, conn: sa.Connection) -> Callable[[str, Mapping[str, Any]], list[dict[str, Any]]]:
        """The query helper handed to rules: exactly one query, bound parameters, in a savepoint.

        The server, not a parser of ours, enforces "one query": the rule's SQL is sent as the
        body of a subquery through the extended protocol (a prepared statement), which the
        server refuses to split into several statements, and in which anything but a query
        (COMMIT, BEGIN, SET, UPDATE, DDL) is a syntax error. A subtransaction cannot switch to
        read-write, and a function call that turned read-only off for later transactions is
        reported as an error. The savepoint is always rolled back once the rows are read, so
        nothing the statement changed outlives it: not a setting (`set_config` of the
        timeouts or the search path, which later queries of the run would inherit), not a
        large object.
        """

        def run(sql: str, params: Mapping[str, Any]) -> list[dict[str, Any]]:
            compiled = sa.text(_RULE_QUERY.format(sql=sql.rstrip().rstrip(";"))).compile(dialect=conn.dialect)
            given = dict(params or {})
            missing = sorted(name for name in compiled.params if name not in given)
            if missing:
                raise ValueError(f"ctx.query: no value for {', '.join(':' + m for m in missing)}")
            savepoint = conn.begin_nested()
            try:
                with conn.connection.dbapi_connection.cursor(row_factory=dict_row) as cursor:
                    cursor.execute(str(compiled), {k: given[k] for k in compiled.params}, prepare=True)
                    rows = cursor.fetchall()
                guard = conn.execute(sa.text(_READ_ONLY_GUARD)).one()
                if guard.tx != "on" or guard.dflt != "on":
                    raise ReadOnlyViolation(
                        "statement tried to turn off read-only mode; it was rolled back"
                    )
            except BaseException as error:
                if savepoint.is_active:
                    savepoint.rollback()
                if isinstance(error, psycopg.errors.SyntaxError):
                    raise RuleQueryRefused(
                        "ctx.query runs exactly one query statement (SELECT, WITH, VALUES or TABLE);"
                        f" the server refused this one: {_first_line(error)}"
                    ) from None
                if isinstance(error, sa_exc.DBAPIError) and error.orig is not None:
                    raise error.orig from None  # rule authors see the server's own error
                raise
            savepoint.rollback()
            return rows

        return run

    def _connection_error(self, error: BaseException) -> ForensicsError:
        original = getattr(error, "orig", None) or error
        if isinstance(original, psycopg.errors.QueryCanceled):  # the session's own set-up timed out
            return translate_error(original, "setting up the connection", self.settings)
        message = _first_line(original)
        return ConnectionFailed(
            f"cannot connect to {self.settings.describe()}: {self.settings.mask(message)}"
        )

    @contextmanager
    def translate_errors(self, purpose: str) -> Iterator[None]:
        """Map driver errors to one-line ForensicsErrors naming what the tool was doing."""
        try:
            yield
        except ForensicsError:
            raise
        except (sa_exc.DBAPIError, psycopg.Error) as error:
            raise translate_error(error, purpose, self.settings) from None


_READ_ONLY_GUARD = (
    "SELECT current_setting('transaction_read_only') AS tx,"
    " current_setting('default_transaction_read_only') AS dflt"
)


class ReadOnlyViolation(RuntimeError):
    """A rule's statement tried to leave read-only mode."""


class RuleQueryRefused(ValueError):
    """A rule's SQL was not exactly one query statement."""


# A rule's SQL runs as the body of a subquery: only a query can stand there. On its own lines,
# so that a trailing `-- comment` in the rule's SQL cannot swallow the closing parenthesis.
_RULE_QUERY = "SELECT * FROM (\n{sql}\n) AS rule_query"


def translate_error(error: BaseException, purpose: str, settings: ConnectionSettings) -> ForensicsError:
    original = getattr(error, "orig", None) or error
    message = settings.mask(_first_line(original))
    timeout_s = settings.statement_timeout_s
    if isinstance(original, psycopg.errors.QueryCanceled):
        return QueryTimeout(
            f"statement timed out while {purpose} (statement_timeout {timeout_s:g}s)",
            hint="raise --statement-timeout or narrow the query",
        )
    if isinstance(original, psycopg.errors.LockNotAvailable):
        return QueryTimeout(
            f"lock wait timed out while {purpose} (lock_timeout {settings.lock_timeout_s:g}s)",
            hint="another transaction holds a conflicting lock",
        )
    if isinstance(original, (psycopg.errors.UndefinedTable, psycopg.errors.UndefinedColumn)):
        return SchemaMismatch(f"schema mismatch while {purpose}: {message}", hint="run `nomos-forensics doctor`")
    if isinstance(original, psycopg.errors.ReadOnlySqlTransaction):
        return QueryFailed(f"refused while {purpose}: {message}")
    if isinstance(original, psycopg.OperationalError) or getattr(error, "connection_invalidated", False):
        return ConnectionLost(f"lost the connection to {settings.describe()} while {purpose}: {message}")
    return QueryFailed(f"query failed while {purpose}: {message}")


def is_standby_conflict(error: BaseException) -> bool:
    original = getattr(error, "orig", None) or error
    return isinstance(original, psycopg.errors.SerializationFailure) or (
        isinstance(error, QueryFailed) and "conflict with recovery" in str(error)
    )


def retry_on_standby_conflict(
    action: Callable[[], T], *, attempts: int = STANDBY_CONFLICT_RETRIES, base_delay_s: float = 0.2
) -> T:
    """Retry `action` when a hot standby cancels it for a recovery conflict (SQLSTATE 40001)."""
    for attempt in range(attempts + 1):
        try:
            return action()
        except (ForensicsError, sa_exc.DBAPIError, psycopg.Error) as error:
            if attempt == attempts or not _is_conflict(error):
                if _is_conflict(error):
                    raise QueryFailed(
                        f"cancelled by recovery conflicts on the standby {attempts + 1} times in a row",
                        hint="retry later or set max_standby_streaming_delay higher on the replica",
                    ) from None
                raise
            time.sleep(base_delay_s * (2**attempt))
    raise AssertionError("unreachable")


def _is_conflict(error: BaseException) -> bool:
    cause = error.__cause__ or error.__context__
    return is_standby_conflict(error) or (cause is not None and is_standby_conflict(cause))


def _rollback_quietly(conn: sa.Connection) -> None:
    try:
        conn.rollback()
    except Exception:  # a dead connection cannot roll back; the original error matters more
        pass


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0].strip()


_FRAGMENT = re.compile(r"\{([a-z_]+)\}")


@functools.cache
def load_query(name: str) -> str:
    """The text of sql/queries/<name>.sql (package data), with `{fragment}` references replaced
    by sql/queries/_<fragment>.sql. Fragments are static SQL; values are always bound parameters."""
    if not re.fullmatch(r"_?[a-z0-9_]+", name):
        raise ValueError(f"bad query name {name!r}")
    text = sql_resource("queries", f"{name}.sql")
    if name.startswith("_"):  # a fragment: drop its comment lines before it is inlined
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return _FRAGMENT.sub(lambda match: load_query("_" + match.group(1)), text)


def sql_resource(*parts: str) -> str:
    return importlib.resources.files("nomos_forensics_sql").joinpath(*parts).read_text(encoding="utf-8")


def migration_files() -> list[tuple[int, str, str]]:
    """(version, file name, sql) for every Nomos migration shipped in sql/migrations, in order."""
    folder = importlib.resources.files("nomos_forensics_sql") / "migrations"
    found = []
    for entry in folder.iterdir():
        match = re.match(r"(\d+)_.*\.sql$", entry.name)
        if match:
            found.append((int(match.group(1)), entry.name, entry.read_text(encoding="utf-8")))
    return sorted(found)
