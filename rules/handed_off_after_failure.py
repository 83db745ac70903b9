"""handed-off-after-failure: the agent handed the user over after its own calls failed or it declined."""

from __future__ import annotations

from collections.abc import Iterator

from nomos_forensics.rulekit import (
    ANSWERED,
    HANDED_OFF,
    Evidence,
    Finding,
    Message,
    Rule,
    Severity,
    excerpt,
    failed_action,
    hookimpl,
    refusals,
    results_of,
)


class HandedOffAfterFailure(Rule):
    """The agent handed the conversation to a person after its own tool calls failed, or after
    it declined the user's request.

    Detects: a session whose ending is a hand-off (a hand-off tool whose result is no error,
    `transfer_to_human_agents`, `escalate`, ...; or final words that hand the conversation
    over: "I'm transferring you to a human agent", "a specialist will contact you"), when the
    last turn, before the hand-off, holds a failed tool result (the row's error flag, or an
    output that opens as an error), or a reply of that turn declines, the hand-off's own words
    included ("I can't help with that. A specialist will contact you": the refusal rules'
    decision). The finding names what went wrong before it: the failed tools with their counts, or the decline's words. Friction: the
    hand-off may have been the right step, but it followed the agent's own failure.
    Not flagged: a hand-off with nothing failed or declined before it in that turn (the user
    asked for a person; the policy says a person decides: the card's Outcome `handed-off`
    says so already); failures in earlier turns; an offer to hand off ("Would you like me to
    transfer you?"); failed calls of a coding client's general shell or of a tool that asks
    the user.
    Root cause: the agent could not finish with its tools (a failing call, a missing
    capability) or declined, and passed the customer on instead of solving or explaining.
    Fix: read the failed calls before the hand-off: fix the tool or its arguments, or give the
    agent the capability it lacked; if the decline was a model refusal, see policy-refusal.
    """

    code = "NF012"
    name = "handed-off-after-failure"
    severity = Severity.FRICTION

    def check(self, session, ctx) -> Iterator[Finding]:
        ending = session.ending
        if ending.last is None:
            return
        if ending.kind == HANDED_OFF:
            handoff: Message = ending.last
            said = f"`{handoff.tool_name or 'hand-off'}`"
        elif ending.kind == ANSWERED and ending.handoff_said is not None:
            handoff, sentence = ending.handoff_said
            said = f"\u201c{excerpt(sentence, 90)}\u201d"
        else:
            return
        turn = [m for m in session.messages if m.turn == handoff.turn]
        before = turn[:next((n for n, m in enumerate(turn) if m is handoff), len(turn))]
        failed: dict[str, list[Message]] = {}
        for message in before:
            for name, error in results_of(message):
                if error and failed_action(name):
                    failed.setdefault(name, []).append(message)
        inside = {id(m) for m in before} | {id(handoff)}  # "I can't do that; a specialist will contact you"
        declined = [(m, r) for m, r in refusals(session) if id(m) in inside]
        if not failed and not declined:
            return
        what = [f"`{name}` failed" + (f" {len(hits)}×" if len(hits) > 1 else "") for name, hits in failed.items()]
        what += [f"it declined ({r.kind}): \u201c{excerpt(r.sentence or m.text, 80)}\u201d" for m, r in declined[:1]]
        evidence = [Evidence(hits[-1].id, hits[-1].turn, f"`{name}` failed") for name, hits in failed.items()]
        evidence += [Evidence(m.id, m.turn, f"declined: {excerpt(r.sentence or m.text, 150)}") for m, r in declined[:2]]
        evidence.append(Evidence(handoff.id, handoff.turn, f"hand-off: {said}"))
        yield self.finding(
            f"handed off in turn {handoff.turn} after {'; '.join(what)}",
            evidence,
            data={"turn": handoff.turn, "failed_tools": {name: len(hits) for name, hits in failed.items()},
                  "declined": [m.id for m, _ in declined]},
        )


@hookimpl
def nomos_forensics_rules():
    return [HandedOffAfterFailure]
