"""`scan --shard K/N` and `merge`: one hash partition of the sessions per machine, and the
shard files folded back into exactly what one process prints.

A shard file is the shard's card lines (what `scan --format jsonl` prints for those sessions,
in session-id order) and one last line, the trailer (docs/shard.schema.json):

    {"nomos_forensics_shard": {"schema_version": 1, "shard": K, "shards": N, "scan": {...},
     "total_sessions": T, "sessions": n, "cards_sha256": "...", "failed": false, "summary": {...}}}

`scan` holds the scan's settings (version, filters, rules and their options, --fail-on), which
every shard of one scan shares; `summary` is the shard's Summary.to_state(), which merges with
exact counts. A shard without its trailer was interrupted or is not a shard.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import resource
except ImportError:  # Windows
    resource = None

from .. import __version__
from ..errors import ExitCode, ForensicsError
from .stream import ScanFilters
from .summary import Summary, count_card_json

SHARD_KEY = "nomos_forensics_shard"
SHARD_SCHEMA_VERSION = 1
MAX_SHARDS = 4096
_TRAILER_KEYS = ("scan", "total_sessions", "sessions", "cards_sha256", "failed", "summary")
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
_ID = re.compile(r'^\{"schema_version": 1, "session": \{"id": "([^"\\]+)"')


class ShardError(ForensicsError):
    """Shard files that do not make one whole scan: missing, duplicated, mixed or corrupt."""

    kind = "shard"
    exit_code = ExitCode.SHARDS


def parse_shard(value: str | None) -> tuple[int, int] | None:
    """`K/N`, 0 <= K < N (K is 0-based, like JOB_COMPLETION_INDEX); None when not given."""
    if value is None:
        return None
    match = _SHARD.match(value)
    if not match:
        raise ValueError(f"{value!r} is not K/N (e.g. 0/4: the first of four shards)")
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= count <= MAX_SHARDS:
        raise ValueError(f"N in {value!r} must be between 1 and {MAX_SHARDS}")
    if index >= count:
        raise ValueError(f"K in {value!r} must be between 0 and {count - 1} (K is 0-based)")
    return index, count


def scan_settings(ruleset, config, filters: ScanFilters, fail_on) -> dict[str, Any]:
    """What must be equal across the shards of one scan for their merge to be one scan's answer."""
    def when(value):
        return value.isoformat() if value is not None else None

    return {
        "version": __version__,
        "filters": {"since": when(filters.since), "until": when(filters.until), "status": filters.status,
                    "model": filters.model, "limit": filters.limit},
        "rules": [[a.spec.code, a.spec.name, _options(config, a.spec), a.spec.version] for a in ruleset.active],
        "skipped": sorted(s["rule"] for s in ruleset.skipped),
        "grace_minutes": config.grace_minutes,
        "fail_on": fail_on.label if fail_on is not None else None,
        "unexplained": {"mute": sorted(config.muted_groups), "names": dict(sorted(config.group_names.items()))},
    }


def _options(config, spec) -> dict[str, Any]:
    """A rule's options as the trailer records them, with the operator's own fix text when set
    (shards must agree on it too: it is on every card)."""
    options = config.options_for(spec.name, spec.code)
    fix = config.fix_for(spec.name, spec.code)
    return options if fix is None else {**options, "fix": fix}


class ShardRecorder:
    """Wraps the card lines a shard prints: hashes them; `trailer()` is the last line."""

    def __init__(self, shard: tuple[int, int], settings: dict[str, Any], total: int) -> None:
        self.shard, self.settings, self.total = shard, settings, total
        self.digest = hashlib.sha256()
        self.sessions = 0

    def lines(self, lines: Iterator[tuple[str, bool]]) -> Iterator[tuple[str, bool]]:
        for line, failed in lines:
            self.digest.update(line.encode("utf-8"))
            self.digest.update(b"\n")
            self.sessions += 1
            yield line, failed

    def trailer(self, summary: Summary, failed: bool) -> str:
        return json.dumps({SHARD_KEY: {
            "schema_version": SHARD_SCHEMA_VERSION, "shard": self.shard[0], "shards": self.shard[1],
            "scan": self.settings, "total_sessions": self.total, "sessions": self.sessions,
            "cards_sha256": self.digest.hexdigest(), "failed": failed, "summary": summary.to_state(),
        }}, separators=(",", ":"), default=str)  # ASCII: no raw control or bidi characters


@dataclass
class _Shard:
    path: Path
    index: int
    count: int
    trailer: dict[str, Any]
    size: int  # bytes before the trailer: the card lines


@dataclass
class MergedShards:
    """A complete, consistent set of shards: the summary, the exit status, the card lines."""

    shards: list[_Shard]
    summary: Summary
    failed: bool
    total: int

    def lines(self) -> Iterator[str]:
        """Every card line of every shard, in session-id order (checked again as it goes)."""
        yield from _merged(self.shards)


def read_shards(paths: list[str]) -> MergedShards:
    """Check that `paths` are every shard of one scan, each whole, and merge their summaries.
    Reads every card line once (hash, order, count); raises ShardError naming the first fault."""
    if not paths:
        raise ShardError("no shard files given")
    _allow_open_files(len(paths))
    shards = [_open(Path(p)) for p in paths]
    first = shards[0]
    for shard in shards[1:]:
        for key, what in (("shards", "a different number of shards"), ("scan", "other scan settings"),
                          ("total_sessions", "a database of another size (replicas at different points?)")):
            if shard.trailer[key] != first.trailer[key]:
                detail = _difference(first.trailer["scan"], shard.trailer["scan"]) if key == "scan" else ""
                raise ShardError(f"{shard.path} and {first.path} come from different scans: {what}{detail}")
    seen: dict[int, Path] = {}
    for shard in shards:
        if shard.index in seen:
            raise ShardError(f"shard {shard.index}/{shard.count} given twice: {seen[shard.index]} and {shard.path}")
        seen[shard.index] = shard.path
    missing = [i for i in range(first.count) if i not in seen]
    if missing:
        listed = ", ".join(f"{i}/{first.count}" for i in missing[:10]) + (" …" if len(missing) > 10 else "")
        raise ShardError(f"missing shard{'s' if len(missing) > 1 else ''} {listed} ({len(shards)} of {first.count} given)")
    recounted = _recount(shards)  # every line: its shard's hash and count, one global order, its counts
    summary = Summary()
    for shard in shards:
        try:
            part = Summary.from_state(shard.trailer["summary"])
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise ShardError(f"{shard.path}: unreadable summary in the shard trailer ({error})") from None
        if part.sessions != shard.trailer["sessions"]:
            raise ShardError(f"{shard.path}: the trailer's summary counts {part.sessions} sessions, the file {shard.trailer['sessions']}")
        mine, theirs = recounted[shard.index].derived_state(), part.derived_state()
        differ = [key for key in mine if mine[key] != theirs[key]]
        if differ:
            raise ShardError(f"{shard.path}: the trailer's counts do not match its card lines "
                             f"({', '.join(differ)} differ; edited or corrupt)")
        summary.merge(part)
    if summary.sessions != first.trailer["total_sessions"]:
        raise ShardError(f"the shards hold {summary.sessions} sessions, the scan covered {first.trailer['total_sessions']}")
    return MergedShards(shards, summary, any(s.trailer["failed"] for s in shards), summary.sessions)


def _allow_open_files(count: int) -> None:
    """The shards are read side by side: raise the soft limit on open files, up to the hard one,
    so that `count` of them fit (a soft limit of 1,024 is common; N may be 4,096)."""
    if resource is None:  # not a POSIX system
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = count + 64  # and the interpreter's own
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard))


def _difference(a: dict[str, Any], b: dict[str, Any]) -> str:
    keys = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return f" ({', '.join(keys)} differ)" if keys else ""


def _open(path: Path) -> _Shard:
    try:
        with path.open("rb") as handle:
            size, block = handle.seek(0, 2), 65536
            while True:  # the last line, however long: read backwards until a newline before it
                start = max(0, size - block)
                handle.seek(start)
                body = handle.read(size - start).rstrip(b"\n")
                cut = body.rfind(b"\n")
                if cut >= 0 or start == 0:
                    break
                block *= 4
    except OSError as error:
        raise ShardError(f"cannot read shard {path}: {error.strerror or error}") from None
    last, cards_size = body[cut + 1:], start + cut + 1
    try:
        trailer = json.loads(last)[SHARD_KEY]
        index, count = int(trailer["shard"]), int(trailer["shards"])
        if trailer["schema_version"] != SHARD_SCHEMA_VERSION:
            raise ShardError(f"{path}: shard schema_version {trailer['schema_version']!r}, this version reads {SHARD_SCHEMA_VERSION}")
        if not 0 <= index < count or not all(key in trailer for key in _TRAILER_KEYS) or not _rules_shape(trailer):
            raise ValueError(index)
    except ShardError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):  # RecursionError: JSON nested too deeply
        raise ShardError(f"{path} is not a whole shard: no valid trailer line at its end "
                         "(interrupted, truncated, or not written by scan --shard)") from None
    return _Shard(path, index, count, trailer, cards_size)


def _rules_shape(trailer: dict[str, Any]) -> bool:
    """The scan settings' rules as scan_settings writes them: [code, name, options, version]."""
    rules = trailer["scan"].get("rules") if isinstance(trailer["scan"], dict) else None
    return isinstance(rules, list) and all(
        isinstance(rule, list) and len(rule) == 4 and isinstance(rule[0], str) and isinstance(rule[1], str)
        and isinstance(rule[2], dict) and isinstance(rule[3], str) for rule in rules)


def _cards(shard: _Shard) -> Iterator[tuple[str, int, str]]:
    """(session id, shard index, line) for each card line of one shard; checks the hash and count
    once the last card line is read."""
    digest, count, previous = hashlib.sha256(), 0, ""
    try:
        with shard.path.open("rb") as handle:
            remaining = shard.size
            for raw in handle:
                if remaining <= 0:
                    break
                remaining -= len(raw)
                if not raw.endswith(b"\n"):
                    break
                digest.update(raw)
                count += 1
                line = raw[:-1].decode("utf-8")
                session = _session_id(line)
                if session is None or session <= previous:
                    raise ShardError(f"{shard.path}, line {count}: not a card line in session-id order")
                previous = session
                yield session, shard.index, line
    except OSError as error:
        raise ShardError(f"cannot read shard {shard.path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ShardError(f"{shard.path}, line {count}: not UTF-8") from None
    if count != shard.trailer["sessions"] or digest.hexdigest() != shard.trailer["cards_sha256"]:
        raise ShardError(f"{shard.path}: its card lines do not match its trailer "
                         f"({count} lines, trailer says {shard.trailer['sessions']}; changed or corrupt)")


def _session_id(line: str) -> str | None:
    match = _ID.match(line)  # the card's first field: no need to decode the whole line
    if match:
        return match.group(1)
    try:
        session = json.loads(line)["session"]["id"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    return session if isinstance(session, str) else None


def _recount(shards: list[_Shard]) -> dict[int, Summary]:
    """Read every card line once (hash, count and order checked as it goes) and count each
    shard's cards as `scan` counted them: what its trailer says must be what its lines hold."""
    counted = {shard.index: Summary() for shard in shards}
    path = {shard.index: shard.path for shard in shards}
    previous = ""
    for session, index, line in heapq.merge(*(_cards(s) for s in shards)):
        if session <= previous:
            raise ShardError(f"session {session} is in more than one shard")
        previous = session
        try:
            count_card_json(counted[index], json.loads(line))
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError):
            raise ShardError(f"{path[index]}: the card of session {session} is not a card scan writes") from None
    return counted


def _merged(shards: list[_Shard]) -> Iterator[str]:
    previous = ""
    for session, _, line in heapq.merge(*(_cards(s) for s in shards)):
        if session <= previous:
            raise ShardError(f"session {session} is in more than one shard")
        previous = session
        yield line
