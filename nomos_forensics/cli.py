"""The `nomos-forensics` command line: the click group and its commands, over the engine, db and
renderers. The entry point is the only module that imports the commands."""

from __future__ import annotations

import importlib
import os
import sys

import click

from . import __version__
from .clikit import DEBUG_ENV, PROG, App, Group, invoke, tolerant_output
from .commands import COMMANDS


class LazyGroup(Group):
    """The group with each command imported when it is run (or listed by --help), not before."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        where = COMMANDS.get(name)
        if where is None:
            return None
        module, attr = where
        return getattr(importlib.import_module(f".commands.{module}", __package__), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name=PROG)
@click.option("--debug", is_flag=True, envvar=DEBUG_ENV, show_envvar=True,
              help="On an unexpected error (exit 70), print its traceback.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Find out why Nomos agent sessions fail, straight from the Nomos database (read-only)."""
    if debug:
        os.environ[DEBUG_ENV] = "1"  # read by the crash handler, after click has returned
    app = ctx.ensure_object(App)
    ctx.call_on_close(app.close)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning expected errors into one line and a documented exit code."""
    tolerant_output()
    sys.exit(run(argv))


def run(argv: list[str] | None = None) -> int:
    return invoke(cli, argv)
