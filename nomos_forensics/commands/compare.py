"""`nomos-forensics compare`: did a release fix it? Every signature's session rate before and
after a point (a date, or when a migration was applied) or between two ranges, from one scan."""

from __future__ import annotations

import json
import re
import sys
from datetime import datetime

import click

from ..clikit import (
    MAX_COUNT,
    App,
    connection_options,
    echo,
    format_option,
    parse_since,
    pass_app,
    rule_options,
    since_option,
    warn,
    wide_option,
)
from ..compare import (
    DEFAULT_MIN_SESSIONS,
    ENOUGH,
    FEW,
    NONE,
    TOO_FEW,
    Comparison,
    Periods,
    Window,
    compare,
    period_status,
)
from ..errors import ConfigError, ExitCode, ForensicsError
from ..facts import SessionFacts
from ..model import excerpt
from ..render import Format, output_width, table, to_json, wrap
from ..scan import (
    ScanFilters,
    Span,
    Summary,
    count_sessions,
    parallel_scan,
    read_shards,
    session_span,
    settle_memory,
    stream_sessions,
)
from ..trends import Series
from .scan import emit, jobs_option, open_ruleset, resolve_jobs, scan_job

_MIGRATION = re.compile(r"^\s*migration:(\d{1,9})\s*$", re.I)


def _window(value: str | None, option: str) -> Window | None:
    if value is None:
        return None
    if ".." not in value:
        raise click.BadParameter(f"{value!r} is not a range: write START..END (either side may be empty)",
                                 param_hint=f"'{option}'")
    start, end = (part.strip() or None for part in value.split("..", 1))
    window = Window(parse_since(start), parse_since(end))
    if window.start and window.end and window.start >= window.end:
        raise click.BadParameter(f"{value!r} ends before it starts", param_hint=f"'{option}'")
    return window


def _gate(value: str | None) -> list[str] | None:
    """--fail-on-regression: None (off), [] (every compared rule) or the rules named."""
    if value is None:
        return None
    return [] if value == "*" else [v.strip() for v in value.split(",") if v.strip()]


def migration_applied_at(app: App, conn, schema, version: int) -> datetime:
    tell = f"give the date instead: --at YYYY-MM-DD (when migration {version:03d} was deployed)"
    if not (schema.typed("schema_migrations", "version") and schema.typed("schema_migrations", "applied_at")):
        raise ConfigError(f"this database does not record when migrations were applied "
                          f"(no integer schema_migrations.version and timestamptz applied_at); {tell}")
    rows = app.db.query(conn, "migration_applied_at", {"version": version}, purpose="reading schema_migrations")
    if not rows:
        raise ConfigError(f"migration {version:03d} is not in schema_migrations (not applied here); {tell}")
    if rows[0].applied_at is None:
        raise ConfigError(f"schema_migrations has no applied_at for migration {version:03d}; {tell}")
    return rows[0].applied_at


@click.command("compare")
@connection_options
@rule_options
@click.option("--at", "at", default=None, metavar="DATE|migration:NNN",
              help="Split at this point: before it and after it (migration:020 reads when it was applied).")
@click.option("--before", "before", default=None, metavar="START..END", help="The before range (END excluded).")
@click.option("--after", "after", default=None, metavar="START..END", help="The after range (END excluded).")
@since_option(help="With --at: the before period starts here (default: the first session).")
@since_option("--until", help="With --at: the after period ends here (default: now).")
@click.option("--limit", type=click.IntRange(min=1, max=MAX_COUNT), default=None, help="Only the newest N matching sessions.")
@click.option("--status", default=None, help="Only sessions with this status.")
@click.option("--model", default=None, help="Only sessions of this model.")
@jobs_option()
@click.option("--min-sessions", type=click.IntRange(min=1, max=MAX_COUNT), default=DEFAULT_MIN_SESSIONS,
              show_default=True, help="Fewer sessions than this in either period: 'too few sessions'.")
@click.option("--fail-on-regression", "gate", default=None, is_flag=False, flag_value="*", metavar="[RULE,…]",
              help="Exit 1 when a signature (all, or these rules) regressed significantly.")
@wide_option
@format_option(Format.TABLE, Format.MARKDOWN, Format.JSON, default=Format.TABLE)
@click.argument("shards", nargs=-1, type=click.Path(dir_okay=False), metavar="[SHARD.jsonl...]")
@pass_app
def compare_command(app: App, at, before, after, since, until, limit, status, model, jobs,
                    min_sessions: int, gate, fmt: Format, shards: tuple[str, ...], selection) -> int:
    """Compare every signature's rate before and after a release, adjusted for the model mix
    (from the database, or from the shard files of one `scan --shard K/N`)."""
    if (at is None) == (before is None and after is None) or (before is None) != (after is None):
        raise click.UsageError("give --at DATE|migration:NNN, or both --before RANGE and --after RANGE")
    ctx = click.get_current_context()
    if ctx.get_parameter_source("fail_on") == click.core.ParameterSource.COMMANDLINE:
        # scan's gate on findings would be silently ignored here: say which gate compare has
        raise click.UsageError("--fail-on gates scan's findings; compare's gate is --fail-on-regression [RULE,…]")
    before_w, after_w = _window(before, "--before"), _window(after, "--after")
    rules_gated = _gate(gate)
    if shards:
        given = [f"--{name.replace('_', '-')}" for name in ("limit", "status", "model", "jobs", "select", "ignore")
                 if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE]
        if given:
            raise click.UsageError(f"{', '.join(given)}: the shards were scanned with their own filters and rules")
        if at is not None and _MIGRATION.match(at):
            raise click.UsageError("with shard files give --at a date: when a migration was applied is in the database")
        series, split, code, names = _from_shards(list(shards), at, before_w, after_w, since, until)
    else:
        series, split, code, names = _from_database(app, at, before_w, after_w, since, until, limit, status, model,
                                                    jobs, selection, rules_gated)
    if code == ExitCode.INTERRUPTED:
        return int(code)
    gated = _resolve(rules_gated, names)
    result = compare(series, min_sessions=min_sessions, split=split)
    note = thin_note(result.data)
    if note is not None:  # said on stderr too, whatever the format: a script reading JSON sees it
        held = f"; {span.describe()}" if (span := _span(app, shards)) is not None and NONE in (
            _status(result.data, "before"), _status(result.data, "after")) else ""
        warn(note[0].lower() + note[1:].rstrip(".") + held)
    if fmt == Format.JSON:
        echo(to_json(result.data))
    else:
        for heading, headers, rows in comparison_tables(result):
            echo(f"## {heading}" if fmt == Format.MARKDOWN else "\n".join(wrap(heading, output_width())))
            echo(table(rows, headers, fmt) if rows else "(none)")
            echo()
    errors = result.data["before"]["rule_errors"] + result.data["after"]["rule_errors"]
    if errors:
        warn(f"rules raised errors on {errors} sessions (run `scan` to see them)")
    if gated is not None and result.regressed(gated or None):
        click.echo(f"nomos-forensics: regressed: {', '.join(result.regressed(gated or None))}", err=True)
        return int(ExitCode.FINDINGS)
    if gated is not None and not (result.data["before"]["sessions"] and result.data["after"]["sessions"]):
        return int(ExitCode.NOTHING_MATCHED)  # a gate over an empty period passes nothing
    return int(ExitCode.FINDINGS if errors else ExitCode.OK)


def _span(app: App, shards) -> "Span | None":
    """What the database holds (None from shard files: the database is not read)."""
    if shards:
        return None
    with app.db.connect("reading which days the sessions cover") as conn:
        return session_span(app.db, conn)


def _periods(at, before_w, after_w, since, until, applied_at=None) -> tuple[Periods, dict | None]:
    """The two periods and, with --at, where the split comes from (`applied_at`: a migration's
    (version, time), when --at names one)."""
    split = None
    if at is not None:
        if applied_at is not None:
            version, point = applied_at
            split = {"at": point.isoformat(), "source": f"migration {version:03d} applied_at"}
        else:
            try:
                point = parse_since(at)
            except click.BadParameter as error:
                raise click.BadParameter(error.message, param_hint="'--at'") from None
            split = {"at": point.isoformat(), "source": "--at"}
        before_w, after_w = Window(since, point), Window(point, until)
    elif before_w.overlaps(after_w):
        raise click.UsageError("--before and --after overlap")
    return Periods(before_w, after_w), split


def _from_database(app: App, at, before_w, after_w, since, until, limit, status, model, jobs, selection, gated):
    """The series of the two periods from one pass over the database (as `scan` makes it);
    `gated` (the --fail-on-regression rules) is checked against the rules before the pass."""
    db = app.db
    with db.connect("comparing sessions") as conn:
        schema, ruleset = open_ruleset(app, conn, selection)
        migration = _MIGRATION.match(at) if at is not None else None
        applied = None
        if migration:
            version = int(migration.group(1))
            applied = (version, migration_applied_at(app, conn, schema, version))
        periods, split = _periods(at, before_w, after_w, since, until, applied)
        lower, upper = periods.bounds()
        filters = ScanFilters(since=_later(lower, since), until=_earlier(upper, until), status=status, model=model, limit=limit)
        series = Series(periods, rules=[active.rule.name for active in ruleset.active], groups=True)
        names = [(active.rule.name, active.rule.code) for active in ruleset.active]
        _resolve(gated, names)  # a rule that is not compared: said now, not after the pass
        total = count_sessions(db, conn, filters)
        jobs = resolve_jobs(db, conn, jobs)
        if jobs == 1:
            settle_memory()
            cards = stream_sessions(db, conn, ruleset, filters, schema, manager=selection.registry.manager)
            code = emit(_counted(cards, series), Format.TABLE, sys.stdout, total)
    if jobs > 1:
        job = scan_job(db, ruleset, filters, selection, fail_on=None, series=series)
        code = emit(parallel_scan(job, jobs, Summary(series=series)), Format.TABLE, sys.stdout, total)
    return series, split, code, names


def _from_shards(paths: list[str], at, before_w, after_w, since, until):
    """The same series from the shard files of one `scan --shard K/N` (checked whole, as
    `merge` checks them): the database is not read again."""
    merged = read_shards(paths)
    periods, split = _periods(at, before_w, after_w, since, until)
    rules = merged.shards[0].trailer["scan"]["rules"]
    series = Series(periods, rules=[rule[1] for rule in rules], groups=True)
    for line in merged.lines():
        series.add_facts(SessionFacts.of_json(json.loads(line)))
    return series, split, ExitCode.OK, [(rule[1], rule[0]) for rule in rules]


def _counted(cards, series: Series):
    """Each card into the series only (no scan summary, no card JSON): (line, failed) for emit."""
    for card in cards:
        series.add(card)
        yield "", bool(card.errors)


def _later(a, b):
    return b if a is None else a if b is None else max(a, b)


def _earlier(a, b):
    return b if a is None else a if b is None else min(a, b)


def _resolve(names: list[str] | None, compared: list[tuple[str, str]]) -> list[str] | None:
    """Rule names for the gate (`compared`: the (name, code) of each rule compared): [] means
    all; a name or code that is not compared is an error."""
    if not names:
        return names
    known = {key.lower(): name for name, code in compared for key in (name, code)}
    unknown = [n for n in names if n.lower() not in known]
    if unknown:
        raise ForensicsError(f"--fail-on-regression: {', '.join(unknown)} is not among the rules compared")
    return [known[n.lower()] for n in names]


def _pct(rate: float | None) -> str:
    return "" if rate is None else f"{100 * rate:.1f}%"


def _pts(change: float | None) -> str:
    return "" if change is None else f"{100 * change:+.1f} pts"


def _interval(pair) -> str:
    return "" if not pair or pair[0] is None else f"[{100 * pair[0]:+.1f}, {100 * pair[1]:+.1f}]"


def _p(value: float | None) -> str:
    return "" if value is None else f"{value:.2g}"


def _status(d: dict, name: str) -> str:
    """A period's status (`ok`, `too few`, `no sessions`), also for a document of an older version."""
    return d[name].get("status") or period_status(d[name]["sessions"], d["method"]["min_sessions"])


def _side(k: int, n: int, rate: float | None, status: str) -> str:
    """One period's cell: `2 of 21 (9.5%)`; without the rate below --min-sessions; `no sessions`."""
    if status == NONE:
        return NONE
    return f"{k} of {n}" if status == FEW else f"{k} of {n} ({_pct(rate)})"


def thin_note(d: dict) -> str | None:
    """One line saying why no rate is compared, or None when both periods have enough sessions."""
    statuses = {name: _status(d, name) for name in ("before", "after")}
    if all(st == ENOUGH for st in statuses.values()):
        return None
    empty = [name for name, st in statuses.items() if st == NONE]
    if empty:
        return (f"No sessions {' and '.join(empty)} the split: nothing to compare "
                f"({d['before']['sessions']} before, {d['after']['sessions']} after).")
    return (f"Too few sessions for rates: {d['before']['sessions']} before, {d['after']['sessions']} after; "
            f"each period needs --min-sessions {d['method']['min_sessions']}.")


def comparison_tables(result: Comparison):
    """(heading, headers, rows) for people: periods, signatures with verdicts, model mix, by model.
    Below --min-sessions in either period the cells give counts (`2 of 21`) and `too few` instead
    of rates and changes; an empty period reads `no sessions`."""
    d = result.data
    status = {name: _status(d, name) for name in ("before", "after")}
    thin = any(st != ENOUGH for st in status.values())
    gap = NONE if NONE in status.values() else FEW
    periods = []
    for name in ("before", "after"):
        p = d[name]
        span = Window(_parse(p["from"]), _parse(p["until"])).describe()
        periods.append([name, span, p["sessions"] if p["sessions"] else NONE, p["messages"]])
    if d["split"]:
        periods.append(["split", f"{d['split']['at']} ({d['split']['source']})", "", ""])
    signatures = []
    for s in d["signatures"]:
        if not (s["before"]["sessions"] or s["after"]["sessions"]):
            continue
        sides = [_side(s[name]["sessions"], d[name]["sessions"], s[name]["rate"], status[name]) for name in ("before", "after")]
        if thin:  # no rate, so no change, interval or test: those columns are left out
            signatures.append([s["rule"], *sides, gap, s["verdict"]])
            continue
        change = f"{_pts(s['change'])} {_interval(s['interval'])}".strip()
        adjusted = f"{_pts(s['adjusted']['change'])} (p {_p(s['adjusted']['p_value'])})" if s["adjusted"]["change"] is not None else ""
        signatures.append([s["rule"], *sides, change,
                           "" if s["relative_change"] is None else f"{100 * s['relative_change']:+.0f}%",
                           _p(s["p_value"]), adjusted, _p(s["q_value"]), s["verdict"]])
    quiet = [s["rule"] for s in d["signatures"] if not (s["before"]["sessions"] or s["after"]["sessions"])]
    tables = [
        ("Periods", ["period", "sessions created", "sessions", "messages"], periods),
        ("Signatures: sessions with each, before and after; the change in points with its 95% Newcombe "
         "interval and Fisher's p; the change adjusted for the model mix (Mantel–Haenszel, CMH p); "
         "Benjamini–Hochberg q" + (f". {thin_note(d)}" if thin else ""),
         ["rule", "before", "after", "change", "verdict"] if thin else
         ["rule", "before", "after", "change [95% interval]", "relative", "p", "adjusted", "q", "verdict"],
         signatures),
    ]
    verdict_notes = [[s["rule"], s["verdict"], s["reason"]] for s in d["signatures"]
                     if (s["before"]["sessions"] or s["after"]["sessions"]) and s["verdict"] != TOO_FEW]
    if verdict_notes:
        tables.append(("Why", ["rule", "verdict", "because"], verdict_notes))
    if quiet:
        tables.append(("Not seen in either period", ["rules"], [[", ".join(quiet)]]))
    groups = [[g["group"], excerpt(g["description"], 60), *(_side(g[name]["sessions"], d[name]["sessions"], g[name]["rate"],
                                                          status[name]) for name in ("before", "after")),
               "" if thin else f"{_pts(g['change'])} (q {_p(g['q_value'])})", g["verdict"]]
              for g in d.get("unexplained_groups") or ()]
    if groups:
        tables.append(("Unexplained failure groups (docs/unexplained.md): the largest, tested as the signatures are",
                       ["group", "what they share", "before", "after", "change", "verdict"], groups))
    tables.append(("Model mix", ["model", "before", "after"], [
        [m["model"], *(_side(m[name]["sessions"], d[name]["sessions"], m[name]["share"], status[name])
                       for name in ("before", "after"))] for m in d["models"]]))
    tables.append(("By model", ["rule", "model", "before", "after", "change"], [
        [s["rule"], m["model"], *(_side(m[name]["sessions"], m[name]["of"], m[name]["rate"],
                                        status[name] if thin else ENOUGH) if m[name]["of"] else NONE
                                  for name in ("before", "after")),
         "" if thin else _pts(m["change"])]
        for s in d["signatures"] for m in s["by_model"]]))
    return tables


def _parse(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)
