"""Running figures: each figure's statement in its own short read-only transaction, what a figure
that failed reports, and the sources every figure names."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import sqlalchemy as sa

from ..db import Database, load_query, retry_on_standby_conflict
from ..errors import QueryFailed, SchemaMismatch

SCHEMA_VERSION = 1
CATALOG, ESTIMATE, SAMPLE, EXACT = "catalog", "estimate", "sample", "exact"
FETCH_ROWS = 5_000

# Failures that cost one figure; anything else (a lost connection, a bug) stops the command.
FIGURE_ERRORS = (QueryFailed, SchemaMismatch)


class Runner:
    """Runs one figure's statement in its own read-only transaction on a shared connection."""

    def __init__(self, db: Database, conn: sa.Connection) -> None:
        self.db = db
        self.conn = conn

    def rows(self, name: str, params: Mapping[str, Any] | None, purpose: str) -> list[sa.Row]:
        try:
            return self.db.query(self.conn, name, params or {}, purpose=purpose)
        finally:
            self._end()

    def stream(self, name: str, params: Mapping[str, Any], purpose: str,
               consume: Callable[[Iterable[sa.Row]], Any], *, retry: bool = True) -> Any:
        """Consume a query through a server-side cursor; every FETCH is a statement under the timeouts."""
        statement = sa.text(load_query(name))

        def attempt() -> Any:
            with self.db.translate_errors(purpose):
                try:
                    result = self.conn.execute(statement, dict(params),
                                               execution_options={"yield_per": FETCH_ROWS})
                    return consume(result)
                finally:
                    self._end()

        return retry_on_standby_conflict(attempt) if retry else attempt()

    def _end(self) -> None:
        try:
            self.conn.rollback()  # read-only: ending the transaction is all a rollback does
        except Exception:  # a dead connection cannot roll back; the figure's error says why
            pass


def unavailable(reason: Any) -> dict[str, Any]:
    return {"available": False, "reason": str(reason)}


def share_of(part: float, whole: float) -> float:
    return round(part / whole, 6) if whole else 0.0


def rounded(value: float | None) -> int | None:
    return None if value is None else int(round(value))


def iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None
