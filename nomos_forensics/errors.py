"""Exit codes and the expected errors a user can meet, each rendered as one line without a traceback."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Documented process exit codes (README, "Exit codes")."""

    OK = 0
    FINDINGS = 1  # a finding at or above --fail-on, or a rule raised an error
    ENVIRONMENT = 2  # usage, connection, unknown session, schema mismatch, lost connection
    SHARDS = 3  # merge: shard files missing, duplicated, from different scans, or corrupt
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
