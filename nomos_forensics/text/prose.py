"""Small text helpers shared by rules: prose without code, sentence splitting, normalisation."""

from __future__ import annotations

import re
import unicodedata

from .re2gate import Re2Gated

_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s+|(?<=[。！？])|\n+")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "`": "'", "“": '"', "”": '"', "´": "'"})
_QUOTE_PAIRS = tuple((chr(k), v) for k, v in _QUOTES.items())
# what `without_blocks` removes, as a pattern: its specification (the tests compare the two); too slow
# to run on long replies, so not used at run time
_CODE_BLOCK = re.compile(r"```.*?(?:```|$)|~~~.*?(?:~~~|$)|<think(?:ing)?>.*?(?:</think(?:ing)?>|$)", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_QUOTED_LINE = re.compile(r"^[ \t]*>.*$", re.M)
CONTRACTIONS = {  # each long form -> the one spelling `canonical` gives it
    "i am": "i'm", "im": "i'm", "we are": "we're", "can not": "can't", "cannot": "can't",
    "cant": "can't", "do not": "don't", "dont": "don't", "does not": "doesn't", "doesnt": "doesn't",
    "did not": "didn't", "didnt": "didn't", "will not": "won't", "is not": "isn't", "isnt": "isn't",
    "are not": "aren't", "arent": "aren't", "have not": "haven't", "havent": "haven't",
    "was not": "wasn't", "wasnt": "wasn't", "it is": "it's", "that is": "that's",
    "there is": "there's", "could not": "couldn't", "couldnt": "couldn't",
}
_CONTRACTION = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, CONTRACTIONS), key=len, reverse=True)) + r")\b")


def straight_quotes(text: str) -> str:
    """`text.translate(_QUOTES)`, one `replace` per curly quote the text holds: translate with a
    table looks each character of a non-ASCII text up in a dictionary (a real reply of 2,500
    characters with one "’": 364 µs against 8)."""
    for curly, plain in _QUOTE_PAIRS:
        if curly in text:
            text = text.replace(curly, plain)
    return text


def normalise(text: str) -> str:
    """NFKC, straight quotes, single spaces: what phrase patterns are written against."""
    # str.split() and the regex \s split on the same characters: this is `\s+` -> " ", stripped
    return " ".join(straight_quotes(unicodedata.normalize("NFKC", text)).split())


# a whole reply often holds none: RE2 says so in one pass (a sentence is read by Python alone)
_CONTRACTION_GATE = Re2Gated(_CONTRACTION, min_chars=200)


def canonical(sentence: str) -> str:
    """Lower case with contractions spelled one way ("I am unable" -> "i'm unable", "cannot" ->
    "can't", "dont" -> "don't"): what English phrase patterns are written against."""
    lowered = sentence.lower()
    if _CONTRACTION_GATE.search(lowered) is None:
        return lowered
    return _CONTRACTION.sub(lambda m: CONTRACTIONS[m.group()], lowered)


def without_blocks(text: str) -> str:
    """Drop fenced code blocks and <think> blocks (pasted output, reasoning): `_CODE_BLOCK.sub(" ",
    text)`, found with `str.find` (the pattern's lazy `.*?` tried its closing at every character)."""
    if "```" not in text and "~~~" not in text and "<think" not in text:
        return text
    pieces: list[str] = []
    start = 0  # where the text not yet copied begins
    # `$` (no MULTILINE) also matches before a final newline: an unclosed block ends there
    end_of_text = len(text) - 1 if text.endswith("\n") else len(text)
    ahead = {opener: text.find(opener, 0) for opener in _OPENERS}  # each opener's next place
    while True:
        for opener, at in ahead.items():
            if 0 <= at < start:  # passed over: look again from here (never from the top)
                ahead[opener] = text.find(opener, start)
        while 0 <= ahead["<think"] and not text.startswith(("<think>", "<thinking>"), ahead["<think"]):
            ahead["<think"] = text.find("<think", ahead["<think"] + 1)  # "<thinkx": not an opening
        places = [(at, opener) for opener, at in ahead.items() if at >= 0]
        if not places:
            break
        opened, opener = min(places)
        if opener == "<think":
            body, closers = text.index(">", opened) + 1, _THINK_CLOSERS
        else:
            body, closers = opened + 3, (opener,)
        found = [(i, c) for i, c in ((text.find(c, body), c) for c in closers) if i >= 0]
        if found and min(found)[0] < end_of_text:
            close, closer = min(found)
            end = close + len(closer)
        else:
            end = max(end_of_text, body)
        pieces.append(text[start:opened])
        pieces.append(" ")
        start = end
    pieces.append(text[start:])
    return "".join(pieces)


_OPENERS = ("```", "~~~", "<think")  # the pattern's alternatives, in its order
_THINK_CLOSERS = ("</think>", "</thinking>")


def without_snippets(text: str) -> str:
    """Drop inline code and quoted lines."""
    if "`" in text:
        text = _INLINE_CODE.sub(" ", text)
    if ">" in text:
        text = _QUOTED_LINE.sub(" ", text)
    return text


def without_code(text: str, limit: int | None = None) -> str:
    """Drop fenced code blocks, <think> blocks, inline code and quoted lines (output the agent
    pasted back, reasoning): what is left is what the author wrote as prose. With `limit`, the
    text is cut to that many characters once the blocks are out."""
    text = without_blocks(text)
    return without_snippets(text if limit is None else text[:limit])


_LEAD = re.compile(r"^(?:[-*+•#>]+\s*|\d+[.)]\s+|\*\*|__|\s)+")


def sentences(text: str) -> list[str]:
    """Sentences of prose (code blocks and quoted lines removed), normalised, without leading
    list markers or emphasis ("- **No** local knowledge" -> "No** local knowledge")."""
    parts = _SENTENCE_END.split(without_code(text))
    out = []
    for part in parts:
        if part:
            sentence = normalise(_LEAD.sub("", part)).replace("**", "").replace("__", "")
            if sentence:
                out.append(sentence)
    return out


_QUOTED = re.compile(r'"[^"]{0,200}"|“[^”]{0,200}”|«[^»]{0,200}»')


def statements(text: str):
    """(sentence, plain) for each prose sentence of `text` that is not a question: `plain` is
    the sentence with quoted strings removed (what the agent quotes, it does not claim) and
    contractions spelled one way (`canonical`), which is what claim patterns are written against."""
    for sentence in sentences(text):
        if sentence.rstrip().endswith(("?", "？")):
            continue
        quoted = '"' in sentence or "“" in sentence or "«" in sentence
        yield sentence, canonical(_QUOTED.sub(" ", sentence) if quoted else sentence)
