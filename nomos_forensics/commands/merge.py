"""`nomos-forensics merge SHARD...`: the shard files of `scan --shard K/N` folded back into what
one `scan` process prints, in any of its formats, with its exit code."""

from __future__ import annotations

import sys

import click

from ..clikit import format_option
from ..errors import ExitCode
from ..render import Format
from ..scan import read_shards
from .scan import emit, finish


@click.command()
@click.argument("shards", nargs=-1, required=True, metavar="SHARD.jsonl...",
                type=click.Path(dir_okay=False))
@format_option(Format.TABLE, Format.JSONL, Format.JSON, Format.MARKDOWN, default=Format.TABLE)
def merge(shards: tuple[str, ...], fmt: Format) -> int:
    """Merge the shard files of `scan --shard K/N` (every K once) into one scan's output."""
    merged = read_shards(list(shards))  # checks every file whole before a line is printed
    out = sys.stdout
    lines = ((line, False) for line in merged.lines()) if fmt in (Format.JSONL, Format.JSON) else ()
    code = emit(lines, fmt, out, merged.total)
    if code == ExitCode.OK and merged.failed:
        code = ExitCode.FINDINGS
    return finish(merged.summary, fmt, out, code)
