"""`nomos-forensics doctor`: can this database be reviewed, and what will be unavailable?"""

from __future__ import annotations

import click

from .. import plugins as plugins_mod
from ..cli import App, cli, connection_options, echo, format_option, pass_app
from ..config import Config
from ..engine import build_ruleset
from ..errors import ExitCode
from ..render import Format, to_json
from ..schema import CONTRACT_MIGRATION, SchemaReport


def feature_report(schema: SchemaReport) -> list[dict[str, str]]:
    """Every known rule, and for those that cannot run here, why."""
    registry = plugins_mod.load()
    ruleset = build_ruleset(registry, Config(), schema=schema)
    return ruleset.skipped


@cli.command()
@connection_options
@format_option(Format.TEXT, Format.JSON, default=Format.TEXT)
@pass_app
def doctor(app: App, fmt: Format) -> int:
    """Check the connection, read-only mode and the schema against the Nomos contract."""
    db = app.db
    with db.connect("checking the server") as conn:
        info = db.query(conn, "server_info", purpose="reading server settings")[0]
        schema = app.schema(conn)
    skipped = feature_report(schema)
    report = {
        "target": db.settings.describe(),
        "server_version": info.server_version,
        "standby": bool(info.in_recovery),
        "read_only": info.transaction_read_only == "on" and info.default_read_only == "on",
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
        f"timeouts:          statement {r['statement_timeout']}, lock {r['lock_timeout']}",
        f"migration:         {r['migration'] if r['migration'] is not None else 'unknown (no schema_migrations)'}"
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
