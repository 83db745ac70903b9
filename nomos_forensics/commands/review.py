"""`nomos-forensics review SESSION`: the runbook's review card for one session."""

from __future__ import annotations

import click

from ..clikit import App, connection_options, echo, format_option, pass_app, rule_options, warn, wide_option
from ..engine import fail_on_reached, load_session, resolve_session_id
from ..engine import review as review_session
from ..errors import ExitCode, SchemaMismatch
from ..render import Format, render_card


def require_compatible(schema) -> None:
    """Refuse a database the session commands cannot read; warn once when row-level security
    hides rows from this role (what it hides is neither reviewed nor counted)."""
    if not schema.compatible:
        raise SchemaMismatch(
            "not a usable Nomos database: " + "; ".join(schema.core_problems),
            hint="run `nomos-forensics doctor`",
        )
    if schema.row_security:
        warn(f"row-level security filters {row_security_text(schema.row_security)} for this role: the rows it hides are "
             "not read (connect as a role with BYPASSRLS, or see `nomos-forensics doctor`)")


def row_security_text(tables: dict[str, int]) -> str:
    """`messages (2 policies), sessions (1 policy)`: the tables row-level security filters."""
    return ", ".join(f"{table} ({n} polic{'y' if n == 1 else 'ies'})" for table, n in sorted(tables.items()))


@click.command()
@connection_options
@rule_options
@wide_option
@format_option(Format.TEXT, Format.MARKDOWN, Format.JSON, Format.HTML, default=Format.TEXT)
@click.argument("session_ref", metavar="SESSION")
@pass_app
def review(app: App, session_ref: str, fmt: Format, selection) -> int:
    """Review one session (full uuid or unique prefix of at least 4 hex characters)."""
    db = app.db
    with db.connect("reviewing the session") as conn:
        schema = app.schema(conn)
        require_compatible(schema)
        ruleset = selection.build(schema)
        session_id = resolve_session_id(db, conn, session_ref)
        session = load_session(
            db, conn, session_id, needs=ruleset.needs, schema=schema, logical_floor=ruleset.logical_floor
        )
        card = review_session(
            session, ruleset, query=db.rule_query(conn), schema=schema, manager=selection.registry.manager
        )
        if fmt == Format.HTML:  # the report's session page: card, then the annotated transcript
            from ..report import session_page

            page = session_page(db, conn, card)
    echo(page if fmt == Format.HTML else render_card(card, fmt))
    if card.errors or fail_on_reached([card], selection.fail_on):
        return int(ExitCode.FINDINGS)
    return int(ExitCode.OK)
