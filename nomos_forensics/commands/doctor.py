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
        "compatible": schema.compatible,
        "problems": schema.core_problems,
    }
    if can_write["possible"]:
        warn(f"the role can write ({_write_reason(can_write)}); only read-only mode stops it:"
             " connect as a SELECT-only role (README, Safety)")
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
    for skipped in r["unavailable"]:
        lines.append(f"unavailable:       {skipped['rule']} ({skipped['reason']})")
    if r["compatible"]:
        lines.append(f"schema:            {yes if not r['unavailable'] and not r['missing_tables'] else 'usable, with gaps above'}")
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
