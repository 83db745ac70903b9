"""`nomos-forensics scan`: review many sessions and summarise which failures dominate."""

from __future__ import annotations

import sys
import time

import click

from ..cli import App, cli, connection_options, echo, format_option, pass_app, rule_options, since_option
from ..engine import fail_on_reached
from ..errors import ConnectionLost, ExitCode, ForensicsError
from ..render import Format, card_json, table, to_json
from ..scan import ScanFilters, Summary, count_sessions, stream_sessions, summary_tables
from .review import require_compatible


class Progress:
    """`sessions done / total, rate` on stderr, only when stderr is a terminal."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.enabled = total, enabled
        self.done, self.start, self.shown = 0, time.monotonic(), 0.0

    def step(self) -> None:
        self.done += 1
        now = time.monotonic()
        if self.enabled and (now - self.shown >= 0.2 or self.done == self.total):
            self.shown = now
            rate = self.done / max(now - self.start, 1e-6)
            width = 30
            filled = int(width * self.done / self.total) if self.total else width
            sys.stderr.write(
                f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} sessions, {rate:,.0f}/s "
            )
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


@cli.command()
@connection_options
@rule_options
@since_option()
@since_option("--until", help="Only sessions created before DATE or span ago.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the newest N matching sessions.")
@click.option("--status", default=None, help="Only sessions with this status.")
@click.option("--model", default=None, help="Only sessions of this model.")
@format_option(Format.TABLE, Format.JSONL, Format.JSON, Format.MARKDOWN, default=Format.TABLE)
@pass_app
def scan(app: App, since, until, limit, status, model, fmt: Format, selection) -> int:
    """Review every matching session; summarise signatures, tools, models and sizes."""
    db = app.db
    filters = ScanFilters(since=since, until=until, status=status, model=model, limit=limit)
    summary = Summary()
    streaming = fmt in (Format.JSONL, Format.JSON)
    fail = False
    with db.connect("scanning sessions") as conn:
        schema = app.schema(conn)
        require_compatible(schema)
        ruleset = selection.build(schema)
        for skipped in ruleset.skipped:
            click.echo(f"nomos-forensics: note: {skipped['rule']} skipped: {skipped['reason']}", err=True)
        total = count_sessions(db, conn, filters)
        progress = Progress(total, enabled=sys.stderr.isatty())
        out = sys.stdout
        if fmt == Format.JSON:
            out.write('{"schema_version": 1, "cards": [')
        try:
            for card in stream_sessions(db, conn, ruleset, filters, schema, manager=selection.registry.manager):
                if fmt == Format.JSONL:
                    out.write(card_json(card, indent=None) + "\n")
                    out.flush()
                elif fmt == Format.JSON:
                    out.write(("," if summary.sessions else "") + "\n" + card_json(card, indent=None))
                summary.add(card)
                fail = fail or bool(card.errors) or fail_on_reached([card], selection.fail_on)
                progress.step()
        except ForensicsError as error:
            progress.close()
            if isinstance(error, ConnectionLost):
                raise ConnectionLost(f"{error.message}; {summary.sessions} of {total} sessions were done") from None
            raise
        except KeyboardInterrupt:
            progress.close()
            out.flush()
            click.echo(f"nomos-forensics: interrupted after {summary.sessions} of {total} sessions", err=True)
            return int(ExitCode.INTERRUPTED)
        progress.close()
    if fmt == Format.JSON:
        out.write('\n], "summary": ' + to_json(summary.to_json(), indent=None) + "}\n")
    elif not streaming:
        for heading, headers, rows in summary_tables(summary):
            if not rows:
                continue
            echo(f"## {heading}" if fmt == Format.MARKDOWN else heading)
            echo(table(rows, headers, fmt))
            echo()
    return int(ExitCode.FINDINGS if fail else ExitCode.OK)
