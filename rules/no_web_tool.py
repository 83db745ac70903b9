"""no-web-tool: the agent has no local knowledge and no way to look it up."""

from __future__ import annotations

import re
from collections.abc import Iterator

from nomos_forensics import Finding, Rule, Severity, hookimpl
from nomos_forensics.text import sentences

_KNOWLEDGE = r"(?:local\s+)?(?:knowledge|information|info|data|details|documentation|docs|records|notes|context|results|entries)"
_NO_KNOWLEDGE = re.compile(
    r"(?:^|\bthere(?:'s|\s+is)\s+|\b(?:i|we)\s+(?:have|found|see)\s+|,\s*)no\s+(?:local\s+|stored\s+|relevant\s+|specific\s+|prior\s+|internal\s+)*(?:knowledge|information|info|documentation|notes|records|entries)\s+(?:on|about|regarding)\b"
    r"|\b(?:i|we)\s*(?:do\s+not|don't|didn't|did\s+not)\s+(?:currently\s+|yet\s+)?(?:have|find|see|possess)\s+(?:any\s+|much\s+|enough\s+|the\s+)?(?:local\s+|stored\s+|relevant\s+|specific\s+|up-to-date\s+|current\s+|recent\s+|reliable\s+)*"
    + _KNOWLEDGE + r"\s+(?:on|about|regarding|for|of|in|that)\b"
    r"|\b(?:i|we)\s+have\s+no\s+(?:local\s+|stored\s+|relevant\s+|specific\s+|up-to-date\s+|current\s+)*" + _KNOWLEDGE + r"\b"
    r"|\b(?:nothing|no\s+entries|no\s+results?|no\s+matches)\s+(?:found\s+)?(?:in|from)\s+(?:my|the|our)\s+(?:local\s+)?(?:knowledge(?:\s+base)?|notes|kb|docs|documentation|memory)"
    r"|\b(?:my|the)\s+(?:local\s+)?(?:knowledge(?:\s+base)?|kb|notes)\s+(?:doesn't|does\s+not|don't|do\s+not|has\s+no|contains\s+no)\b"
    r"|\b(?:not|isn't|is\s+not)\s+(?:in|covered\s+(?:by|in))\s+(?:my|the)\s+(?:local\s+)?(?:knowledge(?:\s+base)?|notes|kb|training\s+data)"
    r"|\b(?:i|we)\s*(?:can't|cannot|can\s+not|am\s+unable\s+to|'m\s+unable\s+to|am\s+not\s+able\s+to|'m\s+not\s+able\s+to|don't\s+have\s+(?:the\s+ability|a\s+way)\s+to)\s+"
    r"(?:browse|search|access|look\s+(?:it|that|this)?\s*up|check|fetch|visit|open)\s+(?:it\s+|that\s+|this\s+)?(?:on\s+|up\s+on\s+)?(?:the\s+)?(?:web|internet|online|websites?|urls?|links?|pages?)"
    r"|\b(?:i|we)\s*(?:don't|do\s+not)\s+have\s+(?:any\s+)?(?:internet|web|online|browsing)\s+(?:access|connectivity|tool|capabilit)"
    r"|\bno\s+(?:internet|web|online)\s+access\b"
    r"|\b(?:my\s+)?(?:training\s+data|knowledge)\s+(?:cut-?off|only\s+goes|ends)\b|\bas\s+of\s+my\s+last\s+(?:update|training)"
    r"|\bi(?:'m|\s+am)\s+not\s+(?:aware|familiar)\s+(?:of|with)\s+(?:any|that|this|the)\b"
    r"|\bno\s+(?:tengo|dispongo\s+de)\s+(?:informaci[óo]n|conocimiento|datos)"
    r"|\bn[ãa]o\s+(?:tenho|possuo)\s+(?:informa[çc][õo]es|conhecimento|dados)"
    r"|\bje\s+n'ai\s+(?:pas|aucune?)\s+(?:d'|de\s+)?(?:informations?|connaissances?|donn[ée]es)"
    r"|\bich\s+habe\s+keine\s+(?:informationen|kenntnisse|daten)"
    r"|\bу\s+меня\s+нет\s+(?:информации|данных|сведений)"
    r"|(?:没有|没有相关的?|缺少)(?:本地)?(?:知识|信息|资料)",
    re.I,
)
# The agent is about to find out: not a dead end.
_WILL_LOOK = re.compile(
    r"\b(?:let\s+me|i'll|i\s+will|i'm\s+going\s+to|going\s+to)\s+(?:now\s+)?(?:check|look|find|search|fetch|query|run|pull|gather|inspect|investigate)",
    re.I,
)


def says_no_knowledge(text: str) -> str | None:
    for sentence in sentences(text):
        if sentence.rstrip().endswith("?"):
            continue
        if _NO_KNOWLEDGE.search(sentence) and not _WILL_LOOK.search(sentence):
            return sentence
    return None


class NoWebTool(Rule):
    """The agent has no local knowledge on the question and no web tool to look it up.

    Detects: an assistant message saying it has no (local) knowledge or information on the
    subject, that nothing is in its knowledge base, or that it cannot browse or search the web
    ("No local knowledge on that", "I don't have information about that release", "I can't
    browse the internet"), in a session that made no web-fetch call (`http_get` by default).
    Not when the same message calls a tool or says it will now look it up.
    Root cause: the deployment has no `http_get` / web-fetch MCP tool, so the agent cannot look things up.
    Fix: add the `http_get` (web fetch) MCP tool and tell the agent in SOUL.md to use it when local knowledge is missing.

    Config: web_tools (tool names that fetch from the web; default http_get, web_fetch, fetch_url, web_search).
    """

    code = "NF002"
    name = "no-web-tool"
    severity = Severity.BLOCKER
    config = {"web_tools": ["http_get", "web_fetch", "fetch_url", "web_search"]}

    def check(self, session, ctx) -> Iterator[Finding]:
        web_tools = set(self.options["web_tools"])
        if session.called(*web_tools):
            return
        hits = []
        for message in session.messages:
            if message.role != "assistant" or not message.has_text or message.tool_calls:
                continue
            sentence = says_no_knowledge(message.text)
            if sentence:
                hits.append((message, sentence))
        if hits:
            yield self.finding(
                f"agent had no knowledge to answer and no web tool ({len(hits)} message{'s' if len(hits) > 1 else ''}; "
                f"no {'/'.join(sorted(web_tools))} call in the session)",
                hits,
                blocker="no local knowledge and no web-fetch tool",
            )


@hookimpl
def nomos_forensics_rules():
    return [NoWebTool]
