"""`nomos-forensics scan`: review many sessions and summarise which failures dominate."""

from __future__ import annotations

import sys
import threading
import time

import click

from ..clikit import (
    MAX_COUNT,
    App,
    connection_options,
    echo,
    format_option,
    pass_app,
    rule_options,
    since_option,
    warn,
    wide_option,
)
from ..errors import ExitCode, ForensicsError
from ..render import Format, card_json, table, to_json
from ..scan import (
    MAX_JOBS,
    ScanFilters,
    ScanJob,
    ShardRecorder,
    Summary,
    auto_jobs,
    card_results,
    count_sessions,
    describe_filters,
    parallel_scan,
    parse_shard,
    scan_settings,
    session_span,
    settle_memory,
    stream_sessions,
    summary_tables,
)
from ..trends import Series, TimeBuckets, parse_by
from .review import require_compatible


class JobsType(click.ParamType):
    """--jobs: a count from 1 to 64, or `auto`."""

    name = "N|auto"

    def convert(self, value, param, ctx):
        if isinstance(value, int) or value == "auto":
            return value
        try:
            number = int(str(value).strip())
        except ValueError:
            self.fail(f"{value!r} is neither a number of workers nor 'auto'", param, ctx)
        if not 1 <= number <= MAX_JOBS:
            self.fail(f"{value!r} is not between 1 and {MAX_JOBS}", param, ctx)
        return number


def jobs_option():
    """--jobs N|auto, the same for every command that makes the scan's pass (scan, compare, report)."""
    return click.option(
        "--jobs", "-j", type=JobsType(), default="1", show_default=True,
        help="Worker processes, each scanning a hash partition of the sessions on its own connection; "
             "`auto`: from the cores and the server's free connections.",
    )


def by_option(help: str):
    """--by day|week|month|model[,…], parsed (scan, and merge of scan's shards)."""
    return click.option("--by", default=None, metavar="day|week|month|model[,…]",
                        callback=lambda _c, _p, v: _parse_by(v), help=help)


def resolve_jobs(db, conn, jobs) -> int:
    """The worker count: `auto` worked out from the cores and the server, with a note on stderr."""
    if jobs != "auto":
        return jobs
    jobs, why = auto_jobs(db, conn)
    click.echo(f"nomos-forensics: note: --jobs auto: {jobs} worker{'s' if jobs > 1 else ''} ({why})", err=True)
    return jobs


def _shard_option(_ctx, _param, value):
    try:
        return parse_shard(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def _shard_format(fmt: Format) -> Format:
    """A shard is JSONL; a summary format is what `merge` prints from the shards."""
    ctx = click.get_current_context()
    if fmt != Format.JSONL and ctx.get_parameter_source("fmt") != click.core.ParameterSource.DEFAULT:
        raise click.UsageError(f"--shard writes a JSONL shard file; ask `merge --format {fmt.value}` for the {fmt.value} output")
    return Format.JSONL


class Progress:
    """`sessions done / total, rate` on stderr, only when stderr is a terminal."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.enabled = total, enabled
        self.done, self.start, self.shown = 0, time.monotonic(), 0.0
        self.lock = threading.Lock()  # the bar and the output lines take turns on a terminal
        self.drawn = False

    def clear(self) -> None:
        """Erase the bar (the caller holds `lock`), so that an output line starts a clean line."""
        if self.drawn:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self.drawn, self.shown = False, 0.0

    def step(self) -> None:
        self.done += 1
        now = time.monotonic()
        if self.enabled and (now - self.shown >= 0.2 or self.done == self.total):
            with self.lock:
                self._draw(now)

    def _draw(self, now: float) -> None:
        self.shown, self.drawn = now, True
        rate = self.done / max(now - self.start, 1e-6)
        width = 30
        filled = int(width * self.done / self.total) if self.total else width
        sys.stderr.write(
            f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} sessions, {rate:,.0f}/s "
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            with self.lock:
                if not self.drawn:  # erased for the last lines: the final figures once more
                    self._draw(time.monotonic())
            sys.stderr.write("\n")
            sys.stderr.flush()


@click.command()
@connection_options
@rule_options
@since_option()
@since_option("--until", help="Only sessions created before DATE or span ago.")
@click.option("--limit", type=click.IntRange(min=1, max=MAX_COUNT), default=None, help="Only the newest N matching sessions.")
@click.option("--status", default=None, help="Only sessions with this status.")
@click.option("--model", default=None, help="Only sessions of this model.")
@jobs_option()
@click.option("--shard", metavar="K/N", default=None, callback=_shard_option,
              help="Scan only hash partition K (0-based) of N and write a shard file (JSONL cards and a "
                   "trailer line) for `nomos-forensics merge`.")
@by_option("Print a series instead: sessions, messages and signature rates per day, week, month "
           "or model, or a combination such as week,model.")
@wide_option
@format_option(Format.TABLE, Format.JSONL, Format.JSON, Format.MARKDOWN, Format.CSV, default=Format.TABLE)
@pass_app
def scan(app: App, since, until, limit, status, model, jobs, shard, fmt: Format, selection, by=None) -> int:
    """Review every matching session; summarise signatures, tools, models and sizes."""
    db = app.db
    if shard is not None:
        if by:
            raise click.UsageError("--by prints a series, not a shard file: scan the whole period with --by, or merge the shards")
        fmt = _shard_format(fmt)
    index, count = shard or (0, 1)
    filters = ScanFilters(since=since, until=until, status=status, model=model, limit=limit,
                          partition=index, partitions=count)
    out = sys.stdout
    series = Series(TimeBuckets(by)) if by else None
    if fmt == Format.CSV and series is None:
        raise click.UsageError("--format csv is for a series: add --by")
    card_fmt = Format.TABLE if series is not None else fmt  # a series prints no cards
    with db.connect("scanning sessions") as conn:
        schema, ruleset = open_ruleset(app, conn, selection)
        total = count_sessions(db, conn, filters)
        if series is not None:
            series.rules = [active.rule.name for active in ruleset.active]
        recorder = None
        whole_total = total
        if shard is not None:
            whole = ScanFilters(**{**filters.__dict__, "partition": 0, "partitions": 1})
            settings = scan_settings(ruleset, selection.config, filters, selection.fail_on)
            whole_total = count_sessions(db, conn, whole)
            recorder = ShardRecorder(shard, settings, whole_total)
        if whole_total == 0:  # the scan's whole selection, not one shard's share of it
            nothing_matched(describe_filters(filters), session_span(db, conn))
        jobs = resolve_jobs(db, conn, jobs)
        if jobs == 1:
            settle_memory()
            summary = Summary(series=series)
            cards = stream_sessions(db, conn, ruleset, filters, schema, manager=selection.registry.manager)
            results = card_results(cards, summary, selection.fail_on)
            lines = (("" if series is not None else card_json(card, indent=None), failed) for card, failed in results)
            code = emit(recorder.lines(lines) if recorder else lines, card_fmt, out, total)
    if jobs > 1:
        job = scan_job(db, ruleset, filters, selection, series=series)
        summary = Summary(series=series)
        lines = parallel_scan(job, jobs, summary)
        code = emit(recorder.lines(lines) if recorder else lines, card_fmt, out, total)
    code = gate_on_nothing(code, whole_total, selection.fail_on)
    if summary.unexplained is not None:
        summary.unexplained.show(selection.config.group_names, selection.config.muted_groups)
    if series is not None:
        if code != ExitCode.INTERRUPTED:
            print_series(series, fmt, out)
        return int(code)
    if recorder is not None and code != ExitCode.INTERRUPTED:  # an interrupted shard has no trailer
        out.write(recorder.trailer(summary, failed=code == ExitCode.FINDINGS) + "\n")
        out.flush()
        return int(code)
    return finish(summary, fmt, out, code)


def nothing_matched(selection: str, span, what: str = "no sessions match") -> None:
    """The one line an empty selection gets on stderr: what was asked, and what the database holds."""
    warn(f"{what} ({selection}){'; ' + span.describe() if span is not None else ''}")


def gate_on_nothing(code: ExitCode, sessions: int, fail_on) -> ExitCode:
    """A gate (--fail-on) over no sessions passes nothing: exit NOTHING_MATCHED, not 0."""
    if sessions == 0 and fail_on is not None and code == ExitCode.OK:
        return ExitCode.NOTHING_MATCHED
    return code


def finish(summary: Summary, fmt: Format, out, code: ExitCode) -> int:
    """After the card lines: the summary in `fmt` (scan and merge print the same)."""
    if code == ExitCode.INTERRUPTED:
        if fmt == Format.JSON:  # close the document: the cards so far, no summary
            out.write('\n], "summary": null, "interrupted": true}\n')
            out.flush()
        return int(code)
    if fmt == Format.JSON:
        out.write('\n], "summary": ' + to_json(summary.to_json(), indent=None) + "}\n")
    elif fmt in (Format.TABLE, Format.MARKDOWN):
        for heading, headers, rows in summary_tables(summary):
            if rows:
                echo(f"## {heading}" if fmt == Format.MARKDOWN else heading)
                echo(table(rows, headers, fmt))
                echo()
    return int(code)


def _parse_by(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    try:
        return parse_by(value)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="'--by'") from None


def print_series(series: Series, fmt: Format, out) -> None:
    if fmt == Format.JSON:
        out.write(to_json(series.to_json()) + "\n")
    elif fmt == Format.JSONL:
        out.writelines(to_json(record, indent=None) + "\n" for record in series.jsonl_records())
    elif fmt == Format.CSV:
        out.write(series.to_csv())
    else:
        headers, rows = series.table()
        echo(table(rows, headers, fmt))
    out.flush()


class BatchedWriter:
    """Lines written to `out` in batches by a background thread, every FLUSH_EVERY_S.

    A write per card would be a system call per card, and each one hands the GIL to the
    reader thread; a batch every 0.1 s keeps the output streaming, also while one big
    session is being reviewed. `close()` writes everything still pending, whole lines only.
    """

    FLUSH_EVERY_S = 0.1

    def __init__(self, out, progress: Progress | None = None) -> None:
        self.out = out
        self._progress = progress  # erased before each batch when both share a terminal
        self._pending: list[str] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._error: Exception | None = None
        self._thread = threading.Thread(target=self._run, name="nomos-forensics-writer", daemon=True)
        self._thread.start()

    def write(self, text: str) -> None:
        if self._error is not None:  # a closed pipe: stop scanning at once
            raise self._error
        with self._lock:
            self._pending.append(text)

    def flush(self) -> None:
        with self._lock:
            if self._pending:
                if self._progress is not None:
                    with self._progress.lock:
                        self._progress.clear()
                        self._write()
                else:
                    self._write()
            self.out.flush()

    def _write(self) -> None:
        self.out.write("".join(self._pending))
        self._pending.clear()
        self.out.flush()

    def _run(self) -> None:
        while not self._closed.wait(self.FLUSH_EVERY_S):
            try:
                self.flush()
            except Exception as error:  # a closed pipe: the main thread meets it at its next write
                self._error = error
                return

    def close(self) -> None:
        self._closed.set()
        self._thread.join()
        if self._error is not None:
            raise self._error
        self.flush()


def _isatty(out) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


def open_ruleset(app: App, conn, selection) -> tuple:
    """The schema (checked usable) and the rule set for a pass; each skipped rule noted on stderr."""
    schema = app.schema(conn)
    require_compatible(schema)
    ruleset = selection.build(schema)
    for skipped in ruleset.skipped:
        click.echo(f"nomos-forensics: note: {skipped['rule']} skipped: {skipped['reason']}", err=True)
    return schema, ruleset


def scan_job(db, ruleset, filters: ScanFilters, selection, **fields) -> ScanJob:
    """What each `--jobs` worker needs to redo the pass on its partition (`fields`: ScanJob's
    extras), with the parent made ready to fork: no connection open (none may cross the fork),
    and what the rules only read loaded once, for every worker to share (`RuleSet.preload`)."""
    db.dispose()
    ruleset.preload()
    fields.setdefault("fail_on", selection.fail_on)
    return ScanJob(
        settings=db.settings, filters=filters, plugin_refs=tuple(selection.plugin_refs),
        config=selection.config, select=tuple(selection.select), ignore=tuple(selection.ignore), **fields,
    )


def emit(lines, fmt: Format, out, total: int, interrupted: str = "") -> ExitCode:
    """Write card lines as they come (jsonl/json; other formats drain them), drive the progress
    bar, map faults to exits. Every line received is written whole before this returns or raises.
    `interrupted` is added to the interrupt note (what the command will not do now)."""
    progress = Progress(total, enabled=sys.stderr.isatty())
    done, failed_any = 0, False
    writer = BatchedWriter(out, progress if progress.enabled and _isatty(out) else None)
    if fmt == Format.JSON:
        writer.write('{"schema_version": 1, "cards": [')
    try:
        for line, failed in lines:
            if fmt == Format.JSONL:
                writer.write(line + "\n")
            elif fmt == Format.JSON:
                writer.write(("," if done else "") + "\n" + line)
            done += 1
            failed_any = failed_any or failed
            progress.step()
    except KeyboardInterrupt:
        progress.close()
        writer.close()
        click.echo(f"nomos-forensics: interrupted after {done} of {total} sessions{interrupted}", err=True)
        return ExitCode.INTERRUPTED
    except BaseException as error:
        # what was written stays valid: whole JSONL lines, and a JSON document closed as incomplete
        progress.close()
        writer.close()
        if fmt == Format.JSON:
            out.write('\n], "summary": null, "incomplete": true}\n')
            out.flush()
        if isinstance(error, ForensicsError):
            error.message = f"{error.message}; {done} of {total} sessions were done"
        raise
    finally:
        writer.close()
    progress.close()
    return ExitCode.FINDINGS if failed_any else ExitCode.OK
