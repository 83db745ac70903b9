"""How users close a conversation and how they give a task up, read on one message (the cues are
data: lexicons/closings.toml). nomos_forensics.ending reads the last user message with these."""

from __future__ import annotations

import re

from . import lexicon

_CLOSINGS = lexicon.load("nomos_forensics.text", "closings")["patterns"]
THANKS = re.compile(lexicon.pattern(_CLOSINGS, "thanks"), re.IGNORECASE)
CLOSING = re.compile(lexicon.pattern(_CLOSINGS, "closing"))
END = re.compile(lexicon.pattern(_CLOSINGS, "end"), re.IGNORECASE)
LATER = re.compile(lexicon.pattern(_CLOSINGS, "later"), re.IGNORECASE)
FAREWELL = re.compile(lexicon.pattern(_CLOSINGS, "farewell"), re.IGNORECASE)
REQUEST = re.compile(lexicon.pattern(_CLOSINGS, "request"), re.IGNORECASE)
OFFER = re.compile(lexicon.pattern(_CLOSINGS, "offer"), re.IGNORECASE)
QUIT = re.compile(rf"(?:(?:{lexicon.pattern(_CLOSINGS, 'quit')})[\s,.!。！…]*)+")
LEAVING_CHARS = 200  # a longer last message is read as a request, whatever thanks it holds


def is_closing(text: str | None) -> bool:
    """A bare thank-you or acknowledgement, which needs no reply once the task is done."""
    return bool(text) and CLOSING.fullmatch(" ".join(text.strip().lower().split())) is not None


def is_leaving(text: str | None) -> bool:
    """A short message that thanks, says goodbye, returns a wish, praises the help, says the user
    will come back later or try it ("thanks, that's all", "ok I'll check and get back to you",
    "igualmente", "schönen Abend", "🙂"), and asks for nothing more (no question, no "please",
    "also", "but", "still", ...): the user closes the conversation."""
    if not text or len(text) > LEAVING_CHARS:
        return False
    folded = " ".join(text.lower().split())
    if REQUEST.search(folded):
        return False
    return bool(THANKS.search(folded) or END.search(folded) or LATER.search(folded) or FAREWELL.search(folded)
                or not any(c.isalnum() for c in folded))  # a smiley, an emoji, "!!"


def gives_up(text: str | None) -> bool:
    """The whole message gives the task up ("forget it", "never mind", "I'll do it myself")."""
    if not text or len(text) > LEAVING_CHARS:
        return False
    return QUIT.fullmatch(" ".join(text.strip().lower().split())) is not None
