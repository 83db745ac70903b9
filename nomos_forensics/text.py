"""Small text helpers shared by rules: sentence splitting and normalisation."""

from __future__ import annotations

import re
import unicodedata

_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s+|(?<=[。！？])|\n+")
_SPACES = re.compile(r"\s+")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "`": "'", "“": '"', "”": '"', "´": "'"})
_CODE_BLOCK = re.compile(r"```.*?(```|$)", re.S)
_QUOTED_LINE = re.compile(r"^\s*>.*$", re.M)


def normalise(text: str) -> str:
    """NFKC, straight quotes, single spaces: what phrase patterns are written against."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text).translate(_QUOTES)).strip()


def without_code(text: str) -> str:
    """Drop fenced code blocks and quoted lines (tool output the agent pasted back)."""
    return _QUOTED_LINE.sub(" ", _CODE_BLOCK.sub(" ", text))


def sentences(text: str) -> list[str]:
    """Sentences of prose (code blocks and quoted lines removed), normalised."""
    parts = _SENTENCE_END.split(without_code(text))
    return [s for s in (normalise(p) for p in parts if p) if s]
