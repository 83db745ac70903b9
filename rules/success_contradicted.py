"""success-contradicted: the agent says it did something no tool call of the session did."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from nomos_forensics.rulekit import (
    SHELL_TOOLS,
    AnySubstring,
    Evidence,
    Finding,
    Message,
    Option,
    Rule,
    Severity,
    canonical,
    hookimpl,
    lexicon,
    normalise,
    prose,
    quote_from,
    sentences,
)

_LEXICON = lexicon.load("nomos_forensics_rules", "success_contradicted")
VERBS: dict[str, re.Pattern[str]] = {verb: re.compile(pattern) for verb, pattern in _LEXICON["patterns"].items()}
# verbs that claim an outside action only with where it went: what must follow the claim
QUALIFIED: dict[str, re.Pattern[str]] = {verb: re.compile(entry["to"]) for verb, entry in _LEXICON["qualified"].items()}
VERBS.update({verb: re.compile(entry["stems"]) for verb, entry in _LEXICON["qualified"].items()})
_READING = re.compile(_LEXICON["reading"]["tools"])  # a tool name that says it only reads
# a claim about a point before it ("once I've booked it", "if it has been cancelled") claims nothing yet
_PENDING = re.compile(r"\b(?:once|when|after|if|until|before|unless|whether)\b(?:\W+\w+){0,4}\W*$")
HEAD = 4000  # characters of a long reply read


class SuccessContradicted(Rule):
    """The agent says it did something (booked, cancelled, sent, paid, deleted, restarted, ...)
    that no tool call of the session did.

    Detects: an assistant reply in text that calls no tool, in a session where the agent does
    call tools, with a first-person or passive claim of a done action ("I've booked your
    flight", "I have sent the email", "your order has been cancelled", "I restarted nginx"),
    when no tool call of the session up to that reply has a name that fits the verb (the
    data-file map rules/lexicons/success_contradicted.toml: "booked" needs a call whose name
    holds `book` or `reserv`, "sent" one with `send`, `email`, `message`, ...). Blocker: the
    user is told something happened that the record shows did not. One finding per session,
    quoting each claim.
    "Added" claims an outside action only with where it went ("I've added an event to your
    calendar", "Alice has been added to the channel") or with an object that lives outside the
    conversation ("I've added a calendar event for you on January 2nd", "a reminder", "an
    appointment"; not "a reminder comment"): a call with `add`, `create`, `calendar`, `event`,
    `invite`, ... backs it. A tool whose name says it only reads (`get_…`, `read_…`,
    `search_…`, `list_…`, after any MCP prefix) backs no claim, whatever else its name holds
    (`read_channel_messages` does not back "I have sent the message").
    Not flagged: a claim backed by any earlier call of a fitting tool, in this turn or an
    earlier one (a failed one is tool-error-ignored's); a question, a negation ("I haven't
    sent it yet"), a claim about a point before it ("once I've booked it"); any claim once the
    agent has called a coding client's general shell (`bash`: it could have done it); a claim
    after the platform spoke in that turn (an approval denied, a plan cancelled: the platform
    acts without the agent's calls, "I've cancelled the plan"); verbs that also
    describe text the reply itself writes ("I've created a summary", "I've updated the plan
    below", "I've added comments below": add them with the `claims` option if your agent's tools
    do those); sessions where the agent calls no tool at all (aider and chat clients apply edits themselves); code and
    quoted text.
    Root cause: the model reports an action it only planned or imagined, or a tool it believes
    it called.
    Fix: make the agent confirm each action from its tool result before reporting it (SOUL.md:
    "report only what a tool result shows"); add the exchange to the agent's evaluation set.
    """

    code = "NF013"
    name = "success-contradicted"
    severity = Severity.BLOCKER
    reads_tool_record = True  # its blockers move the Outcome (docs/outcome.md, step 4)
    config = {
        "claims": Option([], "more claimed verbs and the tool-name stems that back them, as 'verb=stem|stem' "
                             "(e.g. 'refunded=refund|credit')", kind=list),
    }

    def _claims(self) -> tuple[dict[str, re.Pattern[str]], AnySubstring, re.Pattern[str], dict[str, re.Pattern[str]]]:
        """The claimed verbs with the name patterns that back them (the data file's and the
        `claims` option's), a gate every claim passes (a verb as written, lower case: one pass
        rules most replies out), the claim pattern, and what must follow the verbs that claim
        only with where it went (QUALIFIED; a verb the option names claims bare): built once
        per rule, not per session."""
        table = self.__dict__.get("_claims_table")
        if table is None:
            verbs, qualified = dict(VERBS), dict(QUALIFIED)
            for entry in self.options["claims"]:
                verb, _, stems = str(entry).partition("=")
                if verb.strip() and stems.strip():
                    verbs[verb.strip().lower()] = re.compile(re.escape(stems.strip().lower()).replace("\\|", "|"))
                    qualified.pop(verb.strip().lower(), None)
            names = tuple(sorted(verbs))
            table = self.__dict__["_claims_table"] = (verbs, AnySubstring(names), _claim_pattern(names), qualified)
        return table

    def check(self, session, ctx) -> Iterator[Finding]:
        messages = session.messages
        if not any(m.tool_calls for m in messages):
            return
        verbs, gate, claim, qualified = self._claims()
        called: list[str] = []
        hits: list[tuple[Message, str, str]] = []
        platform = False  # the platform (a system message) spoke since the user's last message
        shell = SHELL_TOOLS.fullmatch
        for message in messages:
            role = message.role
            if role == "user":
                platform = False
            elif role == "system":
                platform = True
            if message.tool_calls:
                names = [c.name or "" for c in message.tool_calls]
                if any(map(shell, names)):
                    break  # a general shell was called: it could have done any of these, from here on
                called += filter(None, map(_acting, names))
                continue
            if role != "assistant":
                continue
            if platform or not message.has_text:
                continue
            if not gate.search(message.text[:HEAD].lower()):
                continue  # no claimed verb anywhere: most replies
            text = prose(message.text[:HEAD])
            plain = canonical(normalise(text))
            if not claim.search(plain):
                continue
            for sentence in sentences(text):
                if sentence.rstrip().endswith(("?", "\uff1f")):
                    continue
                said = canonical(normalise(sentence))
                for found in claim.finditer(said):
                    verb = found.group("verb")
                    if _PENDING.search(said[:found.start()]):
                        continue
                    if verb in qualified and not qualified[verb].match(said, found.end()):
                        continue  # "I've added comments below": no outside action named
                    if not any(map(verbs[verb].search, called)):
                        hits.append((message, verb, sentence))
                        break
                else:
                    continue
                break
        if not hits:
            return
        turns = ", ".join(str(t) for t in sorted({m.turn for m, _, _ in hits})[:6])
        first = hits[0]
        yield self.finding(
            f"the agent says it {first[1]} something no tool call did ({len(hits)} repl"
            f"{'ies' if len(hits) != 1 else 'y'}, turn {turns})",
            [Evidence(m.id, m.turn, f"claims '{verb}', no fitting call: {quote_from(m.text, sentence)}")
             for m, verb, sentence in hits],
            blocker=f"claims it {first[1]} something no tool call did",
            data={"messages": [{"message_id": m.id, "verb": verb} for m, verb, _ in hits]},
        )


@functools.lru_cache(maxsize=4096)  # a session calls a handful of tools, each many times
def _acting(name: str) -> str:
    """A called tool's name, lower case, as claims are backed by it: "" for one whose name says
    it only reads (after any MCP server prefix)."""
    lowered = name.lower()
    return "" if _READING.match(lowered.rpartition("__")[2]) else lowered


def _claim_pattern(verbs: tuple[str, ...]) -> re.Pattern[str]:
    """First-person ("I've booked", "I have just sent", "I restarted", "we've cancelled") and
    passive ("has been booked", "have been sent", "is now booked") claims of the `verbs`."""
    verb = "(?P<verb>" + "|".join(map(re.escape, verbs)) + ")"
    return re.compile(
        r"\b(?:(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|now\s+|successfully\s+|also\s+|already\s+)*"
        r"|(?:has|have)\s+(?:now\s+|just\s+|already\s+)?been\s+(?:successfully\s+)?"
        rf"|(?:is|are)\s+now\s+){verb}\b")


@hookimpl
def nomos_forensics_rules():
    return [SuccessContradicted]
