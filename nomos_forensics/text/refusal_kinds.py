"""The kind of a decline text.refusal has found, from the grounds its cue tables read around the
declining sentences: an operator's rule, missing live or stored knowledge, a safety, ethics, law,
rules or opinion ground, a missing capability, or none (a model refusal). Besides the cue tables:
no access to *information* about something is missing knowledge, not a capability
(lexicons/knowledge_access.toml), and what the decline is about corrects the capability grounds
(lexicons/declined_topics.toml). The detector never reads these."""

from __future__ import annotations

import functools
from collections.abc import Callable

from . import lexicon
from .prefilter import LazyPattern
from .prose import straight_quotes
from .re2gate import Re2Gated


def plain(text: str) -> str:
    """Lower case, straight quotes, one space between words: how entries are matched."""
    return " ".join(straight_quotes(text.lower()).split())


# which ground decides when a reply gives several, first first: an operator's rule is named on
# purpose; an explicit lack of live or stored knowledge (a cut-off, the web, the knowledge base)
# outweighs topic words ("current statistics on weapon crimes"); a safety, ethics, law, rules or
# opinion ground outweighs the means (the guide: when two weigh alike, policy); a bare "I don't
# know" or a topic of the web ("a link", "online") comes next (on the held-out tune families,
# putting it after the capability grounds loses a third of no-web-tool's recall); a missing
# capability last. No ground at all: policy (a decline that gives no reason is a model refusal).
PRIORITY = (
    ("business-rule", ("business_rule",)),
    ("no-web-tool", ("knowledge_cutoff", "knowledge_gap", "knowledge_live")),
    ("policy", ("policy_rules", "policy_ethics", "policy_opinion", "policy_harm", "policy_law", "policy_guardrail")),
    ("no-web-tool", ("knowledge_unknown", "knowledge_topic")),
    ("cant-run", ("capability_access", "capability_act", "capability_verb")),
)


def kind_of(grounds: tuple[str, ...]) -> str:
    """The refusal kind the ground tables read near the declining sentences give (PRIORITY)."""
    present = {g.split("|", 1)[1] for g in grounds if g.startswith("g|")}
    return next((kind for kind, tables in PRIORITY if present.intersection(tables)), "policy")


_CAPABILITY_GROUNDS = ("g|capability_access", "g|capability_act", "g|capability_verb")


def what_it_declines(grounds: tuple[str, ...], said: list[tuple[str, tuple[str, ...]]],
                      cue_tables: Callable[[str], tuple[str, ...]]) -> tuple[str, ...]:
    """The kind's grounds corrected by what the declining sentences (`said`, with their cue
    tables; `cue_tables`: text.refusal's) are about (lexicons/declined_topics.toml): an action
    verb that is only the topic of information declined is no capability the agent lacks ("I
    cannot provide information on where to buy a gun"), an act of harm to someone declined is a
    harm ground ("I can't help you hack into someone's account"), whatever words of access it
    holds, and so are legal or safety reasons said in other words ("due to legal restrictions and
    safety risks")."""
    if (not any(g.startswith("g|policy_") for g in grounds) and _may_give_a_reason(" ".join(s for s, _ in said).lower())
            and any(any_language("declined_topics", "policy_ground").search(plain(s)) for s, _ in said)):
        grounds += ("g|policy_law",)  # "due to legal restrictions and safety risks": a ground the cue tables lack
    if not any(g in grounds for g in _CAPABILITY_GROUNDS):
        return grounds
    if "g|capability_verb" in grounds:
        verbs = [sentence for sentence, tables in said if "capability_verb" in tables]
        if verbs and all(_verb_is_topic(sentence, cue_tables) for sentence in verbs):
            grounds = tuple(g for g in grounds if g != "g|capability_verb")
    if "g|policy_harm" not in grounds and any(any_language("declined_topics", "harmful_act").search(plain(s)) for s, _ in said):
        grounds += ("g|policy_harm",)
    return grounds


# a word every policy_ground entry holds: the pattern is searched only where one is
_REASON_WORDS = ("legal", "safety", "health", "razones", "motivos", "razões", "razoes", "raisons", "gründen", "grunden",
                 "причин", "безопасности", "法律", "安全", "法的", "법적", "안전")


def _may_give_a_reason(text: str) -> bool:
    return any(w in text for w in _REASON_WORDS)


def _verb_is_topic(sentence: str, cue_tables: Callable[[str], tuple[str, ...]]) -> bool:
    """Whether every action verb of a declining sentence comes after the information it declines
    to give ("… provide information on where to buy a gun"): none stands before that object."""
    words = plain(sentence)
    found = any_language("declined_topics", "topic").search(words)
    return found is not None and "capability_verb" not in cue_tables(words[:found.start()])


@functools.cache
def any_language(name: str, section: str) -> Re2Gated:
    """One section of text/lexicons/<name>.toml, every language's patterns as one alternation
    (compiled on first use: `review` may never ask)."""
    data = lexicon.load("nomos_forensics.text", name)
    table, macros = data[section], data["macros"]
    # a long alternation with no literal to start from: RE2 reads it in one pass (exact: the match is Python's)
    return Re2Gated(LazyPattern("|".join(f"(?:{p})" for language in table for p in lexicon.patterns(table, language, macros))))


def about_knowledge(sentence: str) -> bool:
    """Whether a sentence says it has no access to knowledge (information, details, facts, news
    about something) rather than to a system: what a kind reads as missing knowledge. Not when
    it names the agent's tools ("the tools provided do not give me access to information about
    your payments": the means it lacks)."""
    words = plain(sentence)
    return any_language("knowledge_access", "patterns").search(words) is not None and _TOOLS.search(words) is None


_TOOLS = LazyPattern(r"\b(?:tools?|functions?|apis?|herramientas?|ferramentas?|outils?|werkzeuge?|инструмент)\b|"
                     r"工具|ツール|도구")
