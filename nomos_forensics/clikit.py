"""What every command shares: per-invocation state, option decorators, rule selection, time
filters, and running a click group with expected errors as one line and a documented exit code.
Commands import this module; only the entry point (cli.py) imports the commands."""

from __future__ import annotations

import errno
import functools
import math
import os
import re
import sys
import traceback
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import click

from . import config as config_mod
from . import plugins as plugins_mod
from .db import DSN_ENV, ConnectionSettings, Database
from .errors import Activity, ConfigError, ExitCode, ForensicsError, InternalError
from .render import WIDE, Format, neutralise
from .rule import Severity

PROG = "nomos-forensics"


# ------------------------------------------------------------------ application state
class App:
    """Per-invocation state: connection settings, a lazily created engine, the schema, plugins."""

    def __init__(self) -> None:
        self.settings: ConnectionSettings | None = None
        self._db: Database | None = None
        self._schema = None

    def configure(self, dsn: str | None, statement_timeout: float | None, lock_timeout: float | None) -> None:
        self.settings = ConnectionSettings.resolve(
            dsn, statement_timeout_s=statement_timeout, lock_timeout_s=lock_timeout
        )

    @property
    def db(self) -> Database:
        if self._db is None:
            if self.settings is None:
                self.configure(None, None, None)
            self._db = Database(self.settings)
        return self._db

    def schema(self, conn):
        from .schema import reflect

        if self._schema is None:
            self._schema = reflect(conn, self.db)
        return self._schema

    def close(self) -> None:
        if self._db is not None:
            self._db.dispose()


pass_app = click.make_pass_decorator(App, ensure=True)


def warn(message: str) -> None:
    click.echo(neutralise(f"{PROG}: warning: {message}"), err=True)


# ------------------------------------------------------------------ shared options
class FiniteFloatRange(click.FloatRange):
    """A FloatRange that refuses nan and inf (which every comparison lets through)."""

    def convert(self, value: Any, param, ctx) -> Any:
        number = super().convert(value, param, ctx)
        if number is not None and not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


MAX_TIMEOUT_S = 2_147_483  # the server's timeouts are int32 milliseconds
MAX_COUNT = 2**31 - 1  # --limit, --top: the SQL casts them to integer


def connection_options(func: Callable) -> Callable:
    @click.option("--dsn", envvar=DSN_ENV, show_envvar=True, default=None,
                  help="postgresql:// URL or libpq keyword string; default: libpq's own (PGHOST, ~/.pgpass, …).")
    @click.option("--statement-timeout", type=FiniteFloatRange(min=0.001, max=MAX_TIMEOUT_S), default=None, metavar="SECONDS",
                  envvar="NOMOS_FORENSICS_STATEMENT_TIMEOUT", help="Per-statement timeout (default 30).")
    @click.option("--lock-timeout", type=FiniteFloatRange(min=0.001, max=MAX_TIMEOUT_S), default=None, metavar="SECONDS",
                  envvar="NOMOS_FORENSICS_LOCK_TIMEOUT", help="Lock wait timeout (default 2).")
    @functools.wraps(func)
    def wrapper(*args, dsn, statement_timeout, lock_timeout, **kwargs):
        click.get_current_context().find_object(App).configure(dsn, statement_timeout, lock_timeout)
        return func(*args, **kwargs)

    return wrapper


def format_option(*choices: Format, default: Format) -> Callable:
    return click.option(
        "--format", "fmt",
        type=click.Choice([c.value for c in choices]),
        default=default.value,
        show_default=True,
        callback=lambda _ctx, _param, value: Format(value),
        help="Output format.",
    )


def wide_option(func: Callable) -> Callable:
    """--wide: text tables and cards as wide as they come, not wrapped to the terminal's width."""
    @click.option("--wide", is_flag=True, envvar="NOMOS_FORENSICS_WIDE",
                  help="Do not wrap tables and cards to the terminal width (or 100 columns when not a terminal).")
    @functools.wraps(func)
    def wrapper(*args, wide, **kwargs):
        WIDE.set(bool(wide))
        return func(*args, **kwargs)

    return wrapper


def severity_choice() -> click.Choice:
    return click.Choice([s.label for s in Severity if s != Severity.NONE], case_sensitive=False)


def rule_options(func: Callable) -> Callable:
    @click.option("--select", multiple=True, metavar="RULE",
                  help="Only these rules (code or name; repeatable or comma list).")
    @click.option("--ignore", multiple=True, metavar="RULE", help="Skip these rules (code or name).")
    @click.option("-p", "--plugin", "plugin_refs", multiple=True, metavar="PATH|MODULE",
                  help="Load a local rule plugin file or module (repeatable; also $NOMOS_FORENSICS_PLUGINS).")
    @click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
                  help="TOML config (default: nomos-forensics.toml, or [tool.nomos-forensics] in pyproject.toml).")
    @click.option("--fail-on", type=severity_choice(), default=None,
                  help="Exit 1 when a finding is at or above this severity.")
    @functools.wraps(func)
    def wrapper(*args, select, ignore, plugin_refs, config_path, fail_on, **kwargs):
        cfg = config_mod.load(config_path)
        registry = plugins_mod.load(plugin_refs)
        for problem in registry.problems:
            warn(f"plugin {problem.source}: {problem.message}")
        threshold = fail_on or cfg.fail_on
        try:
            fail = Severity.parse(threshold) if threshold else None
        except ValueError as error:
            raise ConfigError(str(error)) from None
        selection = RuleSelection(
            registry=registry,
            plugin_refs=plugin_refs,
            config=cfg,
            select=_split(select),
            ignore=_split(ignore),
            fail_on=fail,
        )
        return func(*args, selection=selection, **kwargs)

    return wrapper


def _split(values: tuple[str, ...]) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


class RuleSelection:
    def __init__(self, registry, config, select, ignore, fail_on, plugin_refs=()) -> None:
        self.registry = registry
        self.plugin_refs = plugin_refs
        self.config = config
        self.select = select
        self.ignore = ignore
        self.fail_on = fail_on

    def build(self, schema=None):
        from .engine import build_ruleset

        ruleset = build_ruleset(
            self.registry, self.config, select=self.select, ignore=self.ignore, schema=schema
        )
        for message in ruleset.warnings:
            warn(message)
        return ruleset


# ------------------------------------------------------------------ time filters
_RELATIVE = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$", re.I)


def parse_since(value: str | None) -> datetime | None:
    """`7d`, `24h`, `30m`, `2w`, or an ISO date/datetime (UTC when no zone is given)."""
    if value is None or not value.strip():
        return None
    match = _RELATIVE.match(value)
    if match:
        amount, unit = int(match.group(1)), match.group(2).lower()
        try:
            delta = {"m": timedelta(minutes=amount), "h": timedelta(hours=amount),
                     "d": timedelta(days=amount), "w": timedelta(weeks=amount)}[unit]
            return datetime.now(timezone.utc) - delta
        except OverflowError:
            raise click.BadParameter(f"{value!r} reaches back before year 1") from None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise click.BadParameter(f"{value!r} is neither a date (2026-11-30) nor a span (7d, 24h)") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def since_option(name: str = "--since", help: str = "Only sessions created since DATE or span (7d, 24h).") -> Callable:
    return click.option(name, default=None, metavar="DATE|SPAN",
                        callback=lambda _c, _p, v: parse_since(v), help=help)


# ------------------------------------------------------------------ the group
# stdout that cannot take more: a full disk or quota, a file too large, a dead terminal
OUTPUT_FAILURES = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}


class OutputClosed(Exception):
    """stdout was closed under us (`| head`): stop at once, exit 0 (docs/exit-codes.md)."""


class Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # click would turn it into exit 1
            raise OutputClosed() from None


def tolerant_output() -> None:
    """On a stdout or stderr that cannot encode every character (LANG=C, PYTHONIOENCODING=ascii),
    print what cannot be encoded as '?' rather than crash; JSON stays valid."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if encoding not in ("utf8", "utf8sig") and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="replace")
            except (ValueError, OSError):
                pass


def _print_error(message: str) -> None:
    try:
        click.echo(neutralise(f"{PROG}: error: {message}"), err=True)
    except Exception:  # stderr may be gone too; the exit code still tells
        pass


def _silence_stdout() -> None:
    # Python flushes stdout at exit; point it at devnull so a closed pipe raises nothing more
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass



def echo(text: str = "", **kwargs: Any) -> None:
    click.echo(text, **kwargs)


def invoke(group: click.Group, argv: list[str] | None = None) -> int:
    """Run `group` on `argv`: its result, or the exit code of an expected error, printed as one line."""
    try:
        result = group.main(args=argv, prog_name=PROG, standalone_mode=False)
        sys.stdout.flush()  # a full disk shows here, not as an ignored exception at exit
        return int(result or 0)
    except InternalError as error:  # a worker's crash
        return crashed(error)
    except ForensicsError as error:
        _print_error(str(error))
        return int(error.exit_code)
    except click.exceptions.Abort:
        click.echo("", err=True)
        return int(ExitCode.INTERRUPTED)
    except click.UsageError as error:  # one line, as documented, not click's three
        command = error.ctx.command_path if error.ctx is not None else PROG
        _print_error(f"{error.format_message()} (see '{command} --help')")
        return int(ExitCode.ENVIRONMENT)
    except click.ClickException as error:
        _print_error(error.format_message())
        return int(ExitCode.ENVIRONMENT)
    except click.exceptions.Exit as error:
        return int(error.exit_code)
    except KeyboardInterrupt:
        _print_error("interrupted")
        return int(ExitCode.INTERRUPTED)
    except (BrokenPipeError, OutputClosed):
        _silence_stdout()
        return int(ExitCode.OK)
    except OSError as error:
        if error.errno not in OUTPUT_FAILURES:
            return crashed(error)
        _silence_stdout()
        _print_error(f"cannot write the output: {error.strerror}")
        return int(ExitCode.ENVIRONMENT)
    except SystemExit:  # sys.exit() of our own entry point only; nothing else calls it
        raise
    except BaseException as error:  # a bug, or whatever a plugin raised where no rule contains it
        return crashed(error)


DEBUG_ENV = "NOMOS_FORENSICS_DEBUG"


def debug_enabled() -> bool:
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


def crashed(error: BaseException) -> int:
    """An unexpected error: one line naming it (and the session, where there is one), the
    traceback only with --debug, and an exit code of its own that no gate reads as success."""
    if isinstance(error, InternalError):  # a worker's crash, already described
        what = error.message
        detail = error.traceback
    else:
        text = (str(error).strip().splitlines() or [""])[0]
        what = f"{type(error).__name__}{': ' + text[:300] if text else ''}{Activity.describe()}"
        detail = "".join(traceback.format_exception(error))
    if debug_enabled():
        try:
            sys.stderr.write(detail)
        except Exception:
            pass
        _print_error(f"internal error: {what}")
    else:
        _print_error(f"internal error: {what} (a bug: rerun with --debug for the traceback)")
    return int(ExitCode.CRASH)
