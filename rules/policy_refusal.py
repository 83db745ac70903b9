"""policy-refusal: the model refuses (safety, ethics, law, guidelines, or no reason at all) although
it could act; and, as a note, a decline by the operator's written rule."""

from __future__ import annotations

from collections.abc import Iterator

from nomos_forensics.rulekit import (
    Finding,
    Rule,
    Severity,
    declined,
    excerpt,
    hookimpl,
    refusals,
)


class PolicyRefusal(Rule):
    """The model refuses although it could act: a safety, ethics, law, guideline or content-filter
    ground, an opinion it declines to give, or no reason at all.

    Detects: an assistant message that declines in whole or in part on a policy ground: safety or
    harm, ethics or appropriateness, the law, the maker's guidelines or a platform's terms, a
    content filter, privacy; declining to give an opinion it could give; or a decline that gives
    no reason ("I'm sorry, but I can't help with that.", "I can't assist with creating malware",
    "As an AI I don't take sides", "Lo siento, no puedo ayudarte con eso", "抱歉，我无法提供").
    The decision is the one text.refusal makes for every assistant message (one kind per message:
    a missing capability is cant-run's, missing live knowledge no-web-tool's): its learned
    detector, and beside it the plain declines of lexicons/declines.toml, a first-person refusal
    to help, assist, provide, create or write in so many words ("No, I will not help you steal
    anything", "I cannot write a tweet about …", "Não posso ajudar com isso", "도와드릴 수
    없습니다"), which decline whatever the detector scores; and a guardrail's or content filter's
    notice ("Your request was flagged by our content filter", "This request violates our usage
    policies"), which is a policy decline with no "I" in it. A decline that
    withholds only part of the answer is reported as partial (friction). A support agent applying
    its operator's written rule (a non-refundable fare, an identity check it must make, "I'm set
    up to answer questions about X only") is doing its job: that is a cosmetic "declined by rule"
    finding naming the rule, not a model refusal.
    Not: a disclaimer before a full answer ("this is risky; here is how", "Please note that I
    cannot give medical advice; …", "As an AI language model, I don't have personal opinions.
    However, …"); a decline followed by doing the whole task anyway; a plan or a conclusion
    worded as one ("Since no changes are needed, I won't provide any blocks"); a condition ("if
    I can't help, I'll say so"); "I can't help but notice"; a request a firewall or CORS blocked;
    a content filter the agent builds or describes; text the agent quotes (a log, a story, another model's reply,
    a jailbreak persona's words when the reply goes on to comply); a platform limit the agent
    relays (a rate limit, a quota); a message that goes on to call a tool.
    Root cause: the model's safety tuning or the system prompt makes it decline a request it could serve (over-refusal when the request was harmless), or the request was one it should decline.
    Fix: read the request: if it was harmless, this is an over-refusal: review the guardrail or system prompt (SOUL.md) that made the model decline and say explicitly what it may do; if the request was harmful, the refusal is right and nothing is to fix.
    """

    code = "NF008"
    name = "policy-refusal"
    severity = Severity.BLOCKER

    def check(self, session, ctx) -> Iterator[Finding]:
        found = refusals(session)
        refused = [(m, f) for m, f in found if f.kind == "policy"]
        by_rule = [(m, f) for m, f in found if f.kind == "business-rule"]
        if refused:
            said = declined(refused)
            yield self.finding(
                f"the model refused ({said.count}; {refused[0][1].why()}): \"{excerpt(said.first, 80)}\"",
                said.quoted,
                severity=Severity.FRICTION if said.partial else None,
                blocker=None if said.partial else f"model refusal: \"{excerpt(said.first, 70)}\"",
                data={"kind": "policy", "messages": said.messages},
            )
        if by_rule:
            said = declined(by_rule)
            yield self.finding(
                f"declined by rule ({said.count}): \"{excerpt(said.first, 80)}\"",
                said.quoted,
                severity=Severity.COSMETIC,
                fix="nothing to fix when the rule is right: the agent applied its operator's written rule; if the "
                    "action should be allowed, say so in the rule or the system prompt",
                data={"kind": "business-rule", "messages": said.messages},
            )


@hookimpl
def nomos_forensics_rules():
    return [PolicyRefusal]
