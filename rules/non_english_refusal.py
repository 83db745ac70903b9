"""non-english-refusal: the agent answers in another language than the user writes in."""

from __future__ import annotations

from collections.abc import Iterator

from nomos_forensics.rulekit import Finding, Option, Rule, Severity, hookimpl, language

# A user message is short ("reinicia nginx", "¿y ahora?", "重启 nginx"): one word unit and one
# vote from the word lists are enough to name its language, if nothing else competes.
USER_MIN_UNITS = 1.0
USER_MIN_SCORE = 1.0
USER_MARGIN = 1.5
# The user's own words vote at least this much for the reply's language: a mixed-language user.
USER_MIXED_EVIDENCE = 0.5
USER_SHORT_UNITS = 6  # in a message this short, any such evidence is enough
USER_WRITES_EVIDENCE = 2.0  # a sentence of the user's own in that language ("what does this mean: <pasted log>")
SESSION_SAMPLE_CHARS = 5000


class NonEnglishRefusal(Rule):
    """An assistant reply in another language than the user writes in.

    Detects: an assistant message whose prose (code blocks, inline code, reasoning blocks,
    quoted lines and strings, paths, URLs and commands removed) is confidently in a different
    language from the user's: the language of the user message of the same turn (a one- or
    two-word message counts: "reinicia nginx", "¿y ahora?", "重启 nginx"), else of all the
    user's messages, else `default_language`. Unicode scripts decide first (Chinese, Japanese,
    Korean, Cyrillic, Arabic, Hebrew, Devanagari, Thai, …), then word lists of 33 Latin-script
    languages, then an offline detector (Lingua, low-accuracy mode) for Latin prose the word
    lists cannot decide. Not a finding: closely related languages (Spanish/Portuguese,
    Danish/Norwegian/Swedish, Russian/Ukrainian, …); a user who writes some of their message in
    the reply's language ("restart nginx por favor", an English question about a pasted Russian
    error); a user who asked for that language or for a translation, in this turn or before;
    replies with too little prose to tell (code, logs, tables, lists of names). A Spanish user
    answered in Spanish is not a finding; an English user answered with Chinese boilerplate is,
    and so is a German user answered in English.
    Root cause: flash-tier model degradation: the model falls back to boilerplate in another language.
    Fix: add a response-quality guard that detects a language switch and retries (or escalates to a stronger model).

    """

    code = "NF004"
    name = "non-english-refusal"
    severity = Severity.BLOCKER
    config = {
        "default_language": Option("en", "ISO 639-1 code of the language assumed when the user wrote too little to tell"),
        "min_confidence": Option(0.6, "how sure the language identifier must be that a reply is in another language",
                                 minimum=0.0, maximum=1.0),
    }

    def check(self, session, ctx) -> Iterator[Finding]:
        min_conf = self.options["min_confidence"]
        default = self.options["default_language"]
        session_language: list[str] = []  # computed once, on first need
        user_texts: list[str] = []  # the user's messages so far
        hits = []
        for turn in session.turns:
            user = turn.user_message
            user_text = user.text if user is not None and user.has_text else ""
            if user_text:
                user_texts.append(user_text)
            user_profile: language.Profile | None = None
            expected: str | None = None
            for message in turn.messages:
                if message.role != "assistant" or not message.has_text:
                    continue
                reply = language.detect(message.text)
                if reply is None or reply.confidence < min_conf:
                    continue
                if user_profile is None:
                    user_profile = language.profile(user_text)
                    found = _user_language(user_text, user_profile)
                    if found is None and user_text:
                        found = language.guess_short(user_text, user_profile)
                    expected = found.language if found is not None else None
                    guessed = expected is None
                    if expected is None:
                        if not session_language:
                            joined = "\n".join(user_texts_all(session))[:SESSION_SAMPLE_CHARS]
                            found = _user_language(joined, language.profile(joined))
                            session_language.append(found.language if found is not None else default)
                        expected = session_language[0]
                if language.is_close(reply.language, expected):
                    continue
                # a user who mixes in the reply's language: "restart nginx por favor"
                mixed = language.evidence(user_profile, reply.language)
                if mixed >= USER_MIXED_EVIDENCE and (
                    mixed >= USER_WRITES_EVIDENCE
                    or mixed >= 0.5 * language.evidence(user_profile, expected)
                    or user_profile.units <= USER_SHORT_UNITS
                ):
                    continue
                if any(language.requested_language(text, reply.language) for text in user_texts):
                    continue
                # the user's language was not told by their words: a short message that may
                # well be in the reply's language ("O backup terminou?") is no evidence of a switch
                if guessed and user_text and language.could_be(user_text, user_profile, reply.language):
                    continue
                hits.append((message, reply.language, expected))
        if not hits:
            return
        languages = sorted({language.LANGUAGE_NAMES.get(lang, lang) for _, lang, _ in hits})
        expected_names = sorted({language.LANGUAGE_NAMES.get(e, e) for _, _, e in hits})
        yield self.finding(
            f"{len(hits)} assistant repl{'y' if len(hits) == 1 else 'ies'} in {', '.join(languages)} "
            f"to a user writing {', '.join(expected_names)}",
            [m for m, _, _ in hits],
            blocker=f"reply in {', '.join(languages)} to a {', '.join(expected_names)}-speaking user",
        )


def user_texts_all(session) -> list[str]:
    return [m.text for m in session.messages if m.role == "user" and m.has_text]


def _user_language(text: str, prof: language.Profile) -> language.Detection | None:
    if not text:
        return None
    return language.decide(prof, text, min_units=USER_MIN_UNITS, min_score=USER_MIN_SCORE, margin=USER_MARGIN,
                  running_text=False)


@hookimpl
def nomos_forensics_rules():
    return [NonEnglishRefusal]
