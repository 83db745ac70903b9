"""non-english-refusal: the agent answers in another language than the user writes in."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from nomos_forensics.rulekit import Evidence, Finding, Option, Rule, Severity, excerpt, hookimpl, language, refusals

# A user message is short ("reinicia nginx", "¿y ahora?", "重启 nginx"): one word unit and one
# vote from the word lists are enough to name its language, if nothing else competes.
USER_MIN_UNITS = 1.0
USER_MIN_SCORE = 1.0
USER_MARGIN = 1.5
# The user's own words vote at least this much for the reply's language: a mixed-language user.
USER_MIXED_EVIDENCE = 0.5
USER_SHORT_UNITS = 6  # in a message this short, any such evidence is enough
USER_WRITES_EVIDENCE = 2.0  # a sentence of the user's own in that language ("what does this mean: <pasted log>")
# Each user message votes for its language with 1 + (word units, capped) / USER_WEIGHT_CAP: the
# conversation's language is the one most messages are in; one pasted document is one vote.
USER_WEIGHT_CAP = 30.0
# A reply whose prose (pasted lines and commands out) is shorter than this must be at least a
# quarter of the reply: a few words around a command line ("See … for more info.") tell nothing.
REPLY_MIN_UNITS = 8.0


@dataclass
class _UserMessage:
    turn: int
    text: str  # the user's own prose (client-injected text and pasted lines removed)
    profile: language.Profile
    language: str | None  # what the words say, None when they cannot tell
    so_far: str | None = None  # the conversation's language up to and including this message
    guessed: str | None = None  # Lingua's guess for a short message the words could not decide
    guess_done: bool = False


_NO_MESSAGE = _UserMessage(0, "", language.profile(""), None)


class _Users:
    """The user's language across the conversation, read lazily: a turn's own user message when
    a reply of that turn needs it, the conversation's language up to a turn only when the reply
    is not in the turn's own language (each user message is read once, own prose only)."""

    def __init__(self, session) -> None:
        self._turns = {turn.number: turn for turn in session.turns}
        self._order = sorted(self._turns)
        self._entries: dict[int, _UserMessage] = {}
        self._done = 0  # how many turns (in order) the running vote has counted
        self._weights: dict[str, float] = {}
        self._leader: str | None = None

    def turn(self, number: int) -> _UserMessage:
        entry = self._entries.get(number)
        if entry is None:
            turn = self._turns.get(number)
            user = turn.user_message if turn is not None else None
            if user is None or not user.has_text:
                return _NO_MESSAGE
            text = language.own_prose(user.text)
            prof = language.profile(text)
            found = _user_language(text, prof)
            entry = self._entries[number] = _UserMessage(number, text, prof, found.language if found else None)
        return entry

    def so_far(self, number: int) -> str | None:
        """The language most of the user's messages are in up to turn `number` (one vote per
        message, a little more for a longer one, close languages together: one pasted document
        is one vote), or None while no message has told."""
        while self._done < len(self._order) and self._order[self._done] <= number:
            entry = self.turn(self._order[self._done])
            if entry.language is not None:
                self._weights[entry.language] = self._weights.get(entry.language, 0.0) + 1.0 + min(
                    entry.profile.units, USER_WEIGHT_CAP) / USER_WEIGHT_CAP
                self._leader = _leader(self._weights)
            if entry is not _NO_MESSAGE:
                entry.so_far = self._leader
            self._done += 1
        entry = self._entries.get(number)
        return entry.so_far if entry is not None else self._leader

    def overall(self) -> str | None:
        """The language most of the user's messages are in, over the whole conversation."""
        self.so_far(self._order[-1] if self._order else 0)
        return self._leader

    def counted(self, upto: int) -> list[_UserMessage]:
        self.so_far(upto)
        return [self._entries[n] for n in self._order if n <= upto and n in self._entries]

    def scores(self, upto: int) -> dict[str, float]:
        """The word-list votes of all the user's prose up to turn `upto`, summed."""
        total: dict[str, float] = {}
        for entry in self.counted(upto):
            for lang, score in entry.profile.scores.items():
                total[lang] = total.get(lang, 0.0) + score
        return total

    def quote(self, upto: int, lang: str) -> _UserMessage | None:
        """The user's latest message in `lang` (or a close language) up to turn `upto`."""
        for entry in reversed(self.counted(upto)):
            if entry.language is not None and language.is_close(entry.language, lang):
                return entry
        return None


def _leader(weights: dict[str, float]) -> str:
    def family(lang: str) -> float:
        return sum(w for k, w in weights.items() if language.is_close(k, lang))

    return max(weights, key=lambda lang: (family(lang), weights[lang]))


class NonEnglishRefusal(Rule):
    """An assistant reply in another language than the user writes in (a refusal or boilerplate).

    Detects: an assistant message whose prose (code blocks, inline code, reasoning blocks,
    quoted lines and strings, pasted output and code lines, paths, URLs and commands removed)
    is confidently in a different language from the user's. The user's language is that of the
    user's own prose across the conversation up to that turn: each user message's words
    (client-injected text such as a context summary after compaction, <system-reminder> or
    <command-…> blocks, and pasted logs, stack traces and code removed; of a message over 20,000
    characters, only its first 16,000 and last 4,000 are read) name its language, and
    the conversation's is the one most of them are in, so a plain English "Perfect! I've
    completed all the tasks." to a user who writes Chinese is found even when the turn's only
    user text was the client's summary. A reply also passes when it is in the language of its
    own turn's user message (a user who switches language). Unicode scripts decide first
    (Chinese, Japanese, Korean, Cyrillic, Arabic, Hebrew, Devanagari, Thai, …), then word lists
    of 33 Latin-script languages, then an offline detector (Lingua, low-accuracy mode) for Latin
    prose the word lists cannot decide. Closely related languages (Spanish/Portuguese,
    Danish/Norwegian/Swedish, Russian/Ukrainian, …) count as one, except Spanish, Portuguese
    and Italian when both sides are clear (a Portuguese "Para analizar por que o usuário admin
    não pode aprovar…" to a user who writes Spanish throughout is a finding). The finding
    quotes the reply and the user's words and names the language pair in its fix.
    Not a finding: a Chinese reply to a Chinese user who pasted an English stack trace (pasted
    lines are not the user's language); a user who writes some of their message in the reply's
    language ("restart nginx por favor", an English question about a pasted Russian error); a
    user who asked for that language, or for a translation without naming another language
    ("translate this into Spanish"); a reply to a short first message before the user has
    shown a language ("hi" answered in English, then Indonesian requests), or to a short
    message in the language the conversation turns out to be in ("halo there" answered in
    Indonesian); replies with too little prose to tell (code, logs, tables, lists of names, a
    command with "See … for more info."); a user message made only of names typed as commands
    ("sync-afi aider-afi" tells no language). A Spanish user answered in Spanish is not a finding;
    an English user answered with Chinese boilerplate is, and so is a German user answered in
    English. The finding says how many of the replies decline (text.refusal's decision, the one
    the refusal rules use; `data.refusals`), and nothing of it when none does (boilerplate or an
    answer in the wrong language). Each reply is read in its first 8,000 characters, whatever its length.
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

    def preload(self) -> None:
        language.preload()  # Lingua's models, shared by the --jobs workers

    def check(self, session, ctx) -> Iterator[Finding]:
        min_conf = self.options["min_confidence"]
        default = self.options["default_language"]
        users: _Users | None = None  # read on first need
        requests: list[tuple[int, str]] | None = None  # (turn, text) of every user message, on first need
        hits = []
        for turn in session.turns:
            for message in turn.messages:
                if message.role != "assistant" or not message.has_text:
                    continue
                reply = language.detect(message.text)
                if reply is None or reply.confidence < min_conf:
                    continue
                if users is None:
                    users = _Users(session)
                own = users.turn(turn.number).language
                if own is not None and (reply.language == own or (
                    language.is_close(reply.language, own) and frozenset((reply.language, own)) not in language.SEPARABLE
                )):
                    continue  # the common case: answered in the language of the turn's own message
                if requests is None:
                    requests = [(m.turn, m.text) for m in session.messages if m.role == "user" and m.has_text]
                found = self._mismatch(message, reply, turn.number, users, requests, default)
                if found is not None:
                    hits.append(found)
        if hits:
            yield self._finding(hits, users, {m.id for m, _ in refusals(session)})

    def _mismatch(self, message, reply, number, users: _Users, requests: list[tuple[int, str]], default: str):
        """(message, reply language, expected language, the user message quoted) or None."""
        lang = reply.language
        own = users.turn(number)
        if own.language is None and own.text and not own.guess_done:
            guess = language.guess_short(own.text, own.profile)
            own.guessed, own.guess_done = (guess.language if guess is not None else None), True
        this_turn = own.language or own.guessed
        reply_profile: list[language.Profile] = []

        def same(a: str, b: str) -> bool:
            if not language.is_close(a, b):
                return False
            if a == b or frozenset((a, b)) not in language.SEPARABLE:
                return True
            if not reply_profile:
                reply_profile.append(language.profile(message.text))
            return not language.told_apart(reply_profile[0], message.text, a, users.scores(number), b)

        if this_turn is not None and same(lang, this_turn):
            return None  # the common case: answered in the language of the turn's own message
        so_far = users.so_far(number)
        expected = this_turn or so_far or default
        if same(lang, expected) or (so_far is not None and same(lang, so_far)):
            return None
        overall = users.overall()
        if overall is not None and own.profile.units <= USER_SHORT_UNITS and same(lang, overall):
            return None  # a short message in the language the conversation turns out to be in
        # a user who mixes in the reply's language: "restart nginx por favor"
        if language.is_close(lang, expected):  # told apart (Portuguese to Spanish): each language's own votes
            mixed, theirs = own.profile.scores.get(lang, 0.0), own.profile.scores.get(expected, 0.0)
        else:
            mixed, theirs = language.evidence(own.profile, lang), language.evidence(own.profile, expected)
        if mixed >= USER_MIXED_EVIDENCE and (
            mixed >= USER_WRITES_EVIDENCE
            or mixed >= 0.5 * theirs
            or own.profile.units <= USER_SHORT_UNITS
        ):
            return None
        if any(language.asked_for(text, lang) for turn, text in requests if turn <= number):
            return None
        # the user's language was not told by their words: a short message that may well be in
        # the reply's language ("O backup terminou?") is no evidence of a switch
        if this_turn is None and own.text and language.could_be(own.text, own.profile, lang):
            return None
        # enough prose once pasted lines and commands are out, and still in that language
        head = message.text[:language.RAW_CHARS]  # what profile() reads of it at all
        strict_text = language.prose(language.without_pasted_lines(head))
        strict = language.profile(strict_text)
        if strict.units < language.MIN_UNITS or (
            strict.units < REPLY_MIN_UNITS and 4 * len("".join(strict_text.split())) < len("".join(head.split()))
        ):
            return None  # a few words around a command or a file: "See … for more info."
        again = language.decide(strict, strict_text)
        if again is None or same(again.language, expected):
            return None
        quoted = own if own.text and this_turn is not None else users.quote(number, expected)
        return message, lang, expected, quoted

    def _finding(self, hits, users: _Users, refusing: set[int]) -> Finding:
        names = language.LANGUAGE_NAMES
        pairs: dict[tuple[str, str], int] = {}
        evidence = []
        for message, lang, expected, quoted in hits:
            pairs[(expected, lang)] = pairs.get((expected, lang), 0) + 1
            reply_words = " ".join(language.prose(message.text).split())[:90]
            said = f' to {names.get(expected, expected)} "{" ".join(quoted.text.split())[:70]}"' if quoted else ""
            evidence.append(Evidence(message.id, message.turn,
                                     excerpt(f'{names.get(lang, lang)} reply "{reply_words}"{said}', 200)))
        replies = sorted({names.get(lang, lang) for (_, lang) in pairs})
        expected_names = sorted({names.get(e, e) for (e, _) in pairs})
        pair_text = ", ".join(f"{names.get(e, e)} → {names.get(r, r)}" for (e, r) in pairs)
        summary_turns = [m.turn for m, *_ in hits if users.turn(m.turn).text == "" and m.turn > 1]
        after = (" The switch follows turns whose only user text is the client's (a context summary): carry "
                 "the user's language into the summary." if summary_turns else "")
        first_expected = names.get(hits[0][2], hits[0][2])
        fix = (f"Replies switched language ({pair_text}): add a response-language guard that detects a reply "
               f"not in the user's language and retries with an explicit \"answer in {first_expected}\" "
               f"instruction (or escalates to a stronger model).{after}")
        declined = sum(message.id in refusing for message, *_ in hits)
        what = "" if not declined else " (a refusal)" if len(hits) == 1 else (
            " (all of them refusals)" if declined == len(hits) else f" ({declined} of them refusals)")
        return self.finding(
            f"{len(hits)} assistant repl{'y' if len(hits) == 1 else 'ies'} in {', '.join(replies)} "
            f"to a user writing {', '.join(expected_names)}{what}",
            evidence,
            blocker=f"reply in {', '.join(replies)} to a {', '.join(expected_names)}-speaking user",
            data={"pairs": [{"user": e, "reply": r, "count": n} for (e, r), n in pairs.items()],
                  "refusals": declined},
            fix=fix,
        )


# a name with a joiner inside ("sync-afi", "run_tests", "src/app.py"): a command or a file, no prose
_IDENTIFIER = re.compile(r"[^\W_]+(?:[-_/.][^\W_]+)+")


def _user_language(text: str, prof: language.Profile) -> language.Detection | None:
    if not text:
        return None
    if len(text) < 120 and all(map(_IDENTIFIER.fullmatch, text.split())):
        return None  # only names, typed as commands ("sync-afi aider-afi" is not French)
    return language.decide(prof, text, min_units=USER_MIN_UNITS, min_score=USER_MIN_SCORE, margin=USER_MARGIN,
                  running_text=False)


@hookimpl
def nomos_forensics_rules():
    return [NonEnglishRefusal]
