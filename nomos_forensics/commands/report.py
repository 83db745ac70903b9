"""`nomos-forensics report`: the scan, as one offline HTML file (charts, tables, session pages)."""

from __future__ import annotations

import functools
import os
import stat
import sys
import tempfile

import click

from ..clikit import MAX_COUNT, App, connection_options, pass_app, rule_options, since_option
from ..errors import ConfigError, ExitCode
from ..render import Format
from ..report import DEFAULT_LISTED, DEFAULT_TRANSCRIPTS, ReportSummary, report_page
from ..scan import ScanFilters, card_results, count_sessions, parallel_scan, settle_memory, stream_sessions
from .scan import emit, jobs_option, open_ruleset, resolve_jobs, scan_job

NOT_WRITTEN = "; no report written"


@click.command()
@connection_options
@rule_options
@since_option()
@since_option("--until", help="Only sessions created before DATE or span ago.")
@click.option("--status", default=None, help="Only sessions with this status.")
@click.option("--model", default=None, help="Only sessions of this model.")
@jobs_option()
@click.option("--transcripts", type=click.IntRange(min=0, max=MAX_COUNT), default=DEFAULT_TRANSCRIPTS,
              show_default=True, metavar="N", help="Carry the transcripts of the N worst sessions.")
@click.option("--sessions", "listed", type=click.IntRange(min=0, max=MAX_COUNT), default=DEFAULT_LISTED,
              show_default=True, metavar="N",
              help="List the N worst sessions with their card (plus each signature's 20 worst).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="report.html",
              show_default=True, help="Where to write the HTML file ('-' for stdout).")
@pass_app
def report(app: App, since, until, status, model, jobs, transcripts: int, listed: int, output: str,
           selection) -> int:
    """Write one self-contained HTML report: signature rates over time and by model, tools,
    sizes, the worst sessions and their annotated transcripts. Made in scan's single pass."""
    db = app.db
    filters = ScanFilters(since=since, until=until, status=status, model=model)
    factory = functools.partial(ReportSummary, transcripts=transcripts, listed=max(listed, 0))
    summary = factory()
    shown = {
        "since": since.isoformat() if since else None, "until": until.isoformat() if until else None,
        "status": status, "model": model, "select": ", ".join(selection.select) or None,
        "ignore": ", ".join(selection.ignore) or None,
    }
    with db.connect("scanning sessions") as conn:
        schema, ruleset = open_ruleset(app, conn, selection)
        total = count_sessions(db, conn, filters)
        jobs = resolve_jobs(db, conn, jobs)
        if jobs == 1:
            settle_memory()
            cards = stream_sessions(db, conn, ruleset, filters, schema, manager=selection.registry.manager)
            results = (("", failed) for _, failed in card_results(cards, summary, selection.fail_on))
            code = emit(results, Format.TABLE, sys.stdout, total, interrupted=NOT_WRITTEN)
    if jobs > 1:
        db.dispose()  # no connection may cross the fork
        job = scan_job(db, filters, selection, summary_factory=factory, lines=False)
        code = emit(parallel_scan(job, jobs, summary), Format.TABLE, sys.stdout, total, interrupted=NOT_WRITTEN)
    if code == ExitCode.INTERRUPTED:
        return int(code)
    with db.connect("reading the worst sessions' tool outputs") as conn:
        html = report_page(db, conn, summary, shown)
    _write(output, html)
    if output != "-":
        click.echo(f"nomos-forensics: wrote {output} ({len(html.encode('utf-8')) / 1e6:.1f} MB, "
                   f"{summary.sessions} sessions, {min(transcripts, len(summary.transcript_map()))} transcripts)",
                   err=True)
    return int(code)


def _write(output: str, html: str) -> None:
    """Write the file whole or not at all (a temporary file renamed into place). A FIFO or a
    device (/dev/null) is written into, since renaming over it would replace it; a symlink's
    target is replaced, not the link."""
    if output == "-":
        sys.stdout.write(html)
        sys.stdout.flush()
        return
    tmp = None
    try:
        if os.path.exists(output) and not stat.S_ISREG(os.stat(output).st_mode):
            with open(output, "w", encoding="utf-8") as handle:
                handle.write(html)
            return
        target = os.path.realpath(output)
        fd, tmp = tempfile.mkstemp(prefix=".nomos-forensics-", suffix=".html", dir=os.path.dirname(target))
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(html)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # as open() would have made it, not mkstemp's 0600
        os.replace(tmp, target)
    except OSError as error:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        raise ConfigError(f"cannot write {output}: {error.strerror or error}") from None
