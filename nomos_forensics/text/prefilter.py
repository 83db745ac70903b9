"""Word prefilters for regex-heavy rules: try a pattern only when the text holds a word that
every match of it must contain.

Most messages contain none of a rule's trigger words, and one pass over a message's letter
runs is far cheaper than dozens of regex searches. Exactness comes first: a pattern is gated
only by words its matches cannot do without (`required_words`); a pattern whose words cannot
be told is always tried. Texts must be lower case (rules match lowered text), and patterns
compiled with IGNORECASE or VERBOSE are always tried.

    gates = WordGates()
    corrections = gates.add(patterns)        # a group of patterns, in order
    mask = gates.mask(lowered_text)          # once per text
    for pattern in gates.candidates(corrections, mask): ...

`AnyPattern` does this for one big alternation used as a yes/no test.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

_LETTERS = re.compile(r"[^\W\d_]{2,}")  # a required word: two letters or more
_ESCAPE = re.compile(r"\\.")
_CLASS = re.compile(r"\[\^?\]?[^\]]*\]")
_COUNT = re.compile(r"\{(\d*)(?:,\d*)?\}")
_LOOKAROUND = re.compile(r"\(\?<?[=!]")  # marked "(~": never a required part of a match
_GROUP_PREFIX = re.compile(r"\(\?(?:[:>]|p<[^>]*>|[a-z-]+:)")
_OPTIONAL_CHAR = re.compile(r"[^\W\d_][?*]")  # "colou?r": the u may be absent
_UNSAFE = re.compile(r"\\n\{|\(\?\(|\(\?#|\(\?[a-z-]*i[a-z-]*[:)]")  # \N{...}, conditionals, comments, scoped (?i)


def required_words(pattern: re.Pattern) -> tuple[str, ...] | None:
    """Words one of which every match of `pattern` contains, or None when that cannot be told
    (some branch may match without a word of two letters or more)."""
    if pattern.flags & (re.IGNORECASE | re.VERBOSE):
        return None
    # a pattern literal_first rewrote is read as written: the same matches, and its words are plainer
    source = _REWRITES.get(pattern, (pattern.pattern,))[0].lower()
    if _UNSAFE.search(source):
        return None
    source = _CLASS.sub(" ", _ESCAPE.sub(" ", source))
    source = _COUNT.sub(lambda m: "*" if m.group(1) in ("", "0") else " ", source)
    source = _GROUP_PREFIX.sub("(", _LOOKAROUND.sub("(~", source))
    source = _OPTIONAL_CHAR.sub(" ", source)
    required: set[str] = set()
    for branch in alternatives(source):
        words = _required(branch)
        if words is None:
            return None
        required.update(words)
    return tuple(sorted(required))


def _required(branch: str) -> tuple[str, ...] | None:
    """Words one of which every match of `branch` contains: its longest literal outside any
    group, else the words of a mandatory group each of whose alternatives has some."""
    depth, outside = 0, []
    groups: list[list[int]] = []
    for i, ch in enumerate(branch):
        if ch == "(":
            if depth == 0:
                groups.append([i, -1])
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0 and groups:
                groups[-1][1] = i
        outside.append(ch if depth == 0 and ch not in "()" else " ")
    options = [(word,) for word in _LETTERS.findall("".join(outside))]
    for start, end in groups:
        optional = (end + 1 < len(branch) and branch[end + 1] in "?*") or branch[start + 1:start + 2] == "~"
        if end > start and not optional:
            found = [_required(b) for b in alternatives(branch[start + 1:end])]
            if all(f is not None for f in found):
                options.append(tuple(w for f in found for w in f))
    # the most selective requirement: the longest shortest word, then the fewest words
    return max(options, key=lambda words: (min(map(len, words)), -len(words))) if options else None


@dataclass(frozen=True)
class Group:
    """Patterns added together: their first bit in the masks, and the patterns in order."""

    first: int
    items: tuple


class WordGates:
    """Required words mapped to pattern bits; a text's mask is the union over its letter runs.

    A required word is made of letters, so it occurs in a text only inside one run of letters.
    Runs repeat across messages (they are a vocabulary), so each run's bits are computed once
    and kept (up to MAX_CACHED runs).
    """

    MAX_CACHED = 1 << 16

    def __init__(self) -> None:
        self.bits: dict[str, int] = {}  # required word -> patterns needing it
        self.always = 0  # patterns with no required word: always tried
        self.size = 0
        self._runs: dict[str, int] = {}
        self._automaton = None  # the required words, built on first need after the last `add`

    def add(self, patterns: Sequence, key=None) -> Group:
        """Give `patterns` the next bits. `key` picks the compiled pattern out of an item
        (items may carry more, such as a language tag)."""
        first = self.size
        for item in patterns:
            words = required_words(key(item) if key else item)
            bit = 1 << self.size
            self.size += 1
            if words is None:
                self.always |= bit
            for word in words or ():
                self.bits[word] = self.bits.get(word, 0) | bit
        self._runs.clear()
        self._automaton = None
        return Group(first, tuple(patterns))

    def mask(self, text: str) -> int:
        """Bits of the patterns that may match the lower-case `text`."""
        mask, runs = self.always, self._runs
        for run in set(_LETTERS.findall(text)):
            bits = runs.get(run)
            if bits is None:
                bits = self._bits_of(run)
                if len(runs) >= self.MAX_CACHED:
                    runs.clear()
                runs[run] = bits
            mask |= bits
        return mask

    def _bits_of(self, run: str) -> int:
        """The bits of the required words inside one letter run: one pass of an Aho-Corasick
        automaton over the run (in C), not a substring test per required word (real text's long
        tail of words missed the cache, and each miss cost a test per word: 0.3 ms a message)."""
        if not self.bits:
            return 0
        automaton = self._automaton
        if automaton is None:
            import ahocorasick

            automaton = self._automaton = ahocorasick.Automaton()
            for word, word_bits in self.bits.items():
                automaton.add_word(word, word_bits)
            automaton.make_automaton()
        bits = 0
        for _end, word_bits in automaton.iter(run):
            bits |= word_bits
        return bits

    @staticmethod
    def candidates(group: Group, mask: int) -> Iterator:
        """The items of `group` whose bit is set in `mask`, in their order."""
        bits = (mask >> group.first) & ((1 << len(group.items)) - 1)
        items = group.items
        while bits:
            lowest = bits & -bits
            yield items[lowest.bit_length() - 1]
            bits ^= lowest


class AnyPattern:
    """`pattern.search(text) is not None`, for a big alternation, trying only the alternatives
    whose required words the (lower-case) text holds. Top-level alternatives are split; one
    that is a prefix followed by a group of alternatives ("(?:i|we)(?:can't…|don't have…)")
    is distributed over them, so each gets its own words."""

    def __init__(self, pattern: "re.Pattern | LazyPattern") -> None:
        self.pattern = pattern
        self.gates = WordGates()
        parts = [p for branch in alternatives(pattern.pattern) for p in _distributed(branch)]
        self.group = self.gates.add([re.compile(p, pattern.flags) for p in parts])

    def matches(self, text: str) -> bool:
        return any(p.search(text) for p in self.gates.candidates(self.group, self.gates.mask(text)))


def _tokens(source: str) -> Iterator[tuple[int, str, bool]]:
    """(index, token, inside a character class) of each token of a regex source: an escape (two
    characters) or one character; a class's opening (`[`, `[^`, `[]`, `[^]`: a leading `]` is a
    member) is one token, and it and the closing `]` count as inside."""
    i, in_class = 0, False
    while i < len(source):
        if source[i] == "\\":
            yield i, source[i:i + 2], in_class
            i += 2
            continue
        ch = source[i]
        if in_class:
            yield i, ch, True
            in_class = ch != "]"
            i += 1
        elif ch == "[":
            start, i = i, i + 1
            if source[i:i + 1] == "^":
                i += 1
            if source[i:i + 1] == "]":
                i += 1
            yield start, source[start:i], True
            in_class = True
        else:
            yield i, ch, False
            i += 1


def _structure(source: str) -> Iterator[tuple[int, str, int]]:
    """(index, character, depth before it) of each `(`, `)` and `|` of a regex source that is
    not escaped and not inside a character class."""
    depth = 0
    for i, token, inside in _tokens(source):
        if not inside and token in ("(", ")", "|"):
            yield i, token, depth
            depth += {"(": 1, ")": -1}.get(token, 0)


def alternatives(source: str) -> list[str]:
    """Top-level alternatives of a regex source (escapes and character classes respected)."""
    cuts = [i for i, ch, depth in _structure(source) if ch == "|" and depth == 0]
    return [source[a + 1:b] for a, b in zip([-1, *cuts], [*cuts, len(source)])]


def _distributed(branch: str) -> list[str]:
    """`prefix(?:a|b)` as [`prefix(?:a)`, `prefix(?:b)`] when that group ends the branch and
    the prefix has no capturing group; else [branch]."""
    opened = None  # where the last top-level group opened
    closed_at_end = False
    for i, ch, depth in _structure(branch):
        if ch == "(" and depth == 0:
            opened = i
        elif ch == ")" and depth == 1:
            closed_at_end = i == len(branch) - 1
    if opened is None or not closed_at_end or not branch.startswith("(?:", opened):
        return [branch]
    prefix, inner = branch[:opened], branch[opened + 3:-1]
    if any(ch == "(" and not branch.startswith(("(?:", "(?<", "(?=", "(?!"), i) or branch.startswith("(?P<", i)
           for i, ch, _ in _structure(prefix)):
        return [branch]  # a capturing group in the prefix: a back reference could depend on it
    parts = alternatives(inner)
    return [f"{prefix}(?:{alt})" for alt in parts] if len(parts) > 1 else [branch]


class AnySubstring:
    """`any(word in text for word in words)` in one pass over `text` (Aho-Corasick, in C): for a
    long list, where a test per word costs a call each (policy-refusal's 92 words: 9.1 -> 2.0 µs
    on an agent's reply)."""

    def __init__(self, words) -> None:
        import ahocorasick

        self.words = tuple(dict.fromkeys(w for w in words if w))
        self._automaton = ahocorasick.Automaton()
        for word in self.words:
            self._automaton.add_word(word, word)
        if self.words:
            self._automaton.make_automaton()

    def search(self, text: str) -> bool:
        """Whether `text` holds any of the words."""
        return bool(self.words) and next(self._automaton.iter(text), None) is not None


_SPECIAL = set("\\.^$*+?{}[]|()")
_QUANTIFIER = set("?*+{")
_INLINE_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")
_FLAG_OF = {"a": re.ASCII, "i": re.IGNORECASE, "L": re.LOCALE, "m": re.MULTILINE, "s": re.DOTALL,
            "u": re.UNICODE, "x": re.VERBOSE}


class LazyPattern:
    """A pattern compiled on its first use. Start-up pays for every pattern compiled at import,
    and a short run (`review` of one session) needs few of the big alternations: of the ~210 ms
    of patterns the text modules compiled at import, ~150 ms went unused on the bench's long
    session. `.pattern` and `.flags` read without compiling (the flags as the compiled pattern
    would have them: the given ones, the source's leading inline ones, UNICODE for text); the
    first other attribute compiles it and puts the compiled pattern's methods on the instance,
    so later calls cost what a compiled pattern's do (no `__getattr__` on the hot path).
    `fallback`: the source to compile instead when `source` does not compile."""

    _COPIED = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "groups", "groupindex")

    def __init__(self, source: str, flags: int = 0, fallback: str | None = None) -> None:
        self.pattern = source
        self.flags_given = flags
        self._fallback = fallback

    @property
    def flags(self) -> int:
        flags, at = self.flags_given, 0
        while found := _INLINE_FLAGS.match(self.pattern, at):
            for letter in found.group(1):
                flags |= _FLAG_OF[letter]
            at = found.end()
        return flags if flags & (re.ASCII | re.LOCALE) else flags | re.UNICODE

    def __getattr__(self, name: str):
        if name.startswith("_"):  # pickle, copy and friends ask for dunders: not a use
            raise AttributeError(name)
        try:
            compiled = re.compile(self.pattern, self.flags_given)
        except (re.error, RecursionError, OverflowError):
            if self._fallback is None:
                raise
            compiled = re.compile(self._fallback, self.flags_given)
        for attr in self._COPIED:
            self.__dict__[attr] = getattr(compiled, attr)
        self.__dict__["compiled"] = compiled
        return self.__dict__[name] if name in self.__dict__ else getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern[:40]!r}…)" if len(self.pattern) > 40 else f"LazyPattern({self.pattern!r})"


GROWTH_LIMIT = 8  # literal_first gives up on a rewrite this many times longer than the source


def literal_first(pattern: "re.Pattern[str] | LazyPattern | str", flags: int = 0) -> "re.Pattern[str] | LazyPattern":
    """`pattern` (compiled, or a source and flags) rewritten so that each of its top-level
    branches starts with a literal character, when that can be done exactly; otherwise the
    pattern as written. A source is compiled once, in whichever form is kept.

    Python's regex engine finds where a match may start by the pattern's first characters, and
    tries a pattern that opens with `\\b`, a lookbehind or a group at every position of the
    text instead. The rewrite moves the opening assertions behind the first character
    (`\\bno` as `n(?<!\\wn)o`, `(?<![a-z])no` as `n(?<!(?:[a-z])n)o`) and spreads a leading
    group over its alternatives first (`\\b(?:yes|no)x` as `\\byesx|\\bnox`, `(?:a)?b` as `ab|b`,
    in the order the engine tries them). Both find the same matches, with the same spans, at
    every position. Patterns with capturing groups (which the rewrite would renumber), VERBOSE,
    LOCALE or IGNORECASE (where the engine does not skip by cased letters), and branches that
    may start anywhere else (`^`, a class, `\\w`, an optional first character) are left as
    they are, and so is a rewrite more than GROWTH_LIMIT times longer (slow to compile).
    `required_words` (word gates) reads a rewritten pattern's source. Call it once, at import:
    a source is compiled on first use (`LazyPattern`), a compiled pattern's rewrite at once.
    """
    if isinstance(pattern, re.Pattern):
        source, flags, written = pattern.pattern, pattern.flags, pattern
    else:
        source, written = pattern, None
        if isinstance(pattern, LazyPattern):
            source, flags = pattern.pattern, pattern.flags_given
    rewritten = _rewritten(source, flags)
    if written is None:
        # compiled on first use; a rewrite that does not compile (e.g. a lookbehind no longer
        # fixed-width) falls back to the source, whose matches it shares, so its words still gate
        lazy = LazyPattern(rewritten or source, flags, fallback=source if rewritten else None)
        if rewritten is not None:
            _REWRITES[lazy] = (source, flags)
        return lazy
    if rewritten is not None:
        try:
            compiled = re.compile(rewritten, flags)
        except (re.error, RecursionError, OverflowError):
            pass
        else:
            _REWRITES[compiled] = (source, flags)
            return compiled
    return written


_REWRITES: dict["re.Pattern[str] | LazyPattern", tuple[str, int]] = {}


def rewrites() -> list[tuple[str, int, re.Pattern[str]]]:
    """(source, flags, rewritten pattern) of every pattern literal_first has rewritten so far."""
    return [(source, flags, compiled) for compiled, (source, flags) in _REWRITES.items()]


def _rewritten(source, flags: int) -> str | None:
    """literal_first's source for `source`, or None to keep it as written."""
    if not isinstance(source, str) or flags & (re.VERBOSE | re.LOCALE | re.IGNORECASE) or _capturing(source):
        return None
    branches: list[str] = []
    for branch in alternatives(source):
        led = _lead(branch, flags)
        if led is None:
            return None
        branches.extend(led)
    rewritten = "|".join(branches)
    if rewritten == source or len(rewritten) > GROWTH_LIMIT * max(len(source), 100):
        return None
    return rewritten


def _capturing(source: str) -> bool:
    """Whether `source` has a capturing group (or refers to one)."""
    return any(ch == "(" and (not source.startswith("(?", i) or source.startswith(("(?P<", "(?P=", "(?<", "(?("), i)
                              and not source.startswith(("(?<=", "(?<!"), i))
               for i, ch, _ in _structure(source)) or re.search(r"\\[1-9]", source) is not None


def _lead(branch: str, flags: int, depth: int = 0) -> list[str] | None:
    """`branch` as branches (in match order) that each start with a literal character, or None."""
    if depth > 8 or not branch:
        return None
    if _literal(branch) is not None:
        return [branch]
    if branch.startswith("\\b"):  # before a word character: none behind it; before another: one behind it
        return _behind(branch[2:], flags, depth, lambda lit: ("(?<!\\w" if _is_word(lit, flags) else "(?<=\\w") + lit + ")")
    if branch.startswith(("(?<!", "(?<=")):
        end = _closing(branch)
        if end is None:
            return None
        opener, inner = branch[:4], branch[4:end]
        return _behind(branch[end + 1:], flags, depth, lambda lit: f"{opener}(?:{inner}){lit})")
    if branch.startswith("(?:"):
        end = _closing(branch)
        if end is None:
            return None
        rest, inner = branch[end + 1:], branch[3:end]
        options = alternatives(inner)
        if rest[:1] == "?" and rest[1:2] not in ("?", "+"):  # greedy optional: with it first, then without
            options, rest = [*options, ""], rest[1:]
        elif rest[:1] in _QUANTIFIER:
            return None
        spread: list[str] = []
        for option in options:
            led = _lead(option + rest, flags, depth + 1)
            if led is None:
                return None
            spread.extend(led)
        return spread
    return None


def _behind(rest: str, flags: int, depth: int, check) -> list[str] | None:
    """An assertion at the start of `rest`, moved behind each branch's first character
    (`check(literal)` is the assertion, looking back over that character)."""
    led = _lead(rest, flags, depth + 1)
    if led is None:
        return None
    moved = []
    for branch in led:
        literal = _literal(branch)
        moved.append(literal + check(literal) + branch[len(literal):])
    return moved


def _literal(branch: str) -> str | None:
    """The literal character `branch` starts with (as written: `a`, `\\.`), unless quantified."""
    if branch[:1] == "\\":
        token = branch[:2]
        if len(token) < 2 or token[1].isalnum() or token[1] == "_" or not token[1].isascii():
            return None  # \b, \w, \d, \1 …: not one character
    elif branch[:1] and branch[0] not in _SPECIAL:
        token = branch[0]
    else:
        return None
    return None if branch[len(token):len(token) + 1] in _QUANTIFIER else token


def _is_word(literal: str, flags: int) -> bool:
    return re.fullmatch(r"\w", literal[-1], flags & re.ASCII) is not None


def _closing(branch: str) -> int | None:
    """Index of the `)` closing the group that opens `branch`."""
    for i, ch, depth in _structure(branch):
        if ch == ")" and depth == 1:
            return i
    return None


def any_token(words, chars: str = "a-z'-") -> re.Pattern:
    """A pattern that finds any of `words` as a whole token, a token being a longest run of
    `chars`: `any_token(w).search(t)` is `not set(w).isdisjoint(re.findall(f"[{chars}]+", t))`,
    one pass that stops at the first hit instead of a list of every token (a third faster on
    agents' replies)."""
    alternation = "|".join(map(re.escape, sorted(set(words), key=lambda w: (-len(w), w))))
    return re.compile(rf"(?<![{chars}])(?:{alternation})(?![{chars}])")


def letter_first(source: str, flags: int = 0) -> re.Pattern:
    """For yes/no tests: an alternation whose every branch is `\\b` then a letter, compiled with
    each branch starting at its letter and checking the boundary behind it (`\\bje\\b|\\bnon\\b`
    as `j(?<!\\wj)(?:e\\b)|n(?<!\\wn)(?:on\\b)`). A `\\b` before a letter means "no word character
    behind", so the two find the same texts; a pattern that starts with letters lets the regex
    engine skip to where they are, instead of trying every branch at every position."""
    by_letter: dict[str, list[str]] = {}
    for branch in alternatives(source):
        if not (branch.startswith("\\b") and branch[2:3].isalpha()):
            raise ValueError(f"not a \\b-then-letter branch: {branch!r}")
        by_letter.setdefault(branch[2], []).append(branch[3:])
    return re.compile(
        "|".join(f"{letter}(?<!\\w{letter})(?:{'|'.join(rests)})" for letter, rests in by_letter.items()), flags
    )
