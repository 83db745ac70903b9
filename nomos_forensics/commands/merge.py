"""`nomos-forensics merge SHARD...`: the shard files of `scan --shard K/N` folded back into what
one `scan` process prints, in any of its formats, with its exit code."""

from __future__ import annotations

import json
import sys

import click

from ..clikit import format_option, wide_option
from ..errors import ExitCode
from ..facts import SessionFacts
from ..render import Format
from ..rule import Severity
from ..scan import read_shards
from ..trends import Series, TimeBuckets
from .scan import by_option, emit, finish, gate_on_nothing, nothing_matched, print_series


@click.command()
@click.argument("shards", nargs=-1, required=True, metavar="SHARD.jsonl...",
                type=click.Path(dir_okay=False))
@by_option("Print the series `scan --by` prints over the same sessions, from the shards' cards.")
@wide_option
@format_option(Format.TABLE, Format.JSONL, Format.JSON, Format.MARKDOWN, Format.CSV, default=Format.TABLE)
def merge(shards: tuple[str, ...], by, fmt: Format) -> int:
    """Merge the shard files of `scan --shard K/N` (every K once) into one scan's output."""
    if fmt == Format.CSV and not by:
        raise click.UsageError("--format csv is for a series: add --by")
    merged = read_shards(list(shards))  # checks every file whole before a line is printed
    out = sys.stdout
    settings = merged.shards[0].trailer["scan"]
    if merged.total == 0:
        filters = ", ".join(f"{k} {v}" for k, v in settings["filters"].items() if v is not None)
        nothing_matched(filters or "no filter", None, what="the shards hold no sessions")
    fail_on = Severity.parse(settings["fail_on"]) if settings.get("fail_on") else None
    if by:
        return int(gate_on_nothing(ExitCode(_series(merged, by, fmt, out)), merged.total, fail_on))
    lines = ((line, False) for line in merged.lines()) if fmt in (Format.JSONL, Format.JSON) else ()
    code = emit(lines, fmt, out, merged.total)
    if code == ExitCode.OK and merged.failed:
        code = ExitCode.FINDINGS
    shown = settings.get("unexplained") or {}  # what the scan's config named and muted
    if merged.summary.unexplained is not None:
        merged.summary.unexplained.show({str(k): str(v) for k, v in (shown.get("names") or {}).items()},
                                        (str(m) for m in shown.get("mute") or ()))
    return finish(merged.summary, fmt, out, gate_on_nothing(code, merged.total, fail_on))


def _series(merged, by: tuple[str, ...], fmt: Format, out) -> int:
    """What `scan --by BY` prints over the same sessions: the series of the shards' cards (one
    scan of many machines, then trends by day, week, month or model without scanning again)."""
    rules = [rule[1] for rule in merged.shards[0].trailer["scan"]["rules"]]
    series = Series(TimeBuckets(by), rules=rules)
    for line in merged.lines():
        series.add_facts(SessionFacts.of_json(json.loads(line)))
    print_series(series, fmt, out)
    return int(ExitCode.FINDINGS if merged.failed else ExitCode.OK)
