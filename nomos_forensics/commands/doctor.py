"""`nomos-forensics doctor`: can this database be reviewed, and what will be unavailable?"""

from __future__ import annotations

import click

from .. import plugins as plugins_mod
from ..clikit import App, connection_options, echo, format_option, pass_app, warn
from ..config import Config
from ..engine import build_ruleset
from ..errors import ExitCode
from ..render import Format, to_json
from ..schema import CONTRACT, CONTRACT_MIGRATION, SchemaReport
from .review import row_security_text


def feature_report(schema: SchemaReport) -> list[dict[str, str]]:
    """Every known rule, and for those that cannot run here, why."""
    registry = plugins_mod.load()
    ruleset = build_ruleset(registry, Config(), schema=schema)
    return ruleset.skipped


@click.command()
@connection_options
@format_option(Format.TEXT, Format.JSON, default=Format.TEXT)
@pass_app
def doctor(app: App, fmt: Format) -> int:
    """Check the connection, read-only mode and the schema against the Nomos contract."""
    db = app.db
    with db.connect("checking the server") as conn:
        info = db.query(conn, "server_info", purpose="reading server settings")[0]
        schema = app.schema(conn)
        privileges = db.query(conn, "role_privileges", {"tables": list(CONTRACT)}, purpose="reading the role's privileges")[0]
    standby = bool(info.in_recovery)
    can_write = {
        "possible": not standby and bool(privileges.superuser or privileges.writable),
        "superuser": bool(privileges.superuser),
        "standby": standby,
        "tables": list(privileges.writable),
    }
    skipped = feature_report(schema)
    report = {
        "schema_version": 1,
        "target": db.settings.describe(),
        "server_version": info.server_version,
        "standby": bool(info.in_recovery),
        "read_only": info.transaction_read_only == "on" and info.default_read_only == "on",
        "can_write": can_write,
        "statement_timeout": info.statement_timeout,
        "lock_timeout": info.lock_timeout,
        "migration": schema.migration,
        "contract_migration": CONTRACT_MIGRATION,
        "missing_tables": schema.missing_tables,
        "missing_columns": [f"{t}.{c}" for t, c in schema.missing_columns],
        "type_mismatches": [f"{t}.{c}: {got}, expected {want}" for t, c, want, got in schema.type_mismatches],
        "tolerated": [f"{t}.{c}: {got} (expected {want}; cast on read)" for t, c, want, got in schema.tolerated],
        "unavailable": skipped,
        "unreadable": [f"{t}.{c}" for t, c in schema.unreadable],
        "row_security": dict(sorted(schema.row_security.items())),
        "bypass_rls": bool(privileges.bypassrls),
        "encoding": _encoding(info.server_encoding),
        "timeout_warnings": _timeout_warnings(db.settings),
        "compatible": schema.compatible,
        "problems": schema.core_problems,
    }
    if can_write["possible"]:
        warn(f"the role can write ({_write_reason(can_write)}); only read-only mode stops it:"
             " connect as a SELECT-only role (docs/safety.md)")
    if fmt == Format.JSON:
        echo(to_json(report))
    else:
        echo(_text(report))
    return int(ExitCode.OK if schema.compatible else ExitCode.ENVIRONMENT)


def _text(r: dict) -> str:
    yes = click.style("ok", fg="green")
    lines = [
        f"target:            {r['target']}",
        f"server:            PostgreSQL {r['server_version']}",
        f"role:              {'standby (pg_is_in_recovery)' if r['standby'] else 'primary'}",
        f"read-only session: {'yes' if r['read_only'] else 'NO'}",
        f"can write:         {'YES: ' + _write_reason(r['can_write']) if r['can_write']['possible'] else _no_write(r['can_write'])}",
        f"timeouts:          statement {r['statement_timeout']}, lock {r['lock_timeout']}",
        f"migration:         {r['migration'] if r['migration'] is not None else 'unknown (no integer schema_migrations.version)'}"
        f" (contract: {r['contract_migration']:03d})",
    ]
    for table in r["missing_tables"]:
        lines.append(f"missing table:     {table}")
    for column in r["missing_columns"]:
        lines.append(f"missing column:    {column}")
    for mismatch in r["type_mismatches"]:
        lines.append(f"type mismatch:     {mismatch}")
    for tolerated in r["tolerated"]:
        lines.append(f"tolerated:         {tolerated}")
    lines.append(f"encoding:          {r['encoding']}")
    for warning in r["timeout_warnings"]:
        lines.append(f"timeout:           {warning}")
    lines.append(f"privileges:        {'no SELECT on ' + _unreadable_text(r) if r['unreadable'] else 'SELECT on every Nomos table'}")
    if r["row_security"]:
        lines.append(f"row security:      filters {row_security_text(r['row_security'])} for this role: "
                     "the rows it hides are not read (a role with BYPASSRLS reads them all)")
    else:
        lines.append(f"row security:      {'bypassed (BYPASSRLS)' if r['bypass_rls'] else 'no table filters this role'}")
    for skipped in r["unavailable"]:
        lines.append(f"unavailable:       {skipped['rule']} ({skipped['reason']})")
    if r["compatible"]:
        gaps = r["unavailable"] or r["missing_tables"] or r["unreadable"] or r["row_security"]
        lines.append(f"schema:            {'usable, with gaps above' if gaps else yes}")
    else:
        lines.append("schema:            INCOMPATIBLE: " + "; ".join(r["problems"]))
    return "\n".join(lines)


def _write_reason(can_write: dict) -> str:
    parts = ["superuser"] if can_write["superuser"] else []
    if can_write["tables"]:
        parts.append("write privileges on " + ", ".join(can_write["tables"]))
    return "; ".join(parts)


def _no_write(can_write: dict) -> str:
    if can_write["standby"]:
        return "no (a standby accepts no writes)"
    return "no (SELECT only on the Nomos tables)"


# A statement timeout under this is read as a mistake (milliseconds given as seconds?): the
# scan's queries each take longer than that on any real database
TIMEOUT_FLOOR_S = 1.0


def _timeout_warnings(settings) -> list[str]:
    warnings = []
    for name, value in (("statement", settings.statement_timeout_s), ("lock", settings.lock_timeout_s)):
        if value < TIMEOUT_FLOOR_S:
            warnings.append(f"{name} timeout {value:g}s is under {TIMEOUT_FLOOR_S:g}s: most queries will time out")
    return warnings


def _encoding(server_encoding: str) -> str:
    if server_encoding == "UTF8":
        return "UTF8"
    if server_encoding == "SQL_ASCII":
        return "SQL_ASCII (bytes read as UTF-8; what is not UTF-8 shows as U+FFFD)"
    return f"{server_encoding} (converted to UTF-8 by the server)"


def _unreadable_text(r: dict) -> str:
    """`audit_log, messages.content`: a table when no column of it can be read."""
    by_table: dict[str, list[str]] = {}
    for column in r["unreadable"]:
        table, name = column.split(".", 1)
        by_table.setdefault(table, []).append(name)
    return ", ".join(table if len(names) == len(CONTRACT.get(table, names)) else ", ".join(f"{table}.{n}" for n in names)
                     for table, names in by_table.items())
