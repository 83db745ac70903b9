"""no-web-tool: the agent has no local knowledge and no way to look it up."""

from __future__ import annotations

import re
from collections.abc import Iterator

from nomos_forensics.rulekit import (
    AnyPattern,
    Finding,
    Option,
    Rule,
    Severity,
    any_token,
    excerpt,
    hookimpl,
    letter_first,
    replies,
    statements,
)

_SUBJECT = r"(?<![\w'-])(?:i|we)"
_ADVERBS = r"(?:\s+(?:still|currently|actually|really|unfortunately|simply|just|also|honestly|sadly|personally|truly))*"
# What the agent lacks: knowledge about a topic.
_INFO = (
    r"(?:knowledge|information|info|details|specifics|data|documentation|docs|records?|notes|context|"
    r"release\s+notes|changelog|insights?|familiarity|entries|facts|intel|background(?!\s+(?:tasks?|process(?:es)?|jobs?|commands?|shells?|services?)\b)|reference|references)"
)
_INFO_MOD = (
    r"(?:\s+(?:any|much|enough|the|a|some|specific|local|stored|relevant|prior|internal|reliable|"
    r"up-to-date|up\s+to\s+date|current|recent|real-time|realtime|live|latest|detailed|further|more|"
    r"accurate|concrete|official|verified|good|solid|particular|such|that|this|those|direct|"
    r"first-hand|precise|exact|definitive|useful))*"
)
_HAVE_NOT = (
    r"(?:\s+(?:don't|doesn't|didn't)\s+(?:currently\s+|actually\s+|really\s+|yet\s+)?(?:have|possess|find|see|hold|know\s+of)"
    r"|(?:\s+|(?='))(?:have|possess|hold|'ve|have\s+got|'ve\s+got|got|found|see)\s+no|\s+haven't(?:\s+got)?(?=\s+(?:any|much|enough|a|the|real|reliable)\b)|\s+no\s+longer\s+have|\s+lack)"
)
# How the agent cannot look it up: browsing, searching, fetching.
_WEB = (
    r"(?:web|internet|online|websites?|web\s*pages?|pages?|urls?|links?|external\s+(?:sites?|resources?|sources?|urls?|links?|pages?)|"
    r"github|gitlab|google|the\s+vendor's\s+\w+|forums?|the\s+net)\b"
)
_WEB_VERB = (
    r"(?:browse|browsing|search|searching|access|accessing|look\s+(?:it|that|this|them|those)?\s*up|looking\s+(?:it|that|this)?\s*up|"
    r"look|looking|check|checking|fetch|fetching|visit|visiting|open|opening|retrieve|retrieving|reach|query|google|read|"
    r"reading|get|getting|pull|pulling|download|consult|verify|verifying|go|find\s+out|finding\s+out|confirm|confirming)"
)
_CANNOT = (
    r"(?:\s*can't|\s+can\s+no\s+longer|\s+won't\s+be\s+able\s+to|(?:'m|'re)(?:\s+(?:currently|still|also|just|really))*\s+(?:not\s+)?(?:un)?able\s+to|"
    r"(?:'m|'re)\s+not\s+(?:allowed|permitted|equipped|set\s+up|configured)\s+to|"
    r"\s+(?:have|'ve\s+got)\s+no\s+(?:way|means|tool|ability|option)\s+(?:to|of)|\s+(?:don't|doesn't)\s+have\s+(?:a|any|the)\s+(?:way|means|tool|ability|option|capability)\s+(?:to|of))"
)
# "enough context to determine which repository you're working with": the user's code, not a lookup
_USERS_CONTEXT = (
    r"(?<=context)\s+(?:to\s+(?:determine|tell|know|understand|identify|say|see|figure|decide|pinpoint|explain|describe)|"
    r"(?:about|on|of|regarding)\s+(?:your|the|this)\s+(?:repo|repository|code|codebase|project|files?|setup|app)s?)\b"
)
_KB = r"(?:(?:local\s+)?knowledge(?:\s+base|\s+store)?|kb|notes|memory|upsert_knowledge(?:\s+store)?|local\s+docs|stored\s+knowledge)"
_NO_KNOWLEDGE = re.compile(
    # first-person statements share their subject: one prefix, then the alternatives
    rf"{_SUBJECT}(?:"
    rf"{_ADVERBS}{_HAVE_NOT}{_INFO_MOD}\s+{_INFO}\b(?!\s+(?:yet|so\s+far)\b|{_USERS_CONTEXT})"
    rf"|{_ADVERBS}\s+(?:have|'ve\s+got|have\s+got)\s+(?:limited|little|only\s+limited)\s+{_INFO}"
    rf"|\s+(?:searched|checked|looked\s+(?:in|through|at)|queried|consulted|went\s+through)\s+(?:my|the|our)\s+{_KB}\b[^.]{{0,40}}?\b(?:but|and)\s+(?:found\s+|there's\s+|there\s+was\s+|it\s+has\s+)?(?:nothing|no\b|didn't|couldn't)"
    rf"|\s+(?:couldn't|didn't|can't|wasn't\s+able\s+to)\s+find\s+(?:anything|any\s+(?:information|info|entries|entry|notes|details|data|records?|mention))\b[^.]{{0,60}}?\b(?:in|from)\s+(?:(?:my|the|our)\s+)?{_KB}"
    rf"|\s+(?:have|'ve\s+got|found|see)\s+nothing\s+(?:\w+\s+){{0,2}}?(?:in|from)\s+(?:my\s+|the\s+)?{_KB}"
    rf"|(?:'m|'re)\s+not\s+(?:familiar|acquainted)\s+with\s+(?!your\b|you\b|the\s+(?:naming|setup|layout|environment)\b)"
    rf"|(?:'m|'re)\s+not\s+aware\s+of\s+(?:a\b|an\b|any\s+such|such|that|this|the\b)(?!\s+(?:issues?|errors?|problems?|outages?|failures?|incidents?|alerts?|reason|changes?|downtime)\b)"
    rf"|(?:'m|'re)\s+not\s+aware\s+of\s+any\s+(?:\w+\s+)?(?:tool|flag|option|setting|feature|command|package|release|version|product|library|project|api|cve|parameter|plugin|module|method|vendor|documentation|docs|changelog)s?\b"
    rf"|\s+(?:don't|do\s+not)\s+know\s+(?:anything|much)\s+about\b"
    rf"|{_ADVERBS}{_CANNOT}(?:\s+(?:directly|actually|really|currently|just|also|even))*\s+{_WEB_VERB}\b(?:\s+[\w'-]+){{0,4}}?\s+(?:on\s+|up\s+on\s+|from\s+|in\s+|at\s+)?(?:the\s+)?{_WEB}"
    rf"|{_ADVERBS}{_CANNOT}(?:\s+(?:directly|actually|really|currently|just|also|even))*\s+look\s+(?:(?:it|that|this|them|those|things|anything|stuff)\s+)?up\b"
    rf"|{_ADVERBS}{_CANNOT}(?:\s+(?:directly|actually|really|currently|just|also|even))*\s+browse\b(?!\s+(?:the\s+|your\s+|its\s+|through\s+)?(?:logs?|files?|director|filesystem|folders?|shares?|buckets?|repo|containers?|volumes?|disks?|output|results?|journal)\b)"
    rf"|{_ADVERBS}{_CANNOT}(?:\s+(?:directly|actually|really|currently|just|also|even))*\s+(?:check|look\s+at|look\s+up|read|fetch|pull\s+up|pull|consult|get|access|open|verify|retrieve|see|search)\s+(?:the\s+|their\s+|its\s+|any\s+)?(?:(?:upstream|official|latest|current|vendor's|vendor|online|published|public|external|newest|recent|project's)\s+)*(?:release\s+notes|changelog|documentation|docs|manual|advisor(?:y|ies)|announcement|roadmap|errata|status\s+page|knowledge\s+base\s+articles?)\b"
    rf"|{_ADVERBS}{_CANNOT}(?:\s+(?:directly|actually|really|currently|just|also|even))*\s+{_WEB_VERB}\b(?:\s+[\w'-]+){{0,4}}?\s+(?:real-time|realtime|live|current|up-to-date|latest|newest|recent|stable)\s+(?:information|data|info|updates|status|versions?|releases?|prices|pricing|news|advisor(?:y|ies)|changes)"
    rf"|(?:'ve|\s+have)\s+never\s+(?:heard|come\s+across)\s+(?:of|about)\b|\b(?:doesn't|does\s+not)\s+ring\s+a\s+bell"
    rf"|\s+(?:don't|do\s+not)\s+recogni[sz]e\s+(?:that|this|the|a|any)\s+(?:\w+\s+)?(?:tool|package|name|command|flag|version|product|library|option|setting|project|api|service|vendor)"
    rf"|\s+(?:can't|couldn't|didn't|wasn't\s+able\s+to|was\s+unable\s+to|'m\s+unable\s+to)\s+find\s+(?:any|much|anything)\s+(?:information|info|details|documentation|docs|notes|references?|mention)\s+(?:on|about|regarding|for|of)\b(?![^.]{{0,40}}\bin\s+(?:the\s+)?(?:logs?|journal|output|syslog|dmesg|events?|database|table|config|file|metrics|dashboard)\b)"
    rf"|(?:'m|'re)\b[^.]{{0,50}}?\bwithout\s+(?:any\s+)?(?:browsing|web|internet|online|a\s+browser)\b"
    rf"|{_ADVERBS}{_HAVE_NOT}(?:\s+(?:a|an|any|the|direct|live|real-time|general|external|outbound|public))*\s+(?:web|internet|online|browsing|browser|search|web-search|http|fetch|web\s+fetch|network)(?:[\s-]+\w+){{0,2}}?[\s-]+(?:access|connectivity|tools?|capabilit\w*|ability|connection|search|browser|fetch(?:er|ing)?)\b"
    rf"|{_ADVERBS}{_HAVE_NOT}\s+(?:a\s+|any\s+)?(?:tool|way|means)\s+(?:to|for|of)\s+(?:fetch|fetching|browse|browsing|search|searching|access|accessing|look)\w*\s+(?:[\w'-]+\s+){{0,2}}?(?:{_WEB}|up\b)"
    rf"|{_ADVERBS}{_HAVE_NOT}\s+(?:any\s+|direct\s+)?access\s+to\s+(?:the\s+)?(?:internet|web|external|online|outside\s+world|public|live|real-time|current)"
    rf"|(?:'m|'re)\s+not\s+(?:connected|online)\s+(?:to\s+the\s+(?:internet|web)|\b)"
    rf"|{_ADVERBS}{_HAVE_NOT}\s+(?:any\s+)?(?:access\s+to\s+)?(?:real-time|realtime|live|current|up-to-date|the\s+latest|recent)\s+(?:information|data|info|knowledge|updates)"
    rf")"
    # impersonal: empty knowledge base, training cut-off, other languages
    rf"|(?:^|[:;—–]\s*|^(?:sorry|unfortunately|sadly|apologies|hmm|well|okay|ok)[,!.\s\-—–]+)no\s+(?:local\s+|stored\s+|relevant\s+|specific\s+|reliable\s+|further\s+|prior\s+)*(?:knowledge|information|info|details|data|documentation|docs|notes|records|entries)(?:\s+(?:base\s+)?(?:entries|entry|records?|notes|hits|results))?\s+(?:exists?\s+|found\s+|available\s+|stored\s+)?(?:on|about|regarding|for|of|concerning)\b"
    rf"|\bthere's\s+no\s+(?:local|stored|relevant|prior)\s+(?:knowledge|information|info|documentation|notes|data)"
    rf"|\bthere's\s+no\s+(?:knowledge|information|info|details|documentation|data)\s+(?:on|about|regarding)\s+(?:that|this|it|those|these)\b"
    rf"|\bno\s+(?:knowledge|information|info)\s+(?:is\s+)?(?:stored|saved|recorded|available)\s+(?:on|about|for|regarding)\b"
    rf"|\b(?:nothing|no\s+(?:\w+\s+)?(?:entries|entry|results?|matches|records?|information|info|data|knowledge|notes))\s+(?:relevant\s+|matching\s+|useful\s+)?(?:came\s+up\s+|turned\s+up\s+|was\s+found\s+|found\s+|exists?\s+|is\s+stored\s+|stored\s+)?(?:\w+\s+){{0,3}}?(?:in|from|within)\s+(?:(?:my|the|our)\s+)?(?:own\s+)?{_KB}"
    rf"|\b(?:my|the|our)\s+{_KB}\s+(?:doesn't|don't|has\s+no|have\s+no|contains\s+no|has\s+nothing|have\s+nothing|had\s+nothing|contains\s+nothing|returned\s+nothing|returned\s+no|shows\s+nothing|is\s+empty|are\s+empty|lacks?)\b"
    rf"|^(?:local\s+knowledge|knowledge\s+base|the\s+kb)\s+(?:has|had|contains|returned|shows)\s+(?:nothing|no)\b"
    rf"|\b{_KB}\s+(?:search\s+|lookup\s+|query\s+)?(?:came|comes|come)\s+back\s+(?:empty|with\s+nothing|with\s+no\b)"
    rf"|\b(?:isn't|aren't|not)\s+(?:covered|mentioned|documented|described|recorded|listed)\s+(?:by|in|anywhere\s+in)\s+(?:anything\s+in\s+)?(?:my|the|our)\s+{_KB}"
    rf"|\b(?:isn't|aren't|not)\s+(?:in|covered\s+(?:by|in)|part\s+of|among)\s+(?:my|the|our)\s+(?:{_KB}|training\s+data|training)"
    rf"|\bnothing\s+in\s+(?:my|the|our)\s+(?:\w+\s+){{0,3}}?(?:{_KB})\b"
    rf"|\b(?:nothing|no\s+(?:information|info|entries|entry|notes|data|knowledge|details|records?))\s+(?:about|on|regarding|related\s+to|concerning|for)\b[^.,;]{{0,50}}?\b(?:in|from)\s+(?:my|the|our)\s+(?:own\s+)?{_KB}"
    rf"|\b(?:isn't|not)\s+something\s+(?:that\s+)?(?:i|we)\s+(?:have\s+(?:any\s+)?(?:information|info|knowledge|details|data)|know\s+(?:much\s+|anything\s+)?about)"
    rf"|\b(?:outside|beyond)\s+(?:of\s+)?(?:my|our)\s+(?:local\s+|current\s+)?(?:knowledge|notes|kb|training|information|expertise)"
    rf"|\bmy\s+(?:training\s+data|training|knowledge(?:\s+base)?|notes|kb|information)\s+(?:may\s+|might\s+|does\s+|do\s+|probably\s+)?(?:not|n't|doesn't|don't)\s+(?:include|cover|contain|have|mention|extend|go|reach)\b"
    rf"|\b(?:browsing|web\s+access|internet\s+access|web\s+search|web\s+fetch(?:ing)?|internet|searching\s+the\s+web)\s+(?:isn't|is\s+not|aren't|not)\s+(?:available|possible|enabled|something)\s+(?:to\s+me|for\s+me|here|in\s+this|i\b)"
    rf"|\bthere's\s+no\s+(?:web|internet|browsing|online)\s+(?:access|tool|search|connectivity)\s+(?:available\s+)?(?:to\s+me|for\s+me|here|in\s+this)"
    rf"|\bthere's\s+no\s+(?:web[\s-]+fetch|web[\s-]+search|browsing|http_get|fetch)\s+tool"
    rf"|\bwithout\s+(?:a\s+|any\s+)?(?:web|internet|browsing|http|online|network)(?:[\s-]+\w+){{0,2}}?\s*,?\s+(?:i|we)\s+(?:can't|'m\s+unable|have\s+no\s+way)"
    rf"|\b(?:my\s+)?(?:training\s+data|training|knowledge)\s+(?:cut-?off|only\s+goes|ends|stops|only\s+extends|extends\s+only|only\s+covers|is\s+limited\s+to)\b"
    rf"|\b(?:knowledge|training)\s+cut-?off\b|\bmy\s+(?:knowledge|training(?:\s+data)?|information)\b[^.]{{0,30}}?\bcut-?off\b|\bas\s+of\s+my\s+(?:last|latest|most\s+recent)\s+(?:update|training|knowledge)"
    rf"|\bsince\s+my\s+(?:training|last\s+update|knowledge\s+cut)|\bafter\s+my\s+(?:training|knowledge)"
    rf"|\bmy\s+(?:information|knowledge|data|training\s+data)\s+(?:may|might|could)\s+be\s+(?:outdated|out\s+of\s+date|stale|old|incomplete)"
    rf"|\bi\s+only\s+know\s+(?:about\s+)?(?:\w+\s+){{0,3}}(?:up\s+to|until)\s+my\b"

)
# the same test, trying only the alternatives whose required words the sentence holds
_NO_KNOWLEDGE_ANY = AnyPattern(_NO_KNOWLEDGE)
_OTHER_LANGUAGES = re.compile(
    r"\bno\s+(?:tengo|dispongo\s+de|tenemos|cuento\s+con)\s+(?:informaci[óo]n|conocimiento|datos|detalles|acceso\s+a\s+(?:internet|la\s+web))"
    r"|\bn[ãa]o\s+(?:tenho|possuo|temos)\s+(?:informa[çc][õo]es|informa[çc][ãa]o|conhecimento|dados|detalhes|acesso\s+[àa]\s+(?:internet|web))"
    r"|\bje\s+n'ai\s+(?:pas|aucune?)\s+(?:d'|de\s+)?(?:informations?|connaissances?|donn[ée]e?s?|d[ée]tails?|acc[eè]s\s+[àa]\s+(?:internet|le\s+web))"
    r"|\bich\s+habe\s+(?:leider\s+)?(?:keine\s+(?:informationen|kenntnisse|daten|details|angaben)|keinen\s+(?:internetzugang|internetzugriff|zugriff\s+auf\s+das\s+internet))"
    r"|\bnon\s+(?:ho|abbiamo)\s+(?:informazioni|conoscenze|dati|dettagli|accesso\s+a\s+internet)"
    r"|\bnie\s+mam\s+(?:informacji|wiedzy|danych|dost[ęe]pu\s+do\s+internetu)"
    r"|\b(?:у\s+меня\s+)?нет\s+(?:информации|данных|сведений|доступа\s+к\s+интернету)|\bв\s+базе\s+знаний\s+нет"
    r"|(?:我)?(?:没有|沒有|缺少|缺乏)(?:相关的?|這方面的|这方面的|任何)?(?:本地)?(?:知识|知識|信息|資訊|资料|資料)"
    r"|我(?:这里|目前|暂时|现在)?(?:没有|沒有)[^，。！？,.!?]{0,14}?(?:知识|知識|信息|資訊|资料|資料|数据|文档|文檔)"
    r"|知识库(?:中|里)?没有|知識庫(?:中|裡)?沒有|(?:无法|不能)(?:访问|訪問|连接|上)(?:互联网|網路|网络|网)"
    r"|情報(?:は|が)(?:ありません|ない)|(?:정보|지식)(?:가|이)?\s*없"
)
# The agent is about to find out, or just did, or is filling the gap itself: not a dead end.
_WILL_LOOK = re.compile(
    r"\b(?:so|and)\s+(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+)?(?:created|added|saved|stored|wrote|recorded|documented|upserted)\b"
    r"|\b(?:let\s+me|i'll|i\s+will|i'm\s+going\s+to|going\s+to|i'm\s+now|i\s+am\s+now|so\s+i'm|now\s+i'm)\s+(?:now\s+|first\s+|quickly\s+)?"
    r"(?:check|look|find|search|fetch|query|run|pull|gather|inspect|investigate|use|try|ask|read|open|call)"
    r"|\b(?:checking|fetching|searching|querying|looking\s+it\s+up)\s+(?:now|it|that|the)\b",
)
_CONDITIONAL = re.compile(
    r"^(?:if|whether|when(?:ever)?|in\s+case|unless|should)\b|\bif\s+(?:i|we)\s+(?:don't|can't|have\s+no|lack)"
)
# cheap pre-filters (on lower-case text): without one of these, no English pattern can match
_CUE_WORDS = frozenset(
    """no not nothing none never lack lacks lacking limited cutoff cut-off without unable empty
    unfamiliar unaware training since after outdated only outside beyond ring recognise recognize
    familiar aware cannot cant dont""".split()
)
_CUE_PARTS = ("n't", "n’t", "as of", "out of date")
_CUE_TOKEN = any_token(_CUE_WORDS)  # one of the cue words as a whole [a-z'-]+ token


def _english_cue(lower: str) -> bool:
    return any(map(lower.__contains__, _CUE_PARTS)) or _CUE_TOKEN.search(lower) is not None


OTHER_CUE = r"\bno (?:tengo|dispongo|tenemos|cuento)|\bn[ãa]o\b|\bje\b|\bich\b|\bnon\b|\bnie\b"
_OTHER_CUE = letter_first(OTHER_CUE)  # the same texts, found faster


THINK_END = "</think>"


def _answer_part(text: str) -> str:
    """The text after a reasoning block the model printed as text: a closing `</think>` with no
    opening tag before it (DeepSeek-R1-Distill through aider, heldout7) ends the model's reasoning,
    which is not a statement to the user ("I know that vector databases are optimized for fast
    similarity searches, but I'm not familiar with Memgraph's capabilities in this area")."""
    end = text.rfind(THINK_END)
    return text[end + len(THINK_END):] if end >= 0 and "<think>" not in text[:end] else text


def says_no_knowledge(text: str) -> str | None:
    if THINK_END in text:
        text = _answer_part(text)
    if text.isascii():
        lower = text.lower()
        if not _english_cue(lower) and not _OTHER_CUE.search(lower):
            return None  # most messages end here, unsplit
    for sentence, plain in statements(text):
        english = _english_cue(plain)
        other = not plain.isascii() or _OTHER_CUE.search(plain)
        if not (english or other) or _CONDITIONAL.search(plain) or _WILL_LOOK.search(plain):
            continue
        if (english and _NO_KNOWLEDGE_ANY.matches(plain)) or (other and _OTHER_LANGUAGES.search(plain)):
            return sentence
    return None


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
    """The agent has no local knowledge on the question and no web tool to look it up.

    Detects: an assistant message saying it has no (local) knowledge, information, details or
    documentation on the subject, that its knowledge base or notes have nothing, that it is not
    familiar with the thing asked about, that it cannot browse, search or fetch from the web or
    look up release notes, or that the answer is past its training cut-off ("No local knowledge
    on that", "I don't have reliable information about that version", "I searched the knowledge
    base but found nothing", "that's outside my local knowledge", "I can't browse the internet",
    "I don't have a web search tool", "my knowledge cutoff is 2024", "no tengo información",
    "我没有这方面的信息"), in a session that made no web-fetch call (`http_get` by default). Not
    when the same message calls a tool, says it will now look it up, or fills the gap itself
    ("…, so I created an entry"); not for questions or conditions; not for facts about systems
    or third parties ("the container has no internet access", "the log has no information
    after 10:00", "I'm not aware of any errors", "the vendor has no information yet"); not for
    missing context about the user's own code ("I don't have enough context to determine what
    specific repository you're working with", "… so I do not have enough context to explain what a
    particular repo does": aider's add-files situation); not for the agent's own state ("I don't
    have any background tasks running"); not for reasoning the model printed as text before a
    closing `</think>` with no opening tag (DeepSeek-R1-Distill through aider: "I know that vector
    databases are optimized for fast similarity searches, but I'm not familiar with Memgraph's
    capabilities in this area" is its thinking, not a reply).
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
        if session.called(*web_tools):
            return
        hits = [(message, sentence) for message in replies(session) if (sentence := says_no_knowledge(message.text))]
        if hits:
            first = session.messages.index(hits[0][0])
            asked = next((m.text for m in reversed(session.messages[:first]) if m.role == "user" and m.text), "")
            topic = topic_of(hits[0][1], asked)
            tool = self.options["web_tools"][0] if self.options["web_tools"] else "http_get"
            yield self.finding(
                f"agent had no knowledge to answer and no web tool ({len(hits)} message{'s' if len(hits) > 1 else ''}; "
                f"no {'/'.join(sorted(web_tools))} call in the session)",
                hits,
                blocker="no local knowledge and no web-fetch tool",
                fix=(f"the agent had no knowledge of \"{excerpt(topic, 80)}\" and no way to look it up: add the `{tool}` "
                     f"(web fetch) MCP tool and tell the agent in SOUL.md to use it when local knowledge is missing")
                if topic else None,
            )


@hookimpl
def nomos_forensics_rules():
    return [NoWebTool]
