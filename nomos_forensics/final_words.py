"""The final reply read for an agent that stopped before the task was done, though its last
words are an answer: it announced its own next step and took none, its lookups came up empty
and it handed a question back, it claims a success its last call's failure contradicts, its
last call failed and it says so, it asks leave to do what it was asked or for what it needs,
or it closed the chat because the user stopped answering. Read by the card's Outcome (steps 5,
13, 18 and 19 of docs/outcome.md); phrases: lexicons/endings.toml."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .ending import ADMITS, GATES, SUCCESS_CLAIM
from .text import lexicon
from .text.closings import OFFER, is_leaving
from .text.prose import canonical, sentences

if TYPE_CHECKING:
    from .ending import Ending
    from .model import Message

_WORDS = lexicon.load("nomos_forensics.text", "endings")
ANNOUNCES = re.compile(lexicon.pattern(_WORDS["patterns"], "announces", _WORDS.get("macros", {})), re.IGNORECASE)
NOT_FOUND, HANDS_BACK, ASKS_LEAVE, ASKS_FOR, LEFT_CHAT, STILL_THERE, USER_SOLVED = (
    re.compile(lexicon.pattern(_WORDS["patterns"], key, _WORDS.get("macros", {})))
    for key in ("not_found", "hands_back", "asks_leave", "asks_for", "left_chat", "still_there", "user_solved"))
LEFT_WORDS = tuple(lexicon.words(_WORDS["words"]["left_chat"]))  # each LEFT_CHAT match holds one


def came_up_empty(ending: "Ending") -> "tuple[Message, str, str] | None":
    """(answer, the sentence saying nothing was found, its closing question) when the last turn
    did work and the final answer says a lookup found nothing (NOT_FOUND), then ends by handing a
    question back to the user (HANDS_BACK: not an offer of more): it stopped empty-handed."""
    answer = ending.answer
    if answer is None or not ending.worked or not (answer.text or "").rstrip().endswith(("?", "\uff1f")):
        return None
    said = [s for s in sentences(answer.text or "") if s.strip()]
    if len(said) < 2 or not said[-1].rstrip().endswith(("?", "\uff1f")) or not HANDS_BACK.search(canonical(said[-1])):
        return None
    empty = next((s for s in said[:-1] if NOT_FOUND.search(canonical(s))), None)
    return (answer, empty, said[-1]) if empty is not None else None


def announced(ending: "Ending") -> "tuple[Message, str] | None":
    """(answer, its last sentence) when the conversation ends on an answer whose last sentence
    announces the agent's own next step (ANNOUNCES): it stopped mid-task."""
    answer = ending.answer
    if answer is None:
        return None
    said = [s for s in sentences((answer.text or "")[-400:]) if s.strip()]  # the last sentence is in its tail
    if len(said) >= 2 and OFFER.search(said[-1]):
        said.pop()  # "I will send £98.70 to the IBAN UK12…. Is there anything else I can help you with?"
    if not said or said[-1].rstrip().endswith(("?", "\uff1f")):
        return None
    return (answer, said[-1]) if ANNOUNCES.search(canonical(said[-1].strip())) else None


def contradicted(ending: "Ending") -> "tuple[Message, str, Message] | None":
    """(answer, its success claim, the tool result) when the final answer says the task is done
    (SUCCESS_CLAIM), admits no problem (ADMITS), and the last tool result before it in its turn
    is a failed action (Ending.failed_result: not a coding shell's probe, not the user declining)."""
    result = ending.failed_result
    if result is None:
        return None
    answer = ending.answer if ending.closing is None else ending.conversation[-2]
    plain = ending.plain(answer)
    if ADMITS.search(plain):
        return None
    claim = ending.says(SUCCESS_CLAIM) if any(map(plain.__contains__, GATES[SUCCESS_CLAIM])) else None
    if claim is None or claim[0] is not answer:
        return None
    return answer, claim[1], result


def reports_failure(ending: "Ending") -> "tuple[Message, str, Message] | None":
    """(answer, its sentence admitting a problem, the tool result) when the last tool result
    before the final answer, in its turn, is a failed action (not a coding shell's probe, not the
    user declining) and the answer says so (ADMITS: "I received an error message saying that
    the channel was not found"): the action did not happen, and the agent stopped there."""
    answer, result = ending.answer, ending.failed_result
    if answer is None or result is None:
        return None
    sentence = next((s for s in sentences(answer.text or "") if ADMITS.search(canonical(s))), None)
    return (answer, sentence, result) if sentence is not None else None


def asks_leave(ending: "Ending") -> str | None:
    """The final answer's closing question when it asks leave to do what the request asked ("If
    it's rated higher than 4, go ahead and make a reservation" answered "The rating is 4.2. Would
    you like me to make a reservation?"): the action's verb (ASKS_LEAVE's group) is in the request.
    Not an offer of something else ("Would you like me to add it to your calendar too?")."""
    request = ending.request
    question = _closing_question(ending) if request is not None else None
    if question is None:
        return None
    found = ASKS_LEAVE.search(canonical(question))
    verb = found.group("verb") if found else ""
    return question if verb and re.search(rf"\b{re.escape(verb[:5])}", canonical(request.text or "")) else None


def asks_for(ending: "Ending") -> str | None:
    """The final answer's closing question when it asks the user for what the agent needs to go on
    (ASKS_FOR: "Could you please specify which email address I should use?", "How would you like
    to adjust your rent payment?"), whatever tools the turn called: the request waits on the user."""
    question = _closing_question(ending)
    return question if question is not None and ASKS_FOR.search(canonical(question)) else None


def _closing_question(ending: "Ending") -> str | None:
    """The final answer's last sentence when the answer ends on a question, else None."""
    text = (ending.answer.text or "") if ending.answer is not None else ""
    if not text.rstrip().endswith(("?", "\uff1f")):
        return None
    return ([s for s in sentences(text[-300:]) if s.strip()] or [""])[-1]


def left_chat(ending: "Ending") -> "tuple[Message, str] | None":
    """(final reply, its sentence) when the agent closes the chat because the user stopped answering
    (LEFT_CHAT: "Parece que você está ocupado agora, então vou fechar o chat"), right after it asked
    the user something or whether they were still there (STILL_THERE: "Você ainda está comigo?"):
    the user left mid-task. Not after an answer ("… R$499 90 créditos. Parece que você está ocupado
    agora, …": the user left with it) or an offer of more, nor when the user had closed ("Okay ich
    werde es versuchen, danke") or said it worked."""
    answer, request = ending.answer, ending.request
    tail = (answer.text or "")[-600:] if answer is not None else ""
    if not any(map(tail.lower().__contains__, LEFT_WORDS)) or not LEFT_CHAT.search(canonical(tail)):
        return None
    if request is not None and (is_leaving(request.text) or USER_SOLVED.search(canonical(request.text or ""))):
        return None  # the user had closed, or said it works
    said = [s for s in sentences(tail) if any(c.isalpha() for c in s)]  # an emoji's line is no sentence
    at = next((n for n, s in enumerate(said) if LEFT_CHAT.search(canonical(s))), None)
    if not at:  # the reason opens the reply: what it waited on is not in it
        return None
    before = said[at - 1].strip()
    waited = before.endswith(("?", "\uff1f")) or STILL_THERE.search(canonical(before))
    return (answer, said[at]) if waited and not OFFER.search(before) else None
