"""policy-refusal: the agent declines by rule (a policy it cites) although it could act."""

from __future__ import annotations

import re
from collections.abc import Iterator

from nomos_forensics.rulekit import (
    AnySubstring,
    Finding,
    Rule,
    Severity,
    excerpt,
    hookimpl,
    lexicon,
    quote_from,
    replies,
    statements,
)

_LEXICON = lexicon.load("nomos_forensics_rules", "refusal")
_TABLE = _LEXICON["patterns"]
_MACROS = _LEXICON.get("macros", {})


def _compiled(kind: str) -> dict[str, re.Pattern[str]]:
    """language -> one pattern, for every `<kind>_<language>` entry of refusal.toml."""
    return {key.split("_", 1)[1]: re.compile(lexicon.pattern(_TABLE, key, _MACROS))
            for key in _TABLE if key.startswith(kind + "_")}


DECLINE = _compiled("decline")
REASON = _compiled("reason")
REFUSAL = _compiled("refusal")
LEAD = _compiled("lead")
LANGUAGES = tuple(sorted(DECLINE))
# every statement that can be one names a rule with one of these words (cheap substring tests)
_POLICY_WORDS = AnySubstring(lexicon.words(_LEXICON["words"]["policy"]))


def _names_a_rule(lower: str) -> bool:
    return _POLICY_WORDS.search(lower)

_NOT = re.compile("|".join(lexicon.pattern(_TABLE, key, _MACROS) for key in ("not_gated", "not_finding", "not_conditional")))
# what the agent declined to do, for the fix: the words after the decline (English)
_ACTION = re.compile(
    r"\b(?:can't|unable\s+to|not\s+able\s+to|not\s+(?:allowed|permitted|authori[sz]ed)\s+to|won't\s+be\s+able\s+to)"
    r"(?:\s+(?:directly|actually|really|currently|just|go\s+ahead\s+and))*\s+"
    r"((?:help\s+(?:you\s+)?with|assist\s+(?:you\s+)?with|\w+)(?:\s+(?!(?:because|since|as|due|per|under|according|"
    r"for\s+you|but|so|which|that's|this\s+is|at\s+this\s+time|at\s+the\s+moment)\b)[\w'-]+){0,5})"
)


def policy_statement(text: str) -> tuple[str, str, str] | None:
    """The first statement of `text` in which the agent declines citing a policy, rule or
    terms, as (sentence, language, the rule cited); None when there is none."""
    if not _names_a_rule(text.lower()):
        return None  # most messages end here, unsplit
    said = list(statements(text))
    for i, (sentence, plain) in enumerate(said):
        following = said[i + 1][1] if i + 1 < len(said) else ""
        if not (_names_a_rule(plain) or (following and _names_a_rule(following))) or _NOT.search(plain):
            continue
        for language in LANGUAGES:
            cited = REFUSAL[language].search(plain)
            if cited is None and DECLINE[language].search(plain):
                # the rule cited here, or at the start of the next statement, or the next
                # statement is itself "the policy does not allow it"
                cited = REASON[language].search(plain) or ((
                    (LEAD[language].search(following) if language in LEAD else None)
                    or REFUSAL[language].search(following)) if following else None)
            if cited is not None:
                return sentence, language, cited.group(0).strip(" ,.;:")
    return None


def session_fix(sentence: str, cited: str) -> str:
    """The fix for this session: the action declined and the rule cited, both from the text."""
    action = _ACTION.search(sentence.lower())
    what = f'"{excerpt(action.group(1), 60)}"' if action else "the request"
    return (f"the agent declined {what} citing \"{excerpt(cited, 60)}\": check that rule in SOUL.md / the policy "
            f"text; if the action should be allowed, say so there explicitly; if the refusal is right, nothing to fix")


class PolicyRefusal(Rule):
    """The agent declines by rule (a policy it cites) although it could act.

    Detects: an assistant reply (never a user's) in which the agent itself declines ("I can't",
    "I'm unable to", "I'm not allowed to", "I cannot assist", "no puedo", "ich darf … nicht",
    "je ne peux pas", "não posso", "non posso", "не могу", "无法", "できません", "saya tidak
    dapat", "할 수 없") and cites a policy, rule, guideline or terms as the reason, in the same
    sentence or at the start of the next ("I can't cancel this reservation because the policy
    does not allow it", "due to the policy restrictions, I am unable to modify the order",
    "that would be against our policy", "según nuestra política, no puedo…", "根据政策，我无法…"),
    in en, es, pt, fr, de, it, nl, pl, tr, id, ru, zh, ja and ko. Not: a capability refusal
    (a missing tool, target or permission: cant-run, "I don't have access to lxc 105"); a bare
    decline that names no rule ("I cannot assist with removing that passenger": cant-run); a
    product constraint stated about the thing ("basic economy tickets cannot be changed", "orders
    that have shipped can't be cancelled": no first-person decline); a rule the agent follows
    while acting ("per policy, I need to verify your identity first", "I can't proceed until you
    confirm"); conditions and questions; quoted text and code; a reply that also calls a tool.
    Root cause: the system prompt or policy text makes the agent refuse an action it has the tools for; the rule may be right, or over-strict.
    Fix: review the rule the agent cited in SOUL.md / the policy text: if the action should be allowed, say so explicitly; if the refusal is right, nothing to fix.
    """

    code = "NF008"
    name = "policy-refusal"
    severity = Severity.COSMETIC

    def check(self, session, ctx) -> Iterator[Finding]:
        hits = []
        for message in replies(session):
            found = policy_statement(message.text)
            if found is not None:
                hits.append((message, *found))
        if not hits:
            return
        quoted = [(message, quote_from(message.text, sentence)) for message, sentence, _, _ in hits]
        _, sentence, language, cited = hits[0]
        yield self.finding(
            f"agent declines by policy ({len(hits)} message{'s' if len(hits) > 1 else ''}): "
            f"\"{excerpt(quoted[0][1], 80)}\"",
            quoted,
            data={"languages": sorted({h[2] for h in hits}), "cited": cited},
            fix=session_fix(sentence, cited),
        )


@hookimpl
def nomos_forensics_rules():
    return [PolicyRefusal]
