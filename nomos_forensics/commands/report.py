"""`nomos-forensics report`: the scan, as one offline HTML file (charts, tables, session pages)."""

from __future__ import annotations

import functools
import json
import os
import stat
import sys
import tempfile
from datetime import timezone

import click
import psycopg.conninfo

from ..clikit import MAX_COUNT, App, connection_options, pass_app, rule_options, since_option, warn
from ..devdb import DEMO_DB_PREFIX
from ..engine import load_session, review
from ..errors import ConfigError, ExitCode, SessionNotFound
from ..render import Format, card_json
from ..report import DEFAULT_LISTED, DEFAULT_TRANSCRIPTS, ReportSummary, report_page
from ..report.page import PERIODS, TOP_GROUPS
from ..rule import Severity
from ..scan import (
    ScanFilters,
    ShardError,
    card_results,
    count_sessions,
    describe_filters,
    parallel_scan,
    read_shards,
    scan_settings,
    session_span,
    settle_memory,
    stream_sessions,
)
from .scan import emit, gate_on_nothing, jobs_option, nothing_matched, open_ruleset, resolve_jobs, scan_job

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
@click.option("--period", type=click.Choice(PERIODS), default=None,
              help="The rate chart's period (default: day, week or month, from the span the sessions cover).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="report.html",
              show_default=True, help="Where to write the HTML file ('-' for stdout).")
@click.argument("shards", nargs=-1, type=click.Path(dir_okay=False), metavar="[SHARD.jsonl...]")
@pass_app
def report(app: App, since, until, status, model, jobs, transcripts: int, listed: int, period: str | None,
           output: str, shards: tuple[str, ...], selection) -> int:
    """Write one self-contained HTML report: signature rates over time and by model, tools,
    sizes, the worst sessions and their annotated transcripts. Made in scan's single pass, or
    from the shard files of one `scan --shard K/N` (the database is then read only for the
    transcripts carried)."""
    factory = functools.partial(ReportSummary, transcripts=transcripts, listed=max(listed, 0))
    if shards:
        ctx = click.get_current_context()
        given = [f"--{name.replace('_', '-')}" for name in ("since", "until", "status", "model", "jobs", "fail_on")
                 if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE]
        if given:
            raise click.UsageError(f"{', '.join(given)}: the shards were scanned with their own filters")
        summary, html, code = _from_shards(app, list(shards), factory, selection, period)
    else:
        summary, html, code = _from_database(app, since, until, status, model, jobs, factory, selection, period)
        if code == ExitCode.INTERRUPTED:
            return int(code)
    _write(output, html, private=not _is_demo(app))
    if output != "-":
        click.echo(f"nomos-forensics: wrote {output} ({len(html.encode('utf-8')) / 1e6:.1f} MB, "
                   f"{summary.sessions} sessions, {min(transcripts, len(summary.transcript_map()))} transcripts)",
                   err=True)
    return int(code)


def _shown(since, until, status, model, selection) -> dict:
    """The scan's filters and rule selection, as the report's header lists them."""
    return {"since": since, "until": until, "status": status, "model": model,
            "select": ", ".join(selection.select) or None, "ignore": ", ".join(selection.ignore) or None}


def _from_database(app: App, since, until, status, model, jobs, factory, selection, period):
    db = app.db
    filters = ScanFilters(since=since, until=until, status=status, model=model)
    summary = factory()
    shown = _shown(_when(since), _when(until), status, model, selection)
    with db.connect("scanning sessions") as conn:
        schema, ruleset = open_ruleset(app, conn, selection)
        total = count_sessions(db, conn, filters)
        notice = None
        if total == 0:
            notice = _nothing(describe_filters(filters), session_span(db, conn))
        jobs = resolve_jobs(db, conn, jobs)
        if jobs == 1:
            settle_memory()
            cards = stream_sessions(db, conn, ruleset, filters, schema, manager=selection.registry.manager)
            results = (("", failed) for _, failed in card_results(cards, summary, selection.fail_on))
            code = emit(results, Format.TABLE, sys.stdout, total, interrupted=NOT_WRITTEN)
    if jobs > 1:
        job = scan_job(db, ruleset, filters, selection, summary_factory=factory, lines=False)
        code = emit(parallel_scan(job, jobs, summary), Format.TABLE, sys.stdout, total, interrupted=NOT_WRITTEN)
    if code == ExitCode.INTERRUPTED:
        return summary, "", code
    with db.connect("reading the worst sessions' tool outputs") as conn:
        examples = _group_examples(db, conn, summary, ruleset, schema, selection)
        html = report_page(db, conn, summary, shown, notice, period, examples)
    return summary, html, gate_on_nothing(code, total, selection.fail_on)


def _group_examples(db, conn, summary, ruleset, schema, selection) -> list:
    """The cards of the example sessions of the unexplained-failure groups the report shows,
    reviewed again (a session gone since the pass is left out: the group still lists its id)."""
    if summary.unexplained is None:
        return []
    summary.unexplained.show(selection.config.group_names, selection.config.muted_groups)
    groups = summary.unexplained.to_json(top=TOP_GROUPS)["groups"]
    cards = []
    for session_id in dict.fromkeys(e["id"] for g in groups for e in g["examples"]):
        try:
            session = load_session(db, conn, session_id, needs=ruleset.needs, schema=schema,
                                   logical_floor=ruleset.logical_floor)
        except SessionNotFound:
            continue
        cards.append(review(session, ruleset, query=db.rule_query(conn), schema=schema,
                            manager=selection.registry.manager))
    return cards


def _from_shards(app: App, paths: list[str], factory, selection, period):
    """The report of the scan the shard files hold, equal to the one `report` makes from the
    database over the same sessions: the summary merged from the trailers, the report's own
    aggregates from the card lines, and each carried transcript from its session reviewed again
    (same rules, checked first). A session whose card is no longer the shard's line (it changed
    since the scan, or is gone) keeps the shard's card and loses its transcript, with a warning."""
    merged = read_shards(paths)  # every file checked whole first
    settings = merged.shards[0].trailer["scan"]
    summary = factory()
    summary.merge(merged.summary)
    if summary.truncation is None:
        raise ShardError("these shards were written by an earlier nomos-forensics, without the figures a report "
                         "needs (truncation savings): run the scan --shard again")
    for line in merged.lines():
        summary.add_card_json(json.loads(line), line)
    db = app.db
    with db.connect("reading the worst sessions") as conn:
        schema, ruleset = open_ruleset(app, conn, selection)
        _same_rules(scan_settings(ruleset, selection.config, ScanFilters(), None), settings)
        changed = []
        for session_id, line in summary.pending_transcripts():
            try:
                session = load_session(db, conn, session_id, needs=ruleset.needs, schema=schema,
                                       logical_floor=ruleset.logical_floor)
                card = review(session, ruleset, query=db.rule_query(conn), schema=schema,
                              manager=selection.registry.manager)
            except SessionNotFound:
                card = None
            if card is None or card_json(card, indent=None) != line:
                changed.append(session_id)  # a live replica moves on: that transcript is not the scan's
                summary.leave_out_transcript(session_id)
            else:
                summary.carry_transcript(card)
        if changed:
            warn(f"{len(changed)} of the carried sessions changed since the scan or are gone (first: {changed[0]}); "
                 "their transcripts are left out, their cards are the shards'")
        filters = settings["filters"]
        shown = _shown(filters["since"], filters["until"], filters["status"], filters["model"], selection)
        notice = None
        if merged.total == 0:
            notice = _nothing(", ".join(f"{k} {v}" for k, v in filters.items() if v is not None) or "no filter",
                              session_span(db, conn), shards=True)
        examples = _group_examples(db, conn, summary, ruleset, schema, selection)
        html = report_page(db, conn, summary, shown, notice, period, examples)
    fail_on = Severity.parse(settings["fail_on"]) if settings.get("fail_on") else None
    code = ExitCode.FINDINGS if merged.failed else ExitCode.OK
    return summary, html, gate_on_nothing(code, merged.total, fail_on)


def _when(moment) -> str | None:
    """A --since/--until as the header shows it: `2026-12-06 00:36 UTC`."""
    if moment is None:
        return None
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _nothing(selection: str, span, shards: bool = False) -> str:
    """An empty selection, said on stderr and returned for the report's header."""
    what = "the shards hold no sessions" if shards else "no sessions match"
    nothing_matched(selection, span, what=what)
    return f"{what[0].upper()}{what[1:]} ({selection}); {span.describe()}."


def _same_rules(mine: dict, theirs: dict) -> None:
    """The rules this report would run must be the ones the shards ran (their transcripts are
    reviewed again here)."""
    mine = json.loads(json.dumps(mine, default=str))  # as the trailer wrote them
    differ = [key for key in ("rules", "skipped", "grace_minutes") if mine[key] != theirs.get(key)]
    if differ:
        ran = ", ".join(rule[0] for rule in theirs.get("rules", []))
        raise ShardError(f"the shards ran other rules or options ({', '.join(differ)} differ; they ran {ran}): "
                         "give the scan's --select, --ignore, --plugin and --config")


def _is_demo(app: App) -> bool:
    """The demo's own databases (`nomos-forensics demo --keep`) hold only the sample sessions."""
    try:
        dbname = psycopg.conninfo.conninfo_to_dict(app.db.settings.conninfo).get("dbname") or ""
    except psycopg.Error:
        return False
    return str(dbname).startswith(DEMO_DB_PREFIX)


def _write(output: str, html: str, *, private: bool = True) -> None:
    """Write the file whole or not at all (a temporary file renamed into place; nothing is left
    behind whatever stops it). An existing file keeps its mode; a new one is readable by its
    owner only (`private`: it carries transcripts), else as open() would make it. A FIFO or a
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
        if os.path.exists(target):
            mode = stat.S_IMODE(os.stat(target).st_mode)
        elif private:
            mode = 0o600
        else:
            mask = os.umask(0)
            os.umask(mask)
            mode = 0o666 & ~mask
        fd, tmp = tempfile.mkstemp(prefix=".nomos-forensics-", suffix=".html", dir=os.path.dirname(target))
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(html)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        tmp = None
    except OSError as error:
        raise ConfigError(f"cannot write {output}: {error.strerror or error}") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
