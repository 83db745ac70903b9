"""The Nomos database contract (migration 020) and its comparison with the live schema.

The contract mirrors shared/reference/nomos-data-model.md column for column. `SchemaReport`
says what is missing or of another type, and which features (rules, commands) that disables.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import sqlalchemy as sa

CONTRACT_MIGRATION = 20

# table -> column -> accepted format_type() spellings (first one is the contract's)
CONTRACT: dict[str, dict[str, tuple[str, ...]]] = {
    "sessions": {
        "id": ("uuid",),
        "title": ("text",),
        "status": ("text",),
        "goal": ("text",),
        "model": ("text",),
        "created_at": ("timestamp with time zone",),
        "updated_at": ("timestamp with time zone",),
    },
    "messages": {
        "id": ("bigint",),
        "session_id": ("uuid",),
        "role": ("text",),
        "content": ("jsonb",),
        "created_at": ("timestamp with time zone",),
    },
    "audit_log": {
        "id": ("bigint",),
        "session_id": ("uuid",),
        "actor": ("text",),
        "action": ("text",),
        "target": ("text",),
        "risk_class": ("text",),
        "outcome": ("text",),
        "detail": ("jsonb",),
        "created_at": ("timestamp with time zone",),
    },
    "nomos_plans": {
        "id": ("uuid",),
        "session_id": ("uuid",),
        "goal": ("text",),
        "status": ("text",),
        "created_at": ("timestamp with time zone",),
    },
    "nomos_plan_steps": {
        "id": ("bigint",),
        "plan_id": ("uuid",),
        "seq": ("integer",),
        "generation": ("integer",),
        "title": ("text",),
        "tool": ("text",),
        "args": ("jsonb",),
        "risk_class": ("text",),
        "status": ("text",),
        "created_at": ("timestamp with time zone",),
        "updated_at": ("timestamp with time zone",),
    },
    "nomos_plan_executions": {
        "id": ("bigint",),
        "session_id": ("uuid",),
        "plan_id": ("uuid",),
        "step_id": ("bigint",),
        "tool": ("text",),
        "command": ("text",),
        "status": ("text",),
        "requested_at": ("timestamp with time zone",),
        "decided_at": ("timestamp with time zone",),
        "started_at": ("timestamp with time zone",),
        "finished_at": ("timestamp with time zone",),
        "error": ("text",),
    },
    "schema_migrations": {
        "version": ("integer", "bigint"),
        "applied_at": ("timestamp with time zone",),
    },
}

# Types that still work, with a note: the tool casts json to jsonb in its queries. Session ids
# stored as text are not among them: every query compares them with a uuid parameter.
TOLERATED_TYPES: dict[tuple[str, str], tuple[str, ...]] = {
    ("messages", "content"): ("json",),
    ("audit_log", "detail"): ("json",),
    ("nomos_plan_steps", "args"): ("json",),
    ("messages", "id"): ("integer",),
}

# What every session-level command (review, scan, sessions) reads: the one source of truth
# doctor's verdict and each command's check share. Every column sql/queries/session_row,
# scan_sessions and list_sessions select must be here (tests drop each one in turn).
CORE_REQUIREMENTS: dict[str, frozenset[str]] = {
    "sessions": frozenset({"id", "title", "status", "goal", "model", "created_at", "updated_at"}),
    "messages": frozenset({"id", "session_id", "role", "content", "created_at"}),
}


@dataclass
class SchemaReport:
    """What the live database has, compared with the contract."""

    columns: dict[str, dict[str, str]]  # table -> column -> live type
    migration: int | None
    missing_tables: list[str] = field(default_factory=list)
    missing_columns: list[tuple[str, str]] = field(default_factory=list)
    type_mismatches: list[tuple[str, str, str, str]] = field(default_factory=list)  # t, c, want, got
    tolerated: list[tuple[str, str, str, str]] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # columns the role may not SELECT
    # tables whose rows row-level security filters for this role -> the policies that apply to it
    row_security: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_columns(cls, columns: dict[str, dict[str, str]], migration: int | None) -> "SchemaReport":
        report = cls(columns=columns, migration=migration)
        for table, wanted in CONTRACT.items():
            live = columns.get(table)
            if live is None:
                report.missing_tables.append(table)
                continue
            for column, types in wanted.items():
                got = live.get(column)
                if got is None:
                    report.missing_columns.append((table, column))
                elif got not in types:
                    if got in TOLERATED_TYPES.get((table, column), ()):
                        report.tolerated.append((table, column, types[0], got))
                    else:
                        report.type_mismatches.append((table, column, types[0], got))
        return report

    def has(self, table: str, columns: Iterable[str] = ()) -> bool:
        live = self.columns.get(table)
        return live is not None and all(c in live for c in columns)

    def typed(self, table: str, column: str) -> bool:
        """Whether `column` exists with the contract's type (or a tolerated one)."""
        got = self.column_type(table, column)
        return got in CONTRACT[table][column] or got in TOLERATED_TYPES.get((table, column), ())

    def column_type(self, table: str, column: str) -> str | None:
        return self.columns.get(table, {}).get(column)

    def unmet(self, requirements: Mapping[str, Iterable[str]]) -> list[str]:
        """Human reasons why `requirements` (table -> columns) are not met; empty when they are."""
        reasons = []
        for table, needed in requirements.items():
            live = self.columns.get(table)
            if live is None:
                reasons.append(f"table {table} is missing")
                continue
            absent = sorted(c for c in needed if c not in live)
            if absent:
                reasons.append(f"{table}.{', '.join(absent)} missing")
            denied = sorted(c for t, c in self.unreadable if t == table and c in needed)
            if denied and len(denied) == len([c for c in needed if c in live]):
                reasons.append(f"no SELECT privilege on {table}")
            elif denied:
                reasons.append(f"no SELECT privilege on {table}.{', '.join(denied)}")
            for column in sorted(needed):
                bad = [m for m in self.type_mismatches if m[0] == table and m[1] == column]
                reasons.extend(f"{t}.{c} is {got}, expected {want}" for t, c, want, got in bad)
        if reasons and self.migration is not None and self.migration < CONTRACT_MIGRATION:
            reasons.append(f"database is at migration {self.migration:03d}")
        return reasons

    @property
    def core_problems(self) -> list[str]:
        return self.unmet(CORE_REQUIREMENTS)

    @property
    def compatible(self) -> bool:
        return not self.core_problems


def reflect(conn: sa.Connection, database) -> SchemaReport:
    """Read the live schema once (one catalog query) and compare it with the contract."""
    rows = database.query(
        conn, "reflect_columns", {"tables": list(CONTRACT)}, purpose="reading the schema"
    )
    columns: dict[str, dict[str, str]] = {}
    unreadable, row_security = [], {}
    for row in rows:
        columns.setdefault(row.table_name, {})[row.column_name] = row.data_type
        if not row.readable:
            unreadable.append((row.table_name, row.column_name))
        if row.row_security:
            row_security[row.table_name] = int(row.policies)
    report = SchemaReport.from_columns(columns, None)
    report.unreadable, report.row_security = unreadable, row_security
    if report.typed("schema_migrations", "version") and not report.unmet({"schema_migrations": ("version",)}):
        migration_rows = database.query(conn, "migration_version", purpose="reading schema_migrations")
        report.migration = migration_rows[0].version if migration_rows else None
    return report
