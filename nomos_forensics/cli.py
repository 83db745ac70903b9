"""The `nomos-forensics` command line: the click group and its commands, over the engine, db and
renderers. The entry point is the only module that imports the commands."""

from __future__ import annotations

import sys

import click

from . import __version__
from .clikit import PROG, App, Group, invoke, tolerant_output
from .commands import COMMANDS


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name=PROG)
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Find out why Nomos agent sessions fail, straight from the Nomos database (read-only)."""
    app = ctx.ensure_object(App)
    ctx.call_on_close(app.close)


for _command in COMMANDS:
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning expected errors into one line and a documented exit code."""
    tolerant_output()
    sys.exit(run(argv))


def run(argv: list[str] | None = None) -> int:
    return invoke(cli, argv)
