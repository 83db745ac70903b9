"""cant-run: the agent claims it cannot run, execute or access something."""

from __future__ import annotations

import re
from collections.abc import Iterator

from nomos_forensics import Finding, Rule, Severity, hookimpl
from nomos_forensics.text import normalise, sentences

_VERB = (
    r"(?:run|re-?run|execute|exec|perform|access|ssh|connect|reach|log\s*in(?:to)?|login|"
    r"restart|start|stop|reboot|reload|install|uninstall|modify|change|edit|write|delete|remove|"
    r"create|deploy|carry\s+out|invoke|call|use|interact|control|manage|touch|make\s+(?:any\s+)?changes|"
    r"apply|do\s+(?:that|this|it|so)|help\s+(?:you\s+)?with\s+(?:that|this|it)|assist\s+(?:you\s+)?with\s+(?:that|this|it)|"
    r"check|query|fetch|retrieve|open|read|mount|kill|update|upgrade|configure|provision|"
    r"spin\s+up|shut\s*down|trigger|issue|send|operate|administer|get\s+into|enter|inspect)\b"
)
_OBJECT_NOUN = r"(?:ability|capability|capabilities|access|permission|permissions|means|way|tools?|option|privileges|rights|function|functionality|shell|terminal|console|ssh)"
_FIRST_PERSON = (
    r"\b(?:i|we)\s*(?:"
    r"can't|cannot|cant|can\s+not|can\s+no\s+longer|am\s+unable\s+to|'m\s+unable\s+to|are\s+unable\s+to|"
    r"am\s+not\s+able\s+to|'m\s+not\s+able\s+to|am\s+not\s+in\s+a\s+position\s+to|'m\s+not\s+in\s+a\s+position\s+to|"
    r"(?:am|'m|are|'re)\s+not\s+(?:allowed|permitted|authori[sz]ed|equipped|set\s+up|configured|capable\s+of|able)\s*(?:to)?|"
    r"won't\s+be\s+able\s+to|will\s+not\s+be\s+able\s+to|(?:am|'m)\s+incapable\s+of|"
    r"(?:do\s+not|don't|dont)\s+(?:currently\s+|actually\s+)?(?:have|possess)\s+(?:the\s+|a\s+|an\s+|any\s+|direct\s+|shell\s+)*" + _OBJECT_NOUN + r"|"
    r"have\s+no\s+(?:direct\s+|shell\s+)?" + _OBJECT_NOUN + r"|"
    r"lack\s+(?:the\s+|any\s+)?" + _OBJECT_NOUN +
    r")"
)
_SUBJECTLESS = r"^(?:unfortunately|sorry|apologies|i'm sorry|i am sorry)[, ]+(?:but\s+)?(?:unable|not\s+able|cannot|can't)\s+to?\s*"
_ACCESS_OBJECT = r"(?:access|permission|permissions|privileges|rights)\s+(?:to|on|into|for)\b"
_NEGATION = re.compile(
    rf"{_FIRST_PERSON}(?P<gap>(?:\W+\w+){{0,5}}?)\W+{_VERB}"
    rf"|\b(?:i|we)\s*(?:do\s+not|don't|have\s+no)\s+(?:currently\s+)?(?:have\s+)?(?:any\s+|direct\s+|shell\s+)*{_ACCESS_OBJECT}"
    rf"|\b(?:i|we)\s*(?:do\s+not\s+have|don't\s+have|have\s+no)\s+(?:a\s+|any\s+)?(?:shell|terminal|ssh|console)\b"
    rf"|{_SUBJECTLESS}{_VERB}",
    re.I,
)
_NO_CAPABILITY = re.compile(
    r"\bthere(?:\s+is|'s)\s+no\s+(?:\w+\s+){0,2}(?:tool|action|function|capability|command|mechanism|way\s+for\s+me)\s+(?:available\s+)?(?:to|for|that)\b"
    r"|\bno\s+(?:\w+\s+)?(?:tool|action|function|capability)\s+(?:is\s+)?(?:available|exists)\s+(?:to|for)\b"
    r"|\b(?:that|this|the\s+requested)\s+(?:action|operation|command|capability|request)\s+(?:is\s+not|isn't)\s+(?:supported|available|possible|something\s+i\s+can\s+do)"
    r"|\b(?:outside|beyond)\s+(?:of\s+)?my\s+(?:current\s+)?(?:capabilities|abilities|scope|permissions|reach|toolset)"
    r"|\bnot\s+(?:in|part\s+of|among)\s+my\s+(?:available\s+)?(?:toolset|tools|action\s+list|actions|capabilities)"
    r"|\bmy\s+(?:available\s+)?tools\s+(?:do\s+not|don't)\s+(?:allow|support|include|let\s+me|provide)"
    r"|\b(?:isn't|is\s+not|not)\s+something\s+(?:i|we)\s+(?:can|am\s+able\s+to|'m\s+able\s+to)\s+(?:do|run|execute|perform|help\s+with)"
    r"|\bi\s+(?:only\s+have|have\s+only)\s+read[- ]only\s+access"
    r"|\bas\s+an\s+ai\b[^.]{0,40}\b(?:cannot|can't|unable|not\s+able)\b",
    re.I,
)
_OTHER_LANGUAGES = re.compile(
    r"\bno\s+(?:puedo|soy\s+capaz\s+de|tengo\s+(?:acceso|permisos?|la\s+capacidad|forma|manera))\b"
    r"|\bn[ãa]o\s+(?:consigo|posso|sou\s+capaz\s+de|tenho\s+(?:acesso|permiss[ãa]o|como))\b"
    r"|\bje\s+ne\s+(?:peux|suis\s+pas\s+(?:en\s+mesure|capable)|dispose\s+pas|ai\s+pas\s+(?:acc[eè]s|la\s+possibilit[ée]|les\s+droits))"
    r"|\bich\s+(?:kann|darf)\b[^.]{0,40}\bnicht\b[^.]{0,40}\b(?:ausf[üu]hren|starten|zugreifen|durchf[üu]hren|[äa]ndern|verbinden)"
    r"|\bich\s+habe\s+keinen\s+zugriff"
    r"|\bnon\s+(?:posso|sono\s+in\s+grado\s+di|ho\s+(?:accesso|i\s+permessi))\b"
    r"|\bnie\s+(?:mog[ęe]|jestem\s+w\s+stanie|mam\s+dost[ęe]pu)"
    r"|(?:\bя\s+)?\bне\s+(?:могу|имею\s+(?:возможности|доступа)|в\s+состоянии|удается)\b|\bу\s+меня\s+нет\s+(?:доступа|возможности)"
    r"|(?:无法|不能|没办法|没有办法|不可以)(?:直接)?(?:执行|运行|访问|操作|重启|连接|完成|处理)|没有(?:权限|访问权限|执行权限|能力)"
    r"|(?:実行|アクセス|操作|再起動|接続)(?:すること)?(?:が|は)?でき(?:ません|ない)"
    r"|(?:실행|접근|액세스|재시작|연결)\S{0,3}\s*(?:할\s*수|수)\s*없",
    re.I,
)
# Not a capability claim: gated on approval, conditional, parallelism, or a question.
_GATED = re.compile(
    r"\b(?:until|unless|once|before|without|as\s+soon\s+as|pending|awaiting|waiting\s+for)\b[^.]{0,60}"
    r"\b(?:approv\w*|confirm\w*|permission|consent|go-ahead|sign-?off|authori[sz]ation|you\s+say)"
    r"|\b(?:needs?|requires?)\s+(?:your\s+)?(?:approval|confirmation)",
    re.I,
)
_CONDITIONAL = re.compile(r"^(?:if|whether|even\s+if|in\s+case)\b|\bif\s+(?:i|we)\s+(?:can't|cannot)", re.I)
_PARALLEL = re.compile(r"\b(?:at\s+the\s+same\s+time|simultaneously|in\s+parallel|concurrently|at\s+once)\b", re.I)
_QUOTED = re.compile(r'"[^"]{0,200}"')


def claim_in(sentence: str) -> bool:
    """Does this sentence claim the agent cannot run/execute/access something?"""
    if sentence.rstrip().endswith("?") or _CONDITIONAL.search(sentence):
        return False
    plain = _QUOTED.sub(" ", sentence)
    hit = _NEGATION.search(plain) or _NO_CAPABILITY.search(plain) or _OTHER_LANGUAGES.search(plain)
    if not hit:
        return False
    return not (_GATED.search(plain) or _PARALLEL.search(plain))


class CantRun(Rule):
    """The agent says it cannot run, execute or access something.

    Detects: an assistant message (never a user's) with a sentence in which the agent claims
    it cannot run, execute, access, restart, reach or do something, in many phrasings ("I can't
    run that", "I don't have access to the host", "there is no action for that", "that's beyond my
    capabilities", "no puedo ejecutar", "我无法执行"). Not when the claim is gated on approval ("I can
    run that once you approve", "I can't run it until you confirm"), conditional, a question, about
    parallelism, quoted, inside a code block, or when the same message goes on to call a tool.
    Root cause: missing target or capability: the agent believes there is no way to act.
    Fix: use `run` with a shell command (there is no fixed action enum any more); make that explicit in SOUL.md.
    """

    code = "NF001"
    name = "cant-run"
    severity = Severity.BLOCKER

    def check(self, session, ctx) -> Iterator[Finding]:
        hits = []
        for message in session.messages:
            if message.role != "assistant" or not message.has_text or message.tool_calls:
                continue
            claim = next((s for s in sentences(message.text) if claim_in(s)), None)
            if claim is not None:
                hits.append((message, claim))
        if not hits:
            return
        first = normalise(hits[0][1])
        yield self.finding(
            f"agent says it cannot act ({len(hits)} message{'s' if len(hits) > 1 else ''}): \"{first[:80]}\"",
            hits,
            blocker=f"agent refused/claimed no capability: \"{first[:60]}\"",
        )


@hookimpl
def nomos_forensics_rules():
    return [CantRun]
