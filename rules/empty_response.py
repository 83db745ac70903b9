"""empty-response: the model returned a blank completion."""

from __future__ import annotations

import re
from collections.abc import Iterator

from nomos_forensics.rulekit import Finding, Rule, Severity, hookimpl, lexicon

_CARDS = lexicon.load("nomos_forensics_rules", "error_cards")["patterns"]
_RETRY = re.compile(_CARDS["retry"], re.I)
_EMPTY = re.compile(lexicon.pattern(_CARDS, "empty"), re.I)


def empty_card(error: str | None) -> bool:
    """Does an error card record blank completions? (Its last attempt says so: "The model
    returned an empty response 3 times. Try again or switch models.")"""
    if not error:
        return False
    attempts = [part for part in _RETRY.split(error) if part.strip()]
    return bool(_EMPTY.search(attempts[-1] if attempts else error))


class EmptyResponse(Rule):
    """An assistant message with no text, no tool calls and no error: a blank completion.

    Detects: an assistant message whose text is missing, null, empty or whitespace only, that
    makes no tool call, carries no tool results, no error card and no reasoning trace: the
    "empty assistant bubble" the user sees; and an error card that records blank completions
    (Nomos retries an empty response 3 times, then persists "The model returned an empty
    response 3 times. Try again or switch models."). Not a finding: any other error card
    (`content.error`, e.g. "litellm.RateLimitError: … rate_limit_error": the error-card rule
    reports it by cause); a reply that carries only reasoning (`reasoning`/`reasoning_content`/`thinking`,
    no text: a model interrupted while it was still thinking, as in an aider session where
    the user pressed ^C during "► THINKING"), which the user saw being written; an assistant
    message that only calls tools (text null, tool_calls set).
    Root cause: the model returned a blank completion (the "empty assistant bubble").
    Fix: retry the completion (up to 3x) and surface the error to the user instead of an empty bubble.
    """

    code = "NF003"
    name = "empty-response"
    severity = Severity.BLOCKER

    def check(self, session, ctx) -> Iterator[Finding]:
        blanks = [
            m for m in session.messages
            if m.role == "assistant" and not m.has_text and not m.tool_calls and not m.tool_results
            and (empty_card(m.error) if m.error else not m.reasoning)
        ]
        if not blanks:
            return
        evidence = [(m, " ".join(m.error.split()) if m.error else
                     f"(blank reply, {m.shape} content{', finish_reason ' + m.finish_reason if m.finish_reason else ''})")
                    for m in blanks]
        turns = sorted({m.turn for m in blanks})
        where = ", ".join(str(t) for t in turns)
        fix = None
        if any(m.finish_reason == "length" for m in blanks):
            fix = ("the completion stopped at its token limit before writing anything (finish_reason length): "
                   "raise max_tokens, then retry the completion and surface the error instead of an empty bubble.")
        yield self.finding(
            f"{len(blanks)} empty assistant repl{'y' if len(blanks) == 1 else 'ies'} (turn{'s' if len(turns) > 1 else ''} {where})",
            evidence,
            blocker="empty assistant response",
            data={"turns": turns},
            fix=fix,
        )


@hookimpl
def nomos_forensics_rules():
    return [EmptyResponse]
