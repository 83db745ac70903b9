"""Word lists and phrase patterns kept as data: TOML files shipped as package data (a
package's `lexicons/` folder), read once. Code keeps the logic; a lexicon file keeps the words,
so adding a language or a phrasing is a data change that tests/test_lexicons.py checks.

Patterns are TOML literal strings ('''…''': no escapes to double) and may name a macro of
their file's `[macros]` table as `{name}`; regex quantifiers (`{2}`, `{0,3}`) never clash,
since macro names are letters.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
import tomllib
from collections.abc import Iterable, Mapping
from typing import Any

_MACRO = re.compile(r"\{([a-z_]+)\}")


@functools.cache
def load(package: str, name: str) -> Mapping[str, Any]:
    """The parsed `lexicons/<name>.toml` of `package` (an importable package name). A file that
    does not parse is a ValueError that names it: a rule that reads it fails with that line on
    every card (the card's `errors`), not with the parser's bare "Invalid value"."""
    resource = importlib.resources.files(package).joinpath("lexicons", f"{name}.toml")
    try:
        return tomllib.loads(resource.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"lexicon {package}:lexicons/{name}.toml does not parse: {error}") from None


def expand(pattern: str, macros: Mapping[str, str]) -> str:
    """`pattern` with each `{macro}` replaced by its text; an unknown macro is an error."""
    def replace(match: re.Match[str]) -> str:
        if match.group(1) not in macros:
            raise KeyError(f"unknown macro {{{match.group(1)}}} in lexicon pattern {pattern[:60]!r}")
        return macros[match.group(1)]

    return _MACRO.sub(replace, pattern)


def patterns(table: Mapping[str, Any], key: str, macros: Mapping[str, str] = {}) -> tuple[str, ...]:
    """The patterns under `key` of `table` (a list, or one string), macros expanded."""
    value = table[key]
    return tuple(expand(p, macros) for p in ([value] if isinstance(value, str) else value))


def pattern(table: Mapping[str, Any], key: str, macros: Mapping[str, str] = {}) -> str:
    """One pattern: a list under `key` is joined as alternatives."""
    return "|".join(patterns(table, key, macros))


def words(value: str | Iterable[str]) -> list[str]:
    """A word list written as one whitespace-separated string, or as a list; order kept."""
    return value.split() if isinstance(value, str) else [w for item in value for w in item.split()]


def cues(value: str) -> list[str]:
    """A cue table written as `entry | entry | ...` (entries may hold spaces), in order, stripped."""
    return [entry.strip() for entry in value.split("|") if entry.strip()]
