"""Exit codes and the expected errors a user can meet, each rendered as one line without a traceback."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Documented process exit codes (docs/exit-codes.md)."""

    OK = 0
    FINDINGS = 1  # a finding at or above --fail-on, or a rule raised an error
    ENVIRONMENT = 2  # usage, connection, unknown session, schema mismatch, lost connection
    SHARDS = 3  # merge: shard files missing, duplicated, from different scans, or corrupt
    NOTHING_MATCHED = 4  # a gate (--fail-on, --fail-on-regression) over a selection with no sessions
    CRASH = 70  # an unexpected error (a bug): one line, the traceback under --debug (sysexits' EX_SOFTWARE)
    INTERRUPTED = 130  # Ctrl-C


class ForensicsError(Exception):
    """An expected failure: printed as `nomos-forensics: error: <message>` and exit code `exit_code`."""

    exit_code: ExitCode = ExitCode.ENVIRONMENT
    kind = "error"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message} ({self.hint})"


class ConnectionFailed(ForensicsError):
    kind = "connection"


class QueryFailed(ForensicsError):
    kind = "query"


class QueryTimeout(QueryFailed):
    kind = "timeout"


class SchemaMismatch(ForensicsError):
    kind = "schema"


class SessionNotFound(ForensicsError):
    kind = "session"


class AmbiguousSession(SessionNotFound):
    kind = "ambiguous-session"


class InvalidSessionId(SessionNotFound):
    kind = "invalid-session-id"


class ConfigError(ForensicsError):
    kind = "config"


class ConnectionLost(ForensicsError):
    kind = "connection-lost"


class InternalError(ForensicsError):
    """An unexpected error reported by a scan worker process: a crash, exit code CRASH."""

    exit_code = ExitCode.CRASH
    kind = "internal"

    def __init__(self, message: str, *, traceback: str = "") -> None:
        super().__init__(message)
        self.traceback = traceback


def reraise_interrupt(error: BaseException) -> None:
    """For handlers that contain whatever a plugin raises (Exception, SystemExit, GeneratorExit,
    a BaseException of its own): Ctrl-C is never a plugin's error, so it goes on up."""
    if isinstance(error, KeyboardInterrupt):
        raise error


class Activity:
    """What the command was doing, for the one line an unexpected error gets: the session being
    reviewed or written (a process-wide slot: one command runs per process)."""

    session: str | None = None

    @classmethod
    def describe(cls) -> str:
        return f" (session {cls.session})" if cls.session else ""
