"""non-english-refusal: the agent answers in another language than the user writes in."""

from __future__ import annotations

from collections.abc import Iterator

from nomos_forensics import Finding, Rule, Severity, hookimpl
from nomos_forensics.langid import LANGUAGE_NAMES, confidence_for, detect, is_close


# Latin-script user messages shorter than this are too short for the statistical detector.
USER_LINGUA_MIN_LETTERS = 40


class NonEnglishRefusal(Rule):
    """An assistant reply in another language than the user writes in.

    Detects: an assistant message whose prose (code blocks, paths, URLs and commands removed)
    is confidently in a different language from the user's: the language of the user message
    of the same turn, else of all the user's messages, else `default_language`. Unicode
    scripts decide first (Chinese, Japanese, Korean, Arabic, …), then an offline detector
    (Lingua). Closely related languages (Spanish/Portuguese, Danish/Norwegian, …) must differ
    clearly; replies with too little prose to tell are skipped. A Spanish user answered in
    Spanish is not a finding; an English user answered with Chinese boilerplate is.
    Root cause: flash-tier model degradation: the model falls back to boilerplate in another language.
    Fix: add a response-quality guard that detects a language switch and retries (or escalates to a stronger model).

    Config: default_language (ISO 639-1, default "en"), min_confidence (default 0.6).
    """

    code = "NF004"
    name = "non-english-refusal"
    severity = Severity.BLOCKER
    config = {"default_language": "en", "min_confidence": 0.6}

    def check(self, session, ctx) -> Iterator[Finding]:
        min_conf = float(self.options["min_confidence"])
        user_texts = [m.text for m in session.messages if m.role == "user" and m.has_text]
        session_language = self._confident(
            detect("\n".join(user_texts)[:5000], lingua_min_letters=USER_LINGUA_MIN_LETTERS) if user_texts else None,
            min_conf,
        )
        hits = []
        for turn in session.turns:
            user = turn.user_message
            turn_language = self._confident(
                detect(user.text, lingua_min_letters=USER_LINGUA_MIN_LETTERS)
                if user is not None and user.has_text else None,
                min_conf,
            )
            expected = turn_language or session_language
            for message in turn.messages:
                if message.role != "assistant" or not message.has_text:
                    continue
                reply = detect(message.text)
                if reply is None or reply.confidence < min_conf:
                    continue
                if expected is None:
                    # too little text to be sure of the user's language: take the detector's
                    # best guess, and stay quiet if the user's words could be in the reply's language
                    sample = user.text if user is not None and user.has_text else "\n".join(user_texts)
                    guess = detect(sample, min_letters=1) if sample else None
                    if sample and confidence_for(sample, reply.language) >= 0.05:
                        continue
                    reference = guess.language if guess else str(self.options["default_language"])
                else:
                    reference = expected
                if is_close(reply.language, reference):
                    continue
                if reply.method == "lingua" and confidence_for(message.text, reference) >= 0.15:
                    continue
                hits.append((message, reply.language, reference))
        if not hits:
            return
        languages = sorted({LANGUAGE_NAMES.get(lang, lang) for _, lang, _ in hits})
        expected_names = sorted({LANGUAGE_NAMES.get(e, e) for _, _, e in hits})
        yield self.finding(
            f"{len(hits)} assistant repl{'y' if len(hits) == 1 else 'ies'} in {', '.join(languages)} "
            f"to a user writing {', '.join(expected_names)}",
            [m for m, _, _ in hits],
            blocker=f"reply in {', '.join(languages)} to a {', '.join(expected_names)}-speaking user",
        )

    @staticmethod
    def _confident(detection, min_conf: float) -> str | None:
        return detection.language if detection is not None and detection.confidence >= min_conf else None


@hookimpl
def nomos_forensics_rules():
    return [NonEnglishRefusal]
