"""Configuration: rule selection and per-rule thresholds from TOML, then command-line overrides.

Looked up in order: `--config FILE`, `nomos-forensics.toml` in the working directory, the
`[tool.nomos-forensics]` table of `pyproject.toml` in the working directory. The other two
take the keys at the top level, or that same `[tool.nomos-forensics]` table.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bounds import DEFAULT_BOUNDS, Bounds
from .errors import ConfigError

LOCAL_FILE = "nomos-forensics.toml"
PYPROJECT = "pyproject.toml"
TOOL_KEY = "nomos-forensics"
TOP_LEVEL_KEYS = {"select", "ignore", "fail-on", "grace-minutes", "rules", "bounds", "fixes", "unexplained"}
DEFAULT_GRACE_MINUTES = 10.0
MAX_FIX_CHARS = 2000  # an operator's fix text, as long as a rule's may be (bounds.fix_chars)


@dataclass
class Config:
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    fail_on: str | None = None
    # how long an `active` session's last message counts as in flight: the Outcome and unfinished-session agree
    grace_minutes: float = DEFAULT_GRACE_MINUTES
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)  # rule name or code -> options
    source: str | None = None
    bounds: Bounds = DEFAULT_BOUNDS  # what one card may hold
    fixes: dict[str, str] = field(default_factory=dict)  # rule name or code -> the operator's own fix text
    # `[unexplained]`: group id -> the operator's name for it; the ids of groups known and muted
    group_names: dict[str, str] = field(default_factory=dict)
    muted_groups: frozenset[str] = frozenset()

    def fix_for(self, name: str, code: str) -> str | None:
        """The operator's fix text for this rule (`[fixes]`), or None: the rule's own."""
        for key, text in self.fixes.items():
            if key.lower() in (name.lower(), code.lower()):
                return text
        return None

    def options_for(self, name: str, code: str) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for key, options in self.rules.items():
            if key.lower() in (name.lower(), code.lower()):
                merged.update(options)
        return merged


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"invalid TOML in {path}: {error}") from None
    except RecursionError:
        raise ConfigError(f"invalid TOML in {path}: nested too deeply to read") from None
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror}") from None


def _as_list(value: Any, key: str, source: str) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f"{source}: `{key}` must be a list of rule codes or names")


def parse(table: dict[str, Any], source: str) -> Config:
    unknown = set(table) - TOP_LEVEL_KEYS
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {', '.join(sorted(unknown))}")
    rules = table.get("rules", {})
    if not isinstance(rules, dict) or not all(isinstance(v, dict) for v in rules.values()):
        raise ConfigError(f"{source}: `rules` must be a table of per-rule tables")
    fail_on = table.get("fail-on")
    if fail_on is not None and not isinstance(fail_on, str):
        raise ConfigError(f"{source}: `fail-on` must be a severity name")
    grace = table.get("grace-minutes", DEFAULT_GRACE_MINUTES)
    if isinstance(grace, bool) or not isinstance(grace, (int, float)) or not 0 <= grace < 10**6:
        raise ConfigError(f"{source}: `grace-minutes` must be a number of minutes from 0")
    return Config(
        bounds=_bounds(table.get("bounds", {}), source),
        select=_as_list(table.get("select", []), "select", source),
        ignore=_as_list(table.get("ignore", []), "ignore", source),
        fail_on=fail_on,
        grace_minutes=float(grace),
        rules={str(k): dict(v) for k, v in rules.items()},
        source=source,
        fixes=_fixes(table.get("fixes", {}), source),
        **_unexplained(table.get("unexplained", {}), source),
    )


_GROUP_ID = re.compile(r"^[0-9a-f]{8}$")


def _unexplained(table: Any, source: str) -> dict[str, Any]:
    """`[unexplained]`: `mute` = the ids of known groups to count but not list; `[unexplained.names]`:
    group id = a name shown with the group (docs/unexplained.md)."""
    if not isinstance(table, dict) or set(table) - {"mute", "names"}:
        raise ConfigError(f"{source}: `unexplained` must be a table with `mute` (a list of group ids) and "
                          "`names` (a table of group id = name)")
    mute, names = table.get("mute", []), table.get("names", {})
    if not isinstance(mute, list) or not all(isinstance(m, str) and _GROUP_ID.match(m.strip().lower()) for m in mute):
        raise ConfigError(f"{source}: `unexplained.mute` must be a list of group ids (8 hex digits, as scan prints them)")
    if not isinstance(names, dict) or not all(
            _GROUP_ID.match(str(k).lower()) and isinstance(v, str) and 0 < len(v.strip()) <= 80 for k, v in names.items()):
        raise ConfigError(f"{source}: `unexplained.names` must map group ids (8 hex digits) to names of 1 to 80 "
                          "characters")
    return {"muted_groups": frozenset(m.strip().lower() for m in mute),
            "group_names": {str(k).lower(): " ".join(v.split()) for k, v in names.items()}}


def _fixes(table: Any, source: str) -> dict[str, str]:
    """`[fixes]`: rule name or code = the fix text every finding of that rule then carries."""
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: `fixes` must be a table of rule = \"fix text\"")
    for key, value in table.items():
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_FIX_CHARS:
            raise ConfigError(f"{source}: `fixes.{key}` must be a string of 1 to {MAX_FIX_CHARS:,} characters "
                              "(the fix text for that rule)")
    return {str(k): " ".join(v.split()) for k, v in table.items()}


def _bounds(table: Any, source: str) -> Bounds:
    """`[bounds]`: each key a positive integer (bounds.Bounds names them)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: `bounds` must be a table")
    known = Bounds.keys()
    unknown = set(table) - set(known)
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) in `bounds`: {', '.join(sorted(unknown))} "
                          f"(known: {', '.join(sorted(known))})")
    values = {}
    for key, value in table.items():
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10**7:
            raise ConfigError(f"{source}: `bounds.{key}` must be a whole number from 1 to 10,000,000")
        values[known[key]] = value
    return Bounds(**{**DEFAULT_BOUNDS.__dict__, **values})


def _unwrap(data: dict[str, Any]) -> dict[str, Any]:
    """A file holding only a `[tool.nomos-forensics]` table (copied from a pyproject.toml) means
    that table."""
    tool = data.get("tool")
    if set(data) == {"tool"} and isinstance(tool, dict) and set(tool) == {TOOL_KEY} and isinstance(tool[TOOL_KEY], dict):
        return tool[TOOL_KEY]
    return data


def _tool_table(data: dict[str, Any], source: Path) -> Any:
    """pyproject.toml's `[tool.nomos-forensics]`, or None when it has none; a `tool` or a
    `tool.nomos-forensics` that is not a table is an error, not a traceback."""
    tool = data.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise ConfigError(f"{source}: `tool` must be a table, not {type(tool).__name__}")
    table = tool.get(TOOL_KEY)
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{source}: `[tool.{TOOL_KEY}]` must be a table, not {type(table).__name__}")
    return table


def load(explicit: str | None = None, cwd: Path | None = None) -> Config:
    cwd = cwd or Path.cwd()
    if explicit:
        path = Path(explicit)
        data = _read_toml(path)
        if path.name == PYPROJECT:
            table = _tool_table(data, path)
            return parse(data if table is None else table, str(path))
        return parse(_unwrap(data), str(path))
    local = cwd / LOCAL_FILE
    if local.is_file():
        return parse(_unwrap(_read_toml(local)), str(local))
    pyproject = cwd / PYPROJECT
    if pyproject.is_file():
        table = _tool_table(_read_toml(pyproject), pyproject)
        if table is not None:
            return parse(table, f"{pyproject} [tool.{TOOL_KEY}]")
    return Config()
