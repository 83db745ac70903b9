"""A regex search that RE2 rules texts out of first, with the same result as Python's `re`.

Python's engine tries an alternation of many branches that open with `\\b` at every position of
a text: ~100 µs for one big pattern on a 1,500-character reply, whatever it finds. RE2
(google-re2: Google's linear-time engine) runs the whole alternation in one pass, a few µs. But
RE2 knows no lookaround or back reference, and its `\\b`, `\\w`, `\\s` are ASCII. So RE2 is only
a gate, on ASCII text, with a *relaxed* pattern: the lookarounds dropped (they only forbid
matches), `\\s` widened to Python's ASCII whitespace. Every match Python finds, the relaxed
pattern finds too; when RE2 finds none, there is none, and otherwise Python's `re` answers.
The result is always Python's. A pattern that cannot be relaxed (a back reference outside a
lookaround, `$` without MULTILINE, anything RE2 does not compile) is searched by Python alone.
"""

from __future__ import annotations

import re

from .prefilter import _REWRITES, _structure, _tokens

_FLAGS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"))
_SPACE = r"\t\n\x0b\x0c\r\x1c-\x1f "  # Python's \s on ASCII text (RE2's \s lacks \x0b and \x1c-\x1f)


def relaxed(source: str, flags: int) -> str | None:
    """An RE2 source whose matches include every match of `source` (Python syntax, `flags`) on
    ASCII text, or None when none can be made."""
    if flags & (re.VERBOSE | re.LOCALE | re.ASCII):
        return None
    if ("ı" in source or "İ" in source) and (flags & re.IGNORECASE or re.search(r"\(\?[a-zA-Z-]*i", source)):
        return None  # Python folds the dotless and dotted I to ASCII i/I when case is ignored; RE2 does not
    drop = []  # (start, end) of each top-level lookaround group
    opened: list[tuple[int, bool]] = []
    for i, ch, _ in _structure(source):
        if ch == "(":
            inside = any(look for _, look in opened)
            opened.append((i, not inside and source.startswith(("(?=", "(?!", "(?<=", "(?<!"), i)))
        elif ch == ")" and opened:
            start, look = opened.pop()
            if look:
                drop.append((start, i + 1))
    pieces, at = [], 0
    for start, end in drop:
        if source[end:end + 1] in ("?", "*", "+", "{"):
            return None  # a quantified lookaround: dropping it would leave the quantifier alone
        pieces.append(source[at:start])
        at = end
    pieces.append(source[at:])
    out = "".join(pieces)
    if re.search(r"\\[1-9]|\(\?P=|\(\?\(|\\Z|\(\?>|[*+?}][+]|(?<!\\)\{,", out):
        # back references, conditionals, \Z, atomic groups, possessive quantifiers, and `{,n}`
        # (Python's "at most n", RE2's literal text)
        return None
    if not flags & re.MULTILINE and _unescaped(out, "$"):
        return None  # Python's $ also matches before a final newline
    out = _widen_spaces(out)
    inline = "".join(letter for flag, letter in _FLAGS if flags & flag)
    return f"(?{inline}){out}" if inline else out


def _unescaped(source: str, char: str) -> bool:
    """Whether `char` occurs in `source` outside escapes and character classes."""
    return any(token == char and not inside for _, token, inside in _tokens(source))


def _widen_spaces(source: str) -> str:
    """`\\s` as Python's ASCII whitespace, inside character classes and out."""
    return "".join((_SPACE if inside else f"[{_SPACE}]") if token == "\\s" else token
                   for _, token, inside in _tokens(source))


class Re2Gated:
    """`pattern.search(text)` (a compiled pattern, or a LazyPattern), exact, with RE2 as the gate
    on ASCII text of `min_chars` or more (a call into RE2 costs ~2.5 us: below that Python's
    search of a short text is as cheap). Built at import; RE2 compiles on first use. Every other
    attribute is the pattern's own."""

    def __init__(self, pattern, min_chars: int = 64) -> None:
        self.python = pattern
        self.pattern = pattern.pattern
        self.flags = pattern.flags
        self.min_chars = min_chars
        self._gate = None  # RE2's search, once compiled; False when the pattern cannot have one

    def search(self, text: str, *where):
        if where or len(text) < self.min_chars:
            return self.python.search(text, *where)
        gate = self._gate
        if gate is None:  # the source as written, when literal_first rewrote it (the same matches)
            source, flags = _REWRITES.get(self.python, (self.python.pattern, self.python.flags))
            gate = self._gate = _compile(source, flags)
        if gate is False or not text.isascii() or gate(text) is not None:
            return self.python.search(text)
        return None

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.python, name)


def _compile(source: str, flags: int):
    """RE2's search for the relaxed `source`, or False."""
    relaxed_source = relaxed(source, flags)
    if relaxed_source is None:
        return False
    import re2

    options = re2.Options()
    options.never_capture = True
    options.log_errors = False  # a source RE2 refuses is searched by Python: nothing to say on stderr
    options.max_mem = 64 << 20
    try:
        return re2.compile(relaxed_source, options=options).search
    except re2.error:
        return False
