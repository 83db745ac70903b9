"""no-web-tool: the agent has no live or local knowledge and no way to look it up."""

from __future__ import annotations

import re
from collections.abc import Iterator

from nomos_forensics.rulekit import (
    Finding,
    Option,
    Rule,
    Severity,
    declined,
    excerpt,
    hookimpl,
    refusals,
)

# What the agent had no knowledge of, for the fix: the words after "about/on/regarding" (group 1).
_TOPIC = re.compile(
    r"\b(?:about|on|regarding|concerning|for|of|with|sobre|acerca\s+de|über|zu|sur|concernant|su|riguardo|о|об)\s+"
    r"((?!(?:that|this|it|the\s+web|the\s+internet|my|me)\b)(?:[^.,;:!?()]|\.(?=\w)){3,80}?)\s*(?:[.,;:!?()](?!\w)|$|\b(?:in\s+my|from\s+my|and\s+i|so\s+i|but\b|because\b|since\b))"
)


def topic_of(sentence: str, asked: str) -> str | None:
    """What the agent said it knows nothing about: named in its sentence, else the user's question."""
    found = _TOPIC.search(" ".join(sentence.split()))
    if found and not re.fullmatch(r"(?:\w+\s+)?(?:knowledge|information|info|notes|kb|record|records)", found.group(1)):
        return found.group(1).strip()
    question = next((s for s in re.split(r"(?<=[.?!])\s+", " ".join(asked.split())) if s), "")
    return excerpt(question, 80) or None


class NoWebTool(Rule):
    """The agent has no live or local knowledge on the question and no web tool to look it up.

    Detects: an assistant message that declines or cannot answer because it lacks current, live
    or local knowledge and has no way to look it up: no real-time data, no internet or browsing,
    a knowledge cut-off, no information about the person, product or event asked about ("I
    don't have real-time information", "my knowledge ends in 2023", "I can't browse the
    internet", "No local knowledge on that", "no tengo información sobre", "我没有这方面的信息"),
    or no access to information, details or news about it ("I don't have access to information
    about that company", "у меня нет доступа к деталям": access to the user's own things, or
    what the agent's tools do not reach, stays cant-run's), in a session that made no web-fetch call (`http_get` by default). The decision is the one
    text.refusal makes for every assistant message (one kind per message: a missing capability to
    act is cant-run's, a safety or rules ground policy-refusal's). A reply that answers what it
    knows and declines the rest is reported as partial (friction).
    Not: a session that called a web tool; a tool the agent tried that returned nothing ("the
    search found nothing": a result); facts about systems or third parties ("the container has
    no internet access"); missing context about the user's own code; not knowing what the user
    means ("I don't know what you mean", "não sei o que o senhor quer dizer": a request to
    clarify); reasoning printed before a closing `</think>`; quoted text; a disclaimer before the
    answer in one sentence ("While I can't browse the internet, I can tell you that Paris is …").
    Root cause: the deployment has no `http_get` / web-fetch MCP tool, so the agent cannot look things up.
    Fix: add the `http_get` (web fetch) MCP tool and tell the agent in SOUL.md to use it when local knowledge is missing.
    """

    code = "NF002"
    name = "no-web-tool"
    severity = Severity.BLOCKER
    config = {"web_tools": Option(["http_get", "web_fetch", "fetch_url", "web_search"],
                                  "tool names that fetch from the web; a session that calls one is never flagged")}

    def check(self, session, ctx) -> Iterator[Finding]:
        web_tools = set(self.options["web_tools"])
        hits = [(message, found) for message, found in refusals(session) if found.kind == "no-web-tool"]
        if not hits or session.called(*web_tools):
            return
        said = declined(hits)
        first = next(n for n, m in enumerate(session.messages) if m is hits[0][0])
        asked = next((m.text for m in reversed(session.messages[:first]) if m.role == "user" and m.text), "")
        topic = topic_of(hits[0][1].sentence, asked)
        tool = self.options["web_tools"][0] if self.options["web_tools"] else "http_get"
        yield self.finding(
            f"agent had no knowledge to answer and no web tool ({said.count}; no {'/'.join(sorted(web_tools))} "
            f"call in the session)",
            said.quoted,
            severity=Severity.FRICTION if said.partial else None,
            blocker=None if said.partial else "no local knowledge and no web-fetch tool",
            fix=(f"the agent had no knowledge of \"{excerpt(topic, 80)}\" and no way to look it up: add the `{tool}` "
                 f"(web fetch) MCP tool and tell the agent in SOUL.md to use it when local knowledge is missing")
            if topic else None,
            data={"messages": said.messages},
        )


@hookimpl
def nomos_forensics_rules():
    return [NoWebTool]
