"""error-card: a turn failed with an assistant error card, reported by cause."""

from __future__ import annotations

import re
from collections.abc import Iterator

from nomos_forensics.rulekit import Finding, Rule, Severity, excerpt, hookimpl, lexicon

_LEXICON = lexicon.load("nomos_forensics_rules", "error_cards")
CAUSES: tuple[str, ...] = tuple(_LEXICON["order"])
REPORTED = tuple(cause for cause in CAUSES if cause != "empty")  # "empty" is empty-response's
CAUSE_NAMES: dict[str, str] = dict(_LEXICON["names"])
_PATTERNS = {cause: re.compile(lexicon.pattern(_LEXICON["patterns"], cause), re.I) for cause in CAUSES}
_BOILERPLATE = re.compile(lexicon.pattern(_LEXICON["patterns"], "boilerplate"), re.I)
_PER_MINUTE_QUOTA = re.compile(lexicon.pattern(_LEXICON["patterns"], "per_minute_quota"), re.I)
_FIXES: dict[str, str] = dict(_LEXICON["fixes"])
_ROOT_CAUSES: dict[str, str] = dict(_LEXICON["root_causes"])

_RETRY = re.compile(_LEXICON["patterns"]["retry"], re.I)
_PROVIDER = re.compile(r"\b([A-Z][A-Za-z]*?)(?:_ai_beta|_ai|_studio)?Exception\b")
_PROVIDER_NAMES = {"openrouter": "OpenRouter", "openai": "OpenAI", "deepseek": "DeepSeek", "vertex": "Vertex AI",
                   "anthropic": "Anthropic", "lm": "LM Studio", "gemini": "Gemini", "azure": "Azure OpenAI"}
_PROVIDER_WORD = re.compile(r"\b(openrouter|openai|deepseek|anthropic|gemini|azure)\b", re.I)
_MESSAGE = re.compile(r'''\\*["']message\\*["']\s*:\s*\\*"((?:[^"\\]|\\[^"]){8,300})''')
_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*)?(?:\w+Error:\s*)?(?:\w+Exception\s*-\s*)?")


def attempts(error: str) -> list[str]:
    """The attempts a card holds, oldest first (a retrying client persists each one)."""
    return [part.strip() for part in _RETRY.split(error) if part.strip()] or [error]


def classify(error: str) -> str:
    """The cause of an error card: one of CAUSES, or "unknown". "empty" (blank completions,
    empty-response's) is read on the last attempt only."""
    last = attempts(error)[-1]
    if _PATTERNS["empty"].search(last):
        return "empty"
    for text in (last, error):
        text = _BOILERPLATE.sub(" ", text)
        for cause in REPORTED:
            if cause == "quota" and _PER_MINUTE_QUOTA.search(text):
                return "rate_limit"
            if _PATTERNS[cause].search(text):
                return cause
    return "unknown"


def quote(error: str, cause: str | None = None, limit: int = 110) -> str:
    """The card's own words, shortly: the provider's message when the card carries one (the
    innermost that names the cause: "prompt is too long", not "Provider returned error")."""
    last = attempts(error)[-1]
    messages = [m.group(1) for m in _MESSAGE.finditer(last)]
    pattern = _PATTERNS.get(cause or "")
    named = [m for m in messages if pattern is not None and pattern.search(m)]
    text = (named or messages or [_PREFIX.sub("", last)])[0]
    text = text.replace("\\n", " ").replace("\\'", "'").replace("\\\\", "\\")
    text = " ".join(text.split())
    return f'"{text if len(text) <= limit else text[: limit - 1].rstrip() + "…"}"'


def provider(error: str) -> str | None:
    """The provider a litellm-style card names ("AnthropicException" -> Anthropic)."""
    found = _PROVIDER.search(error)
    if found:
        name = found.group(1)
        return _PROVIDER_NAMES.get(name.lower(), name)
    named = _PROVIDER_WORD.search(error)
    return _PROVIDER_NAMES[named.group(1).lower()] if named else None


class ErrorCard(Rule):
    """An assistant error card: the turn failed with an API or client error, by cause.

    Detects: assistant messages that carry a persisted error card (`content.error`), one
    finding per cause: quota (credit or plan limit: "You've hit your limit · resets 9pm",
    "Your credit balance is too low", "Your tier does not have access to …" even as a 403), rate limit ("429", "rate_limit_error", a quota per
    second or minute: "Quota exceeded for …tokens_per_minute…"), context length
    ("has hit a token limit!", "prompt is too long"), authentication (missing or wrong API key),
    model configuration (unknown model name, "No endpoints found", provider not set, a retired
    model: "410 Gone … has reached its end of life"), timeout,
    provider error (5xx, connection, SSL), tool crash, unknown. A card from a retrying client
    is classified by its last attempt, the one the user got (a timeout retried into "You
    exceeded your current quota" is quota). The fix names the provider, the model and the
    card's own words. Not a finding: an error a tool returned as its result (`is_error` on a
    tool row: the model saw it and can recover), a reply that quotes an error message, a blank
    completion or a card that records blank completions ("The model returned an empty response
    3 times", Nomos's card after its retries: empty-response reports both).
    Root cause: the provider or the client failed the turn (quota, rate limit, context window, credentials, model name, outage).
    Fix: handle each cause where it arises (top up quota, back off on rate limits, trim context, validate keys and model names at start-up, fail over on outages) instead of showing the user an error card.
    """

    code = "NF009"
    name = "error-card"
    severity = Severity.BLOCKER

    def check(self, session, ctx) -> Iterator[Finding]:
        by_cause: dict[str, list] = {}
        for message in session.messages:
            if message.role == "assistant" and message.error:
                cause = classify(message.error)
                if cause != "empty":  # blank completions: empty-response reports them
                    by_cause.setdefault(cause, []).append(message)
        for cause, cards in sorted(by_cause.items(), key=lambda item: _order(item[0])):
            last = cards[-1].error or ""
            named = provider(last)
            model = session.info.model or "the configured model"
            fix = _FIXES[cause].format(
                quote=quote(last, cause), model=model, provider=named or "the provider",
                provider_cap=named or "The provider",
            )
            turns = sorted({m.turn for m in cards})
            where = ", ".join(str(t) for t in turns)
            finding = self.finding(
                f"{len(cards)} error card{'s' if len(cards) > 1 else ''}: {CAUSE_NAMES[cause]} "
                f"(turn{'s' if len(turns) > 1 else ''} {where})",
                [(m, excerpt(" ".join((m.error or "").split()))) for m in cards],
                blocker=f"error card: {CAUSE_NAMES[cause]}",
                data={"cause": cause, "count": len(cards), "turns": turns, "provider": named},
                fix=fix,
            )
            finding.root_cause = _ROOT_CAUSES[cause]
            yield finding


def _order(cause: str) -> int:
    return CAUSES.index(cause) if cause in CAUSES else len(CAUSES)


@hookimpl
def nomos_forensics_rules():
    return [ErrorCard]
