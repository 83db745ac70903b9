"""How users close a conversation and how they give a task up, read on one message (the cues are
data: lexicons/closings.toml). nomos_forensics.ending reads the last user message with these."""

from __future__ import annotations

import re

from . import lexicon
from .prose import sentences

_CLOSINGS = lexicon.load("nomos_forensics.text", "closings")["patterns"]
THANKS = re.compile(lexicon.pattern(_CLOSINGS, "thanks"), re.IGNORECASE)
CLOSING = re.compile(lexicon.pattern(_CLOSINGS, "closing"))
END = re.compile(lexicon.pattern(_CLOSINGS, "end"), re.IGNORECASE)
LATER = re.compile(lexicon.pattern(_CLOSINGS, "later"), re.IGNORECASE)
FAREWELL = re.compile(lexicon.pattern(_CLOSINGS, "farewell"), re.IGNORECASE)
REQUEST = re.compile(lexicon.pattern(_CLOSINGS, "request"), re.IGNORECASE)
OFFER = re.compile(lexicon.pattern(_CLOSINGS, "offer"), re.IGNORECASE)
GOODBYE = re.compile(lexicon.pattern(_CLOSINGS, "goodbye"), re.IGNORECASE)
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


GOODBYE_CHARS = 300  # a longer reply says more than goodbye


def says_only_goodbye(text: str | None) -> bool:
    """An agent's reply made only of thanks, wishes, goodbyes and the offer of more help
    ("Obrigado por entrar em contato, foi um prazer ajudá-lo hoje. Tenha um excelente dia.",
    "Muito obrigado!"), each sentence of it; not one that also tells the user something ("Boa
    noite! Lembre-se: o check-in abre 48 horas antes")."""
    if not text or len(text) > GOODBYE_CHARS:
        return False
    said = [" ".join(s.lower().split()) for s in sentences(text) if any(c.isalpha() for c in s)]
    return bool(said) and all(THANKS.search(s) or END.search(s) or LATER.search(s) or FAREWELL.search(s)
                              or OFFER.search(s) or GOODBYE.search(s) for s in said)
