"""user-frustration: the user had to correct, repeat or rebuke the agent."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from difflib import SequenceMatcher

from nomos_forensics.rulekit import (
    AnySubstring,
    Finding,
    Message,
    Rule,
    Session,
    Severity,
    WordGates,
    closings,
    excerpt,
    failed_row,
    frustration,
    hookimpl,
    lexicon,
    literal_first,
    prose,
    refusals,
)

# ---------------------------------------------------------------- phrase tables
# Kept as data in rules/lexicons/user_frustration.toml: per-language corrections, nudges,
# retries, pushback and the words a repeated request may differ by.
LEXICON = lexicon.load("nomos_forensics_rules", "user_frustration")
_PHRASES, _MACROS = LEXICON["patterns"], LEXICON["macros"]


def _by_language(section: str) -> list:
    """Every pattern of a per-language section of the lexicon ([corrections], [failed], ...),
    with its language, in order."""
    table = LEXICON[section]
    return [(lang, literal_first(p)) for lang in table for p in lexicon.patterns(table, lang, _MACROS)]


_CORRECTIONS = _by_language("corrections")
_FAILED = _by_language("failed")
_ESCALATION = _by_language("escalation")
_COMPLAINTS = _by_language("complaints")
TERSE_CHARS = 80  # a failure report is read only in a message this short (normalised)
DEMAND_CHARS = 160  # a sworn demand, too: a longer message that swears is a story, a paste or a vent
NUDGES = lexicon.patterns(_PHRASES, "nudges", _MACROS)
RETRY = lexicon.patterns(_PHRASES, "retry", _MACROS)
_CONDITIONAL = literal_first(lexicon.pattern(_PHRASES, "conditional", _MACROS))
REFUSAL = literal_first(lexicon.pattern(_PHRASES, "refusal", _MACROS))
PUSHBACK = lexicon.patterns(_PHRASES, "pushback", _MACROS)
_RESUME = re.compile(lexicon.pattern(_PHRASES, "resume", _MACROS))
_DO_IT_YOURSELF = literal_first(lexicon.pattern(_PHRASES, "do_it_yourself", _MACROS))
_HANDOVER = literal_first(lexicon.pattern(_PHRASES, "handover", _MACROS))
_OFFER = literal_first(lexicon.pattern(_PHRASES, "offer", _MACROS))
_BARE_NOTHING = re.compile(lexicon.pattern(_PHRASES, "bare_nothing", _MACROS))
BARE_CHARS = 40  # a bare "nothing" is a message this short
_NUDGES = [literal_first(p) for p in NUDGES]
_RETRY = [literal_first(p) for p in RETRY]
_PUSHBACK = [literal_first(p) for p in PUSHBACK]
_GATES = WordGates()
_CORRECTIONS_GATED = _GATES.add(_CORRECTIONS, key=lambda item: item[1])
_FAILED_GATED = _GATES.add(_FAILED, key=lambda item: item[1])
_ESCALATION_GATED = _GATES.add(_ESCALATION, key=lambda item: item[1])
_COMPLAINTS_GATED = _GATES.add(_COMPLAINTS, key=lambda item: item[1])
_NUDGES_GATED = _GATES.add(_NUDGES)
_RETRY_GATED = _GATES.add(_RETRY)
_PUSHBACK_GATED = _GATES.add(_PUSHBACK)
_candidate_mask = _GATES.mask
_candidates = WordGates.candidates


# A bare "no" opens a correction, unless it answers the assistant's question or closes politely.
_LEADING_NO = re.compile(lexicon.pattern(_PHRASES, "leading_no", _MACROS))
_POLITE_NO = re.compile(lexicon.pattern(_PHRASES, "polite_no", _MACROS))
_AFFIRMATION = re.compile(lexicon.pattern(_PHRASES, "affirmation", _MACROS))
_PROFANITY = literal_first(lexicon.pattern(_PHRASES, "profanity", _MACROS))
PROFANITY_STEMS = tuple(lexicon.words(_PHRASES["profanity_stems"]))
_SWEARS = AnySubstring(PROFANITY_STEMS)  # one Aho-Corasick pass: does the text hold a stem at all
_PRAISE = literal_first(lexicon.pattern(_PHRASES, "praise", _MACROS))  # literal_first: compiled on first use
_DEMAND = literal_first(lexicon.pattern(_PHRASES, "demand", _MACROS))
_NAMED = re.compile(r"\b(?:words?|like|such\s+as|called|profanity|swear\w*|curse\w*)\s+(?:\S+\s+){0,2}$")  # "words like shit"
_CONFIRMATION_REQUEST = literal_first(lexicon.pattern(_PHRASES, "confirmation_request", _MACROS))
_UNDERSTANDING_CHECK = literal_first(lexicon.pattern(_PHRASES, "understanding_check", _MACROS))
_CONTRAST = re.compile(lexicon.pattern(_PHRASES, "contrast", _MACROS))
_CONTRAST_B_FIRST = re.compile(lexicon.pattern(_PHRASES, "contrast_b_first", _MACROS))
_EITHER = re.compile(lexicon.pattern(_PHRASES, "either", _MACROS))
_CONTRAST_GATED = _GATES.add([_CONTRAST, _CONTRAST_B_FIRST])  # tried only where a negation's word is
READ_BACK_CHARS = 80  # a read-back is corrected in a short message
READ_BACK_TAIL = 400  # characters of the agent's reply that hold its read-back
_QUESTION_OPENER = re.compile(lexicon.pattern(_PHRASES, "question_opener", _MACROS))
_COMMAND_LINE = re.compile(lexicon.pattern(_PHRASES, "command_line", _MACROS))
_CLIENT_PROMPT = re.compile(lexicon.pattern(_PHRASES, "client_prompt", _MACROS))
_STATUS_QUESTION = re.compile(lexicon.pattern(_PHRASES, "status_question", _MACROS))
_FILES_REQUEST = re.compile(lexicon.pattern(_PHRASES, "files_request", _MACROS))
_CLIENT_ADDED = re.compile(lexicon.pattern(_PHRASES, "client_added", _MACROS), re.IGNORECASE | re.MULTILINE)
ADDED_MARK = "to the chat"  # a literal of every _CLIENT_ADDED match as aider writes it: client text without it is not searched

# ---------------------------------------------------------------- repeats
_SPACELESS = r"\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# words, numbers apart ("lxc/105", "lxc105" and "lxc 105" all give lxc, 105); one token per
# character in scripts written without spaces
_TOKEN = re.compile(rf"[{_SPACELESS}]|\d+|[^\W\d_{_SPACELESS}]+")
# words that change nothing about a request ("please", "again", "I said") across languages
_FILLER_WORDS = frozenset(lexicon.words(LEXICON["words"]["filler"]))
_FILLER_SPACELESS = re.compile(lexicon.pattern(_PHRASES, "filler_spaceless", _MACROS))
MIN_CONTENT = 3.0  # content weight a message needs to count as a repeatable request
MIN_CHARS = 12
SIMILAR = 0.8


MAX_SCAN = 4000  # characters of a long message that are read: its head and its tail
MAX_TOKENS = 300  # longer messages only count as repeats when identical


def normalise(text: str | None) -> str:
    """Lower-case NFKC text with code, quoted lines and curly quotes out of the way."""
    if not text:
        return ""
    if len(text) > MAX_SCAN:  # a pasted log: a complaint sits before or after it
        text = text[: MAX_SCAN - 1000] + "\n" + text[-1000:]
    text = prose(unicodedata.normalize("NFKC", text))
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(text.lower().split())


def content_tokens(normalised: str) -> list[str]:
    """Tokens that carry the request: words (characters in scripts without spaces), filler removed."""
    text = _FILLER_SPACELESS.sub(" ", normalised)
    return [t for t in _TOKEN.findall(text) if t not in _FILLER_WORDS]


_SPACELESS_CHAR = re.compile(rf"[{_SPACELESS}]")


def substantive(normalised: str, tokens: list[str] | None = None) -> bool:
    """Whether a message says enough to count as a request (`tokens`: its content_tokens, if known)."""
    if tokens is None:
        tokens = content_tokens(normalised)
    if normalised.isascii():
        return len(tokens) >= MIN_CONTENT and len(normalised) >= MIN_CHARS
    # a character of a script without spaces is a token of its own and weighs half a word
    weight = len(tokens) - 0.5 * sum(1 for t in tokens if _SPACELESS_CHAR.match(t))
    return weight >= MIN_CONTENT and len(normalised) >= (MIN_CHARS if not _SPACELESS_CHAR.search(normalised) else 6)


def near_repeat(a: list[str], b: list[str]) -> bool:
    """Same request: similar token sequences whose only substitutions are typos or spacing."""
    if not a or not b:
        return False
    if max(len(a), len(b)) > MAX_TOKENS:
        return a == b
    # Cheap upper bounds of quick_ratio first (most pairs are different requests): only tokens
    # of a kind the other side has can match, so 2*min(those in a, those in b)/(len a + len b)
    # bounds it, and the length bound is difflib's own real_quick_ratio.
    total = len(a) + len(b)  # computed as difflib does (2.0 * matches / total), so no float can disagree
    if 2.0 * min(len(a), len(b)) / total < SIMILAR:
        return False
    if 2.0 * min(sum(map(frozenset(b).__contains__, a)), sum(map(frozenset(a).__contains__, b))) / total < SIMILAR:
        return False
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    # quick_ratio bounds ratio from above and costs a fraction of it
    if matcher.quick_ratio() < SIMILAR or matcher.ratio() < SIMILAR:
        return False
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace":
            continue
        left, right = a[i1:i2], b[j1:j2]
        if _alnum("".join(left)) == _alnum("".join(right)):
            continue  # "lxc/105" vs "lxc 105"
        if len(left) == len(right) and all(_typo(x, y) for x, y in zip(left, right)):
            continue
        return False  # a different target, name or number: a different request
    return True


def _alnum(text: str) -> str:
    return re.sub(r"[\W_]", "", text)


def _typo(x: str, y: str) -> bool:
    if re.sub(r"\D", "", x) != re.sub(r"\D", "", y) or min(len(x), len(y)) < 4:
        return False
    return SequenceMatcher(None, x, y).ratio() >= 0.8


def asks(text: str | None) -> bool:
    """Whether an assistant reply ends by asking the user something (a question or a confirmation)."""
    return _asks(normalise(text))


def _asks(reply: str | None) -> bool:
    """`asks` on an already normalised reply (None: there was none)."""
    if not reply:
        return False
    tail = reply[-400:]
    return "?" in tail or bool(_CONFIRMATION_REQUEST.search(tail) or _opens_last_question(tail.rstrip()))


def _opens_last_question(tail: str) -> bool:
    """`_QUESTION_OPENER.search(tail)`, read from the tail's last sentence end on: every opener of
    the pattern follows the start or a sentence end and runs to the end of the text with no
    sentence end in between, so only the last sentence can hold a match (a reply's 400-character
    tail was searched at every position: 28 µs a reply)."""
    cut = max(tail.rfind("."), tail.rfind("!"))
    return bool(_QUESTION_OPENER.search(tail, cut) if cut > 0 else _QUESTION_OPENER.search(tail))


# ---------------------------------------------------------------- the rule
class UserFrustration(Rule):
    """The user had to correct, repeat, nudge or rebuke the agent.

    Detects: user messages, after the agent has replied at least once, that (a) contain a
    correction or rebuke, in English, German, French, Spanish, Portuguese, Italian, Dutch,
    Russian, Polish, Turkish, Indonesian, Czech, Thai, Chinese, Japanese or Korean ("no, I said…", "that's
    not what I asked", "I already told you", "again:", "that's wrong", "stop!", "why did you…",
    "you didn't…", "still not working", "there are still errors", "j'ai toujours cette erreur",
    "you're going in circles", "ты зациклился", "edit only X, not Y", "where did you put it?",
    "that's not my email", "there's an error in your last patch", a terse "fix the errors",
    "for the third time", "answer my question", "did you even understand what I asked?", "are
    you sure?" (not a pasted "Are you sure you want to continue connecting?"), "I asked for
    Italian in the centre" (opening the message), "can you check again?" after an answer of
    nothing, "я тебе уже три раза говорил", "soruma cevap ver", "いや、そういうことじゃない",
    "내가 요청하지 않은", a short demand to fix it that swears ("fix the fucking login already",
    "блядь, почини уже", "씨발 빨리 고쳐"; not swearing about the topic, nor "holy shit, it works,
    thanks!"), the agent's bug pointed out: "you use Mathf.Max with 3 values although the
    function only takes 2", Thai "หยุดตอบภาษาอังกฤษ!" stop answering in English!, the wrong target or a
    forgotten decision in plain words: "aren't we working on X here though", "I know this has been
    determined", "it's not being updated correctly", a clarification that opens the message: "i
    mean the LLM behind the chat", the agent told it acted too soon: "don't implement anything without
    my confirmation"…); (b) nudge the agent after a
    missing answer ("?", "you there?", "are you still there?", "¿sigues ahí?", "在吗？", "the reply is
    blank") or in disbelief (a message that is only "look again", "schau nochmal", "посмотри ещё
    раз") or ask it to try again (not a conditional "if it fails, try again"); (c) push back on a refusal ("you do have the run
    tool", "just run it"), only right after the assistant said it cannot do something; or
    (d) repeat the previous substantive user message near-verbatim: the same words after
    normalisation (case, Unicode, punctuation, filler such as "please"/"again"/"I said"), where
    the only substitutions are typos or spacing; a different host, name or number makes it a
    different request. Short messages (fewer than three content words: "yes", "ok",
    "continue", "do it") never count as repeats, and neither do answers: a message that
    starts with yes/no after the assistant asked something, retypes the request to confirm
    it, or gives the same answer to a different question; (e) send the same message again,
    however short ("Yes", "whoami"), when the assistant answered the first one with error cards
    only (not a one- or two-letter answer to the client's prompt, "a", nor a command line), or
    ask it to carry on ("resume", "continue", "go on") when its turn ended on an error card;
    (f) tell the agent to do what it handed back ("do it", "you run it and prompt me as
    needed", its own "you can upgrade by running" echoed back), right after a reply that hands
    commands to the user ("here's what you can paste into your terminal", "you'll need to run
    this yourself", "Run that and let me know") without offering to run them, or tell it that
    it can do the work itself ("You can do this yourself", "I'm confident that you can figure
    out how to restart … yourself"); (g) report, in a short message (up to TERSE_CHARS
    characters) right after a reply, or in the opening lines of a longer one (each line or
    sentence that ends within its first TERSE_CHARS characters: "ich probiere es / funktioniert
    nicht. / es kommt wieder die Meldung: …"), that what the agent did does not work: "doesn't work",
    "same error", "you broke it", "stuck again", "you're not helping", "не работает", "还是不行",
    "no funciona", "não funcionou", "geht nicht", "ça ne marche pas", "動かない", "안 돼", or made
    no difference: "nothing changed" (not "nothing changed in my config"), "nada mudou", "没有变化",
    "ничего не изменилось", "何も変わっていない", or that its change broke what worked: "it worked
    fine before", "ты сломал", "你改坏了", "rompiste lo que funcionaba", "antes funcionava", or no
    longer works: "it stopped working", "ya no puedo iniciar sesión", "还是不生效", "똑같이 깨져", or that
    the user already did what the reply suggests: "I already tried that", "já fiz isso",
    "genau das habe ich gemacht", "我已经试过了" (13 languages; lexicons [failed]), also after "let
    me know if it works"; not a question, though a report before one stands ("It doesn't work.
    What should I do?"); or a bare "nothing" right after the agent said what to
    try ("Tente sair e entrar novamente." - "nada"; not after a question, "Do you see an error?" -
    "nada", unless it opens with yes or still: "sim, nada"); (h) ask
    for a person instead of the agent, anywhere in a later message: "I want to speak to a human",
    "transfer me to a human agent", "转人工", "quero falar com um atendente", "ich möchte mit einem
    Mitarbeiter sprechen" (11 languages; lexicons [escalation]), not under a condition ("if the
    bot can't answer, I want to speak to a human") and not a feature that names the words ("add
    a 'talk to a human' button"); (i) complain in plain words about the service or the agent,
    anywhere in a later message, as support chats do: "this is unacceptable", "the worst
    customer service I've ever had", "I've been waiting for two weeks", "I want to file a
    complaint", "why is it taking so long", "you're wasting my time", "that is nothing like
    Inception", "怎么还没发货", "说了半天", "刚才不是已经给你了吗", "péssimo atendimento", "c'est
    inadmissible", "ich möchte mich beschweren", "это безобразие", "いつまで待たせる" (11 languages;
    lexicons [complaints]); not under a condition ("if the customer says this is unacceptable,
    escalate"), not quoted ('add a button "I want to file a complaint"'), not a task that names
    the words ("add a form where customers say the service is terrible"), nor a neutral "how long
    do I have to wait for the cache?", "最悪の場合" (in the worst case) or "it's just a joke"; or
    correct a read-back: "That's the wrong hotel", "Wrong movie.", a message that opens "I said
    moderate!" or "I asked for 2 people at 7", a short contrast whose second part the agent's last
    words hold ("7 AM, not PM" after "Alarm set for 7pm", "不是周三，是周二", "水曜日じゃなくて火曜日"; not
    when it offered the choice: "Python or JavaScript?" - "Python, not JavaScript"), or an English
    "no" to a question that read back two or more of the user's words and got a detail wrong, the
    user stating it again, a number or a name ("Shall I book the train to Cambridge at 9:15 on
    Wednesday?" - "No, it should be Tuesday"; not "no, just the address" to an offer, nor "No,
    it should be removed" to "Should I keep the old config?"). A leading "no" ("well no, …") is a
    correction when the assistant had not asked a question, or had asked whether it understood
    right ("Does this framing match your mental model?", "…, right?").
    Code blocks and quoted lines are ignored;
    the first user message never counts.
    Beside these phrases, every later user message is read by text.frustration's model (trained
    on the labelled user messages of the real-text corpus's tune families: chat exports, support
    dialogues, agent logs, a dozen languages), which adds what they miss: terse reports ("still
    broken", "не работает", "还是不行"), plain-worded complaints ("you are not helping"), a
    request pasted again in other words, disbelief and nudges ("look again", "are you still
    there?"), and gives each message found its kind (clarify, correct, repeat, complain) and grade
    (low: a polite correction; medium: a repeated request; high: a complaint, an insult, "it broke
    again"). The model alone flags a message only when it scores it well above "none"
    (text.frustration.MIN_MARGIN), and never a command line, an answer to the client's prompt, a
    conditional instruction, a message under three characters, or the same prompt arriving again
    right after a silent tool round or a tool result that worked (the client re-sent it; after a
    failed or interrupted call it is the user's repeat). One finding per session,
    quoting each such message; its `data.messages` lists them with kind, grade and the phrase
    reading that found them (`signal`: "failure-report", "correction", "nudge", "retry", …; null
    when the model alone did), and the message names the highest grade. The Outcome reads the
    failure reports among the last two requests (docs/outcome.md, step 20, "still-failing").
    Not flagged: a new request or follow-up question; the user describing their own state
    ("while I still don't have my user ID, …"); a fix request that names where to work ("fix
    the bug in login.py where…" is a task, not a complaint); a command line for the client
    retyped after errors ("aider --model x" twice); a prompt the client re-sends itself (aider's
    watch mode: "Find the "AI" comments below (marked with █) …"); a request sent again once the
    files the reply asked for are in the chat (aider's add-files workflow: "Please add these files to
    the chat", the client's "Added client/src/App.js to the chat", then the request, often with a
    clause added: "… Use tailwind for styling"), or a prompt template that opens
    with a markdown heading (a custom slash command run again: Claude Code sends its file, "# Session
    Catchup …", each time); a status question asked again while a job runs ("how is our progress"
    twelve times, each answered with the figures); "do it" or "you decide" after a reply that
    offers to run the commands itself or asks a question ("Want me to run it for you?", "Shall
    I go ahead?": an answer), or after a tip ("you can also use `aerospace balance-sizes`"),
    "continue" after an answer (the next step), a request for a tool the agent will run later
    ("write a script so that you can run this check yourself"); a complaint worded as a plain
    report or a bare order ("Somehow it made the SVG invisible. Fix it.", Czech "uprav to", edit
    it) unless the model is sure of it: it reads as a new request; "I mean," as filler or "I mean it";
    a leading "no" that answers the agent's question; one message sent twice by the client, or
    one request sent twice with no reply between (a client retry); a phrase the user quotes ("the
    CI log says 'still failing'") or puts under a condition ("if it still fails after the deploy,
    restart it");
    a failure report that is a condition ("if it doesn't work, restart php-fpm too"), a request
    ("do the same thing for mypy"), or part of a longer message (a new problem reported with its
    context is a task), and a first message that says something does not work (the task itself).
    Root cause: the agent misunderstood or ignored the request, acted on the wrong target,
    refused something it can do, claimed success that did not hold, returned nothing, or
    asked for what the user had already said; the user spent turns steering it instead of
    getting the task done.
    Fix: read the quoted messages against the agent's replies before them; tighten SOUL.md
    (restate the target before acting, verify results before claiming success, never ask for
    information already given, use `run` instead of refusing) and add the exchange to the
    agent's evaluation set.
    """

    code = "NF106"
    name = "user-frustration"
    severity = Severity.FRICTION

    def check(self, session: Session, ctx) -> Iterator[Finding]:
        hits: list[tuple[Message, str]] = []
        decided = []
        for message, text, context, reason in user_contexts(session):
            # the phrase signal stands (tuned on coding agents' sessions); the model adds what
            # it misses, and gives every message found its kind and grade
            if reason is None and _not_for_the_model(text):
                continue
            found = frustration.decide(message.text, context, always=reason is not None)
            if found is None:
                continue
            said = reason or f"{found.kind} ({found.grade})"
            hits.append((message, f"{said}: \u201c{excerpt(message.text, 150)}\u201d"))
            decided.append({"message_id": message.id, "kind": found.kind, "grade": found.grade,
                            "signal": _signal(reason)})  # the phrase reading's name; None: the model alone
        if not hits:
            return
        turns = ", ".join(str(t) for t in sorted({m.turn for m, _ in hits})[:6])
        count = len(hits)
        grades = {d["grade"] for d in decided}
        grade = next(g for g in ("high", "medium", "low") if g in grades)
        yield self.finding(
            f"the user corrected, repeated or nudged the agent in {count} message{'s' if count != 1 else ''}"
            f" (turn {turns}; highest grade {grade})",
            hits,
            data={"messages": decided},
        )

    @staticmethod
    def _correction(text: str, reply: str | None, asked: bool | None = None, raw: str | None = None) -> str | None:
        """Why `text` corrects, rebukes or nudges the agent, or None (`text` and the assistant's
        `reply` before it normalised; `reply` None when there was none; `asked`: `_asks(reply)`,
        if known; `raw`: the message as written, if known)."""
        return _strong_signal(text) or _weak_signal(text, None if reply is None else _Reply(None, reply, asked),
                                                     raw=raw)


def _not_for_the_model(text: str) -> bool:
    """Messages the phrase reading knows are no frustration, whatever their words: a command line
    for the client, an answer to the client's prompt, a conditional instruction ("if it times
    out, try again")."""
    return len(text) < 3 or bool(_COMMAND_LINE.match(text) or _CLIENT_PROMPT.match(text) or _CONDITIONAL.search(text))


def _signal(reason: str | None) -> str | None:
    """The kind of phrase signal a reason names (the model's feature)."""
    if reason is None:
        return None
    for prefix, name in (("correction (leading", "leading-no"), ("correction", "correction"), ("nudge", "nudge"),
                         ("retry", "retry"), ("pushback", "pushback"), ("told to do", "handed-back"),
                         ("sent again", "resent"), ("repeat", "repeat"), ("asked to carry on", "resume"),
                         ("complaint", "correction"),
                         ("failure report", "failure-report")):
        if reason.startswith(prefix):
            return name
    return "other"


def user_contexts(session: Session) -> Iterator[tuple[Message, str, frustration.Context, str | None]]:
    """Each user message after the agent's first reply, with its text as the phrases read it
    (`normalise`), what surrounds it (the user's earlier messages, the agent's last text and how
    its turn ended) and the phrase signal of this rule (a reason, or None)."""
    seen_assistant = False
    assistant_text: str | None = None  # the assistant's last text since the previous user message
    assistant_message: Message | None = None
    previous: tuple[Message, list[str], _Reply | None] | None = None  # last substantive user message
    last_user: tuple[Message, str] | None = None  # the last user message, normalised
    card = answered = False  # since the last user message: an error card; a reply with text or tool calls
    ended_on_card = False  # the last assistant message since the last user message is an error card
    added = False  # since the last user message, the client reported files added to the chat
    earlier: list[str] = []
    declined: set[int] | None = None
    spoke = False  # since the last user message, the assistant wrote text
    heard = False  # since the last user message, any assistant message at all
    after_tool = False  # the message before this one is a tool result that worked, not answered yet
    for message in session.messages:
        if message.role == "system":
            after_tool = False  # the client spoke (an interrupt notice, a report): the user acts after it
            if not added and message.text and ADDED_MARK in message.text and _CLIENT_ADDED.search(message.text):
                added = True
            continue
        if message.role == "assistant":
            seen_assistant = heard = True
            after_tool = False
            spoke = spoke or message.has_text
            if message.has_text:
                assistant_text, assistant_message = message.text, message
            card = card or bool(message.error)
            ended_on_card = bool(message.error)
            answered = answered or message.has_text or bool(message.tool_calls)
            continue
        if message.role != "user":
            after_tool = after_tool or (message.role == "tool" and not failed_row(message))
            continue
        text = normalise(message.text)
        tokens = content_tokens(text)
        is_request = substantive(text, tokens) and not _COMMAND_LINE.match(text)
        reply = _Reply(assistant_text) if assistant_text is not None else None  # normalised on first need
        if (seen_assistant and text and answered and (not spoke or after_tool) and not card and last_user is not None
                and last_user[1] == text):
            # the same prompt again right after a silent tool round, or right after a tool result that
            # worked and that the agent had not answered yet, no error: the client re-sent it
            # (AgentDojo's repeat-the-prompt defence), not the user (who re-sends after a failure or
            # an interrupt: "[Request interrupted by user for tool use]", then "login to git" again)
            last_user, card, answered, ended_on_card, added, spoke = (message, text), False, False, False, False, False
            heard = after_tool = False
            continue
        if is_request and not heard and last_user is not None and last_user[1] == text:
            # the same request twice with nothing between: sent twice (a client retry), not repeated; a
            # bare "continue" sent again to a silent agent is a nudge, and is read on
            continue
        if seen_assistant and text:
            mask = _candidate_mask(text)
            reason = _strong_signal(text, mask) or _weak_signal(text, reply, mask, message.text)
            if reason is None and reply is not None and len(text) <= READ_BACK_CHARS:
                reason = _read_back(text, reply, earlier[-frustration.EARLIER_READ:], message.text, mask)
            if (reason is None and card and not answered and last_user is not None and last_user[1] == text
                    and (is_request or _AFFIRMATION.match(text) or len(text) >= 3)  # not "a" to the client
                    and not _COMMAND_LINE.match(text)):  # nor a command line
                reason = f"sent again after an error card (message {last_user[0].id}, turn {last_user[0].turn})"
            if reason is None and previous is not None and is_request:
                before, before_tokens, before_reply = previous
                if near_repeat(before_tokens, tokens) and not _answers(
                    text, before_tokens, reply.text if reply else None,
                    before_reply.text if before_reply and before_reply.asked else None,
                    bool(reply and reply.asked),
                ) and not _CLIENT_PROMPT.match(text) and not _polls(text, before) and not (  # read only on a repeat
                        added and reply is not None and _FILES_REQUEST.search(reply.text)):  # files it asked for, added
                    reason = f"repeat of message {before.id} (turn {before.turn})"
            if reason is None and ended_on_card and _RESUME.match(text):
                reason = "asked to carry on after the turn ended on an error card"
            if declined is None:
                declined = {id(m) for m, _ in refusals(session)}
            context = frustration.Context(
                earlier=tuple(earlier[-frustration.EARLIER_READ:]),  # what the model reads of them
                reply=assistant_text, reply_error=ended_on_card or not answered,
                reply_asked=bool(reply and reply.asked), reply_declined=id(assistant_message) in declined,
                signal=_signal(reason))
            yield message, text, context, reason
        if text:
            earlier.append(text)
        if is_request:
            previous = (message, tokens, reply)
        last_user, card, answered, ended_on_card, added, spoke = (message, text), False, False, False, False, False
        heard = after_tool = False
        assistant_text, assistant_message = None, None


class _Reply:
    """The assistant's last text before a user message, normalised (and asked about) only when a
    signal needs it: most user messages are decided without reading the reply."""

    __slots__ = ("_raw", "_text", "_asked")

    def __init__(self, raw: str | None, text: str | None = None, asked: bool | None = None) -> None:
        self._raw, self._text, self._asked = raw, text, asked

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = normalise(self._raw)
        return self._text

    @property
    def asked(self) -> bool:
        """Whether the reply ends by asking the user something."""
        if self._asked is None:
            self._asked = _asks(self.text)
        return self._asked


def _strong_signal(text: str, mask: int | None = None) -> str | None:
    """A correction, rebuke, nudge or retry request in the user's `text` (normalised) itself
    (`mask`: `_candidate_mask(text)`, if known)."""
    if mask is None:
        mask = _candidate_mask(text)
    for lang, pattern in _candidates(_CORRECTIONS_GATED, mask):
        match = pattern.search(text)
        if match and _hedged(text, match):  # said under a condition or quoted: a later one may stand
            match = next((m for m in pattern.finditer(text, match.end()) if not _hedged(text, m)), None)
        if match:
            return f"correction ({lang}: \u201c{match.group(0).strip()}\u201d)"
    for lang, pattern in _candidates(_ESCALATION_GATED, mask):
        match = next((m for m in pattern.finditer(text) if not _hedged(text, m)), None)
        if match:
            return f"complaint (asks for a person, {lang}: \u201c{match.group(0).strip()}\u201d)"
    for lang, pattern in _candidates(_COMPLAINTS_GATED, mask):  # not the words of a button or a reply quoted
        match = next((m for m in pattern.finditer(text) if not _hedged(text, m) and not _in_quotes(text, m)), None)
        if match:
            return f"complaint ({lang}: \u201c{match.group(0).strip()}\u201d)"
    for pattern in _candidates(_NUDGES_GATED, mask):
        if pattern.search(text):
            return "nudge (no answer, or disbelief)"
    sworn = _sworn_demand(text)
    if sworn:
        return f"complaint (swearing: \u201c{sworn}\u201d)"
    for pattern in _candidates(_RETRY_GATED, mask):
        for match in pattern.finditer(text):  # the first one said to the agent: not a condition, not quoted
            if not _CONDITIONAL.search(_sentence_before(text, match.start())) and not _in_quotes(text, match):
                return f"retry request (\u201c{match.group(0).strip()}\u201d)"
    return None


def _weak_signal(text: str, reply: _Reply | None, mask: int | None = None, raw: str | None = None) -> str | None:
    """Signals that depend on what the assistant said just before (`reply`, None when it said
    nothing): the reply is read only when the user's words already point that way (`mask`:
    `_candidate_mask(text)`, if known; `raw`: the message as written, whose opening lines are
    read for a failure report when the message is long)."""
    if reply is not None and mask is None:
        mask = _candidate_mask(text)  # once, for the pushback and the failure report
    if reply is not None and any(p.search(text) for p in _candidates(_PUSHBACK_GATED, mask)) and REFUSAL.search(
            reply.text[-600:]):
        return "pushback on a refusal"
    # even after "let me know if it works": it did not; not a question ("will the same problem …?")
    if reply is not None:
        # a short message's sentences ("It doesn't work. What should I do?": the question after the
        # report does not hide it); a longer one's opening lines and sentences, each on its own
        said = _sentences(text) if len(text) <= TERSE_CHARS else [normalise(line) for line in _opening(raw)] if raw else []
        for line in said:
            if line and not line.endswith(("?", "？")):
                for lang, pattern in _candidates(_FAILED_GATED, mask):
                    match = pattern.search(line)
                    if match and not _CONDITIONAL.search(line):
                        return f"failure report ({lang}: \u201c{match.group(0).strip()}\u201d)"
    if reply is not None and len(text) <= BARE_CHARS:
        bare = _BARE_NOTHING.match(text)
        if bare and (bare.group("lead") or not reply.asked):
            return f"failure report (nothing happened: \u201c{text.strip()}\u201d)"
    if _LEADING_NO.match(text) and not _POLITE_NO.match(text) and not (
            reply is not None and reply.asked and not _UNDERSTANDING_CHECK.search(reply.text[-400:])):
        return "correction (leading no)"  # a "no" to "does this match what you meant?" corrects too
    if reply is not None and _DO_IT_YOURSELF.search(text) and _HANDOVER.search(reply.text) and not _OFFER.search(reply.text):
        return "told to do what it handed back"
    return None


def _read_back(text: str, reply: _Reply, earlier: list[str], raw: str | None = None,
               mask: int | None = None) -> str | None:
    """A read-back corrected in a short message (`text` and `earlier`, the user's earlier
    messages, normalised; `raw`, the message as written; `mask`: `_candidate_mask(text)`, if
    known): "7 AM, not PM" when the agent's last
    words say PM and offered no choice; or an English "no" to a question that read back two or
    more of the user's words and got a detail wrong, the user stating it again, a number or a
    name ("Shall I book the train at 9:15 on Wednesday?" - "No, it should be Tuesday", after "a
    train on Tuesday"). Not a "no" to an offer ("Want me to book it?" - "no, just the address"),
    nor one that thanks ("No, that's all, thanks"), nor what the question never read back
    ("Should I keep the old config?" - "No, it should be removed"). English only for the "no":
    other languages capitalise nouns or open every answer with their "no" ("Nein, habe ich
    nicht.", "Não, muito obrigada pela ajuda")."""
    if mask is None:
        mask = _candidate_mask(text)
    contrast = next(filter(None, (p.match(text) for p in _candidates(_CONTRAST_GATED, mask))), None)
    if contrast:
        tail = reply.text[-READ_BACK_TAIL:]  # the reply is normalised only for a message that may need it
        instead = next(g for g in (contrast.groupdict().get(k) for k in ("b", "b2", "b3")) if g)
        asked_which = reply.asked and _EITHER.search(tail)  # "Python or JavaScript?": an answer, not a correction
        if not asked_which and _words_in(instead.strip(), tail):
            return f"correction (read-back: \u201c{text.strip()}\u201d)"
        return None
    if (not _ENGLISH_NO.match(text) or raw is None or not raw.isascii() or text.endswith("?") or _POLITE_NO.match(text)
            or closings.THANKS.search(text) or not reply.asked):
        return None
    theirs = _significant(reply.text[-READ_BACK_TAIL:])
    before = set().union(*map(_significant, earlier)) if earlier else set()
    if len(before & theirs) >= 2 and (_details(raw) & before) - theirs:  # it read back their words, one wrong
        return f"correction (read-back: \u201c{text.strip()}\u201d)"
    return None


_ENGLISH_NO = re.compile(r"^(?:no+|nope|nah)\b")
_DETAIL = re.compile(r"\d+|(?<=\s)[A-Z][a-z]+")  # a number, or a name (not the first word)


def _details(raw: str) -> set[str]:
    """The details an English message states: its numbers and the capitalised words after its
    first ("No, it should be Tuesday", "No, 4 people at 18:00"), lower case."""
    return {d.lower() for d in _DETAIL.findall(raw)}


def _significant(text: str) -> set[str]:
    """A text's words that can carry a detail: numbers, and words of four letters or more that are
    not `readback_stop` ("want", "that", "booked")."""
    return {t for t in content_tokens(text) if t.isdigit() or (len(t) >= 4 and t not in _READBACK_STOP)}


_READBACK_STOP = frozenset(lexicon.words(LEXICON["words"]["readback_stop"]))


def _words_in(words: str, text: str) -> bool:
    """Whether every word of `words` (characters, in scripts without spaces) is in `text`."""
    if _SPACELESS_CHAR.search(words):
        return words in text
    return all(re.search(rf"(?<![^\W\d_]){re.escape(w)}(?![^\W\d_])", text) for w in words.split())


_LINE_END = re.compile(r"[.!?。！？\n]")  # a question is a sentence of its own: not read as a report


def _sentences(text: str) -> list[str]:
    """A short message's sentences and lines, each with its closing mark (one piece when it has
    no mark inside: nearly every message)."""
    if _LINE_END.search(text, 0, len(text) - 1) is None:
        return [text]
    out, start = [], 0
    for match in _LINE_END.finditer(text, 0, len(text) - 1):
        out.append(text[start:match.end()].strip())
        start = match.end()
    out.append(text[start:].strip())
    return out


def _opening(raw: str) -> list[str]:
    """The opening of a longer message as written, where a user says first how the last step went
    ("funktioniert nicht - siehe oben\n…", "ich probiere es\nfunktioniert nicht.\nes kommt wieder die
    Meldung …"): its lines and sentences that end within its first TERSE_CHARS characters, none when
    the first one runs on past them."""
    raw = raw.lstrip()
    out, start = [], 0
    for match in _LINE_END.finditer(raw, 0, TERSE_CHARS):
        out.append(raw[start:match.end()])
        start = match.end()
    return out


def _polls(text: str, before: Message) -> bool:
    """A status question asked again (`text` normalised; `before`, the message it repeats, may be
    the one spelled right: "how is our progress", then "how is our orogress")."""
    return bool(_STATUS_QUESTION.match(text) or _STATUS_QUESTION.match(normalise(before.text)))


def _hedged(text: str, match: re.Match) -> bool:
    """Whether a phrase found in the user's words is not said to the agent: inside a condition
    ("if it still fails, restart it") or quoted ("the log says 'still failing'")."""
    start = match.start()
    return bool(_IF.match(_sentence_before(text, start))) or _quoted(text, match)


_CLOSING = {"'": "'", '"': '"', "\u2018": "\u2019", "\u201c": "\u201d", "\u00ab": "\u00bb"}


def _quoted(text: str, match: re.Match) -> bool:
    """Whether a phrase is a short quotation inside the user's words ("the log says 'still
    failing'"): a quote mark opens right before it and closes soon after. A user who wraps the
    whole message in quotes, as some clients' users do, is not quoting."""
    start = match.start()
    if start == 0 or text[start - 1] not in _CLOSING:
        return False
    close = text.find(_CLOSING[text[start - 1]], match.end(), match.end() + 40)
    return close >= 0 and (close - start) * 2 < len(text)


def _in_quotes(text: str, match: re.Match) -> bool:
    """Whether a phrase stands between double quotes in the user's words (normalised: straight
    quotes), as in a reply the user quotes back: ai回答我的都是"…这个想法不错,再试试?" (the AI
    answered me with "… nice idea, try again?"). A user who wraps the whole message in quotes, as
    some clients' users do, is not quoting."""
    opened = text.rfind('"', 0, match.start())
    return opened > 0 and text.count('"', 0, match.start()) % 2 == 1 and '"' in text[match.end():]


# a sentence that opens with "if": what follows is a condition ("when I run it, it still fails"
# is a report, so not "when"; "se"/"si" only where they open the sentence, since Spanish and
# Portuguese "se" is also a pronoun)
_IF = re.compile(r"\s*(?:if|unless|in\s+case|falls|si|se|если)\b|\s*(?:如果|もし)")


def _sworn_demand(text: str) -> str | None:
    """The swear word of a short demand to fix or finish the work ("fix the fucking login
    already"), or None: not in a longer message, one that praises, quotes or names the word."""
    if len(text) > DEMAND_CHARS or not _SWEARS.search(text):  # one pass before the pattern
        return None
    match = _PROFANITY.search(text)
    if (match is None or not _DEMAND.search(text) or _PRAISE.search(text) or _hedged(text, match)
            or _NAMED.search(_sentence_before(text, match.start()))):
        return None
    return match.group(0).strip()


def _sentence_before(text: str, end: int) -> str:
    start = max(text.rfind(mark, 0, end) for mark in ".!?;\n。！？")
    return text[start + 1:end]


def _answers(
    text: str, before_tokens: list[str], reply: str | None, before_question: str | None, asked: bool
) -> bool:
    """Whether a repeated message is an answer to the assistant rather than a re-sent request
    (`reply` and `before_question`: normalised assistant texts, or None; `asked`: `_asks(reply)`)."""
    if not asked:
        return False
    if _AFFIRMATION.match(text) or _LEADING_NO.match(text):
        return True
    asked = reply
    if _CONFIRMATION_REQUEST.search(asked[-400:]):
        return True  # the user retyped the request to confirm it
    echoed = set(content_tokens(asked))
    if before_tokens and sum(t in echoed for t in before_tokens) / len(before_tokens) >= 0.8:
        return True  # the assistant quoted the request back and asked about it
    if before_question is not None:
        # both messages answer questions: the same words to different questions are answers
        return SequenceMatcher(None, content_tokens(before_question), content_tokens(asked)).ratio() < 0.8
    return False


@hookimpl
def nomos_forensics_rules():
    return [UserFrustration]
