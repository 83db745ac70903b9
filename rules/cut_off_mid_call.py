"""cut-off-mid-call: the transcript ends on tool calls whose results were never stored."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence

from nomos_forensics.rulekit import (
    TOOL_CALL,
    TOOL_RESULT,
    Evidence,
    Finding,
    Message,
    Rule,
    Severity,
    ToolCall,
    excerpt,
    hookimpl,
    is_finishing,
)

SHOWN_CALLS = 3  # calls named in a finding; the rest are counted


class CutOffMidCall(Rule):
    """The transcript ends on tool calls whose results were never stored: whether they ran is unknown.

    Detects: the conversation's last tool round (the last assistant message with tool calls,
    followed by nothing but tool results) holds calls that got no result: the session ends on
    the call itself, or on the results of some of the round's calls but not all (a round of
    three calls with two results stored). Calls and results are paired by tool name (the
    scan does not load call ids); a result with no name pairs with any call left over. The
    finding names each call left without a result (with its arguments where the review loaded
    them) and says its effect is unknown: the call may have run on the target, or not.
    Not flagged: a finishing call (`complete_task`, `submit`, `finish`, ...), which needs no
    result; a session the platform closed on its last call (status `completed`: a
    mini-swe-agent submit step); a successful hand-off; a session still running (`active`, last
    message younger than `grace-minutes`); the user stopping the agent or leaving while the call
    waited (the client logged "[Request interrupted by user for tool use]" or Claude Code's
    /exit after it: the Outcome says `abandoned`); a session whose earlier rounds have no stored
    result either (an export that drops tool results: a missing one says nothing); a round
    whose calls all got results (however the session ends after them: unfinished-session's); a
    call without a result earlier in the session, after which the conversation went on (the
    agent or the user moved past it).
    Overlap: when the session ends on the call itself, unfinished-session reports the same
    ending as a session left without an answer; this finding adds which calls are in doubt.
    Root cause: the stream, the MCP server or the client dropped while the call was in flight
    (a timeout, a crash, a restart), or the loop stopped before storing the result; nothing
    recorded the call's fate.
    Fix: check the target for the call's effect before resuming (re-sending a write may do it
    twice); make the server store a result or an error (a timeout) for every call it
    dispatches, so a dropped stream still leaves a record.
    """

    code = "NF014"
    name = "cut-off-mid-call"
    severity = Severity.FRICTION

    def check(self, session, ctx) -> Iterator[Finding]:
        ending = session.ending
        if ending.kind not in (TOOL_CALL, TOOL_RESULT) or ending.in_flight(ctx.grace):
            return
        round_, unresulted = unanswered(ending.conversation)
        pending = [call for call in unresulted if not is_finishing(call)]
        if round_ is None or not pending or ending.stopped is not None or _keeps_no_results(ending.conversation, round_):
            return
        names = ", ".join(f"`{call.display_name}`" for call in pending[:SHOWN_CALLS])
        more = f" and {len(pending) - SHOWN_CALLS} more" if len(pending) > SHOWN_CALLS else ""
        total, answered = len(round_.tool_calls), len(round_.tool_calls) - len(unresulted)
        whole = (f"the session ends on {'them' if len(pending) > 1 else 'it'}" if not answered else
                 "the round's other call got its result" if answered == 1 else f"the round's {answered} other calls got theirs")
        shown = [_described(call) for call in pending[:SHOWN_CALLS]]
        yield self.finding(
            f"turn {round_.turn}: {len(pending)} tool call{'s' if len(pending) > 1 else ''} ({names}{more}) "
            f"never got a result, and {whole}: whether {'they' if len(pending) > 1 else 'it'} ran is unknown",
            [Evidence(round_.id, round_.turn, "no result stored for " + "; ".join(shown) + more)],
            fix=(f"check the target for the effect of {'; '.join(shown)}{more} before resuming (re-sending a write "
                 "may do it twice); make the server store a result or an error (a timeout) for every call it "
                 "dispatches, so a dropped stream still leaves a record."),
            data={"turn": round_.turn, "pending": len(pending), "calls": total,
                  "tools": sorted({call.display_name for call in pending})},
        )


def unanswered(conversation: Sequence[Message]) -> tuple[Message | None, list[ToolCall]]:
    """(the last tool round's message, its calls with no stored result) when only tool results
    follow that round; (None, []) when the conversation goes on past its last round in words."""
    results: Counter = Counter()
    for message in reversed(conversation):
        if message.tool_calls:
            results.update(r.name for r in message.tool_results)  # legacy: results inside the calling message
            pending = []
            for call in message.tool_calls:
                if results[call.name] > 0:
                    results[call.name] -= 1
                else:
                    pending.append(call)
            spare = sum(results.values())  # results whose name pairs with no call: one each for the rest
            return message, pending[spare:]
        if message.role == "tool":
            results[message.tool_name] += 1
        elif message.role == "assistant" and message.tool_results and not message.has_text and not message.error:
            results.update(r.name for r in message.tool_results)
        else:
            return None, []
    return None, []


def _keeps_no_results(conversation: Sequence[Message], round_: Message) -> bool:
    """Earlier rounds made calls and no result is stored anywhere: the record does not keep
    results (an export that drops them), so a missing one says nothing."""
    earlier = False
    for message in conversation:
        if message.role == "tool" or message.tool_results:
            return False
        earlier = earlier or (message is not round_ and bool(message.tool_calls))
    return earlier


def _described(call: ToolCall) -> str:
    """`name` with its arguments (when loaded), one line."""
    arguments = call.arguments
    if arguments in (None, "", {}, []):
        return f"`{call.display_name}`"
    try:
        text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(arguments)
    return f"`{call.display_name}` ({excerpt(text, 80)})"


@hookimpl
def nomos_forensics_rules():
    return [CutOffMidCall]
