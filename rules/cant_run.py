"""cant-run: the agent says it cannot act for lack of a capability, tool, target or access."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from nomos_forensics.rulekit import (
    CLAIMED,
    Finding,
    Refusal,
    Rule,
    Severity,
    acting_claim,
    acts,
    bounded,
    canonical,
    declined,
    excerpt,
    hookimpl,
    lexicon,
    refusals,
)

_LEXICON = lexicon.load("nomos_forensics.text", "capability_claims")  # the claim reading's tables
# what a fix reads in the claim: the action, the target, a host, what is missing
_ACTION_WORDS, _TARGET, _HOST, _MISSING = (
    re.compile(lexicon.pattern(_LEXICON["patterns"], key, _LEXICON.get("macros", {})))
    for key in ("action", "target", "host", "missing"))
def acting_claims(session) -> list[tuple]:
    """(message, statement) for each message that acts (`acts`: calls a tool, or runs a command in
    a text-protocol step) but says, in its text, that it cannot do part of the job because
    something is missing (claims.acting_claim): a tool or package not installed, a library it
    would need, sudo's password prompt, a terminal, tools denied by the client's mode. The agent
    goes on working, so only a named gap counts (a bare "we can't do that" in an agent's thought
    is nearly always about the code or the task's rules)."""
    return [(message, claim) for message in session.messages
            if message.role == "assistant" and message.text and acts(message)
            and (claim := acting_claim(bounded(message.text))) is not None]


def _command_in(text: str) -> str | None:
    """The first inline code span of `text` that reads as a shell command (a program and its
    arguments), not a path or a name."""
    for code in re.findall(r"`([^`\n]{2,120})`", text):
        code = code.strip()
        if " " in code and re.match(r"(?:\./|sudo\s)?[a-z][\w.+-]*\s", code) and "\\" not in code:
            return code
    return None


def session_fix(sentence: str, context: str) -> str | None:
    """The fix naming what this session shows: the action the agent said it could not do, the
    command (inline code in the claim) and target (in the claim or the user's words), as the
    `run` call that does it; None when the claim names no action (the stock fix applies)."""
    plain = " ".join(sentence.split())
    action = _ACTION_WORDS.search(canonical(plain))
    command = _command_in(plain)
    if command is None and action is not None and "command" in action.group(1):
        command = _command_in(context)  # "I can't run that command": the one the user gave
    if re.search(r"\b(?:sudo|root|superuser|elevated)\b", plain.lower()):
        return (f"the agent said it cannot act without sudo ({excerpt(plain, 90)}): grant the `run` user the sudo "
                f"rights those commands need (a sudoers entry), or run them through a privileged target")
    if command is None and action is None:
        return None
    found = _TARGET.search(plain.lower()) or _TARGET.search(context.lower())
    target = f"lxc/{found.group(1)}" if found else None
    if target is None and (host := _HOST.search(plain.lower()) or _HOST.search(context.lower())):
        target = host.group(1).rstrip(".")
    what = f"`{command}`" if command else f'"{excerpt(action.group(1).rstrip(" .,;:!"), 60)}"'
    if _MISSING.search(canonical(plain)):
        return (f"the agent said it cannot {what}: what it needs is missing ({excerpt(plain, 90)}); install it in the "
                f"agent's environment, or let the agent install it with `run`")
    if command:
        call = {"command": command, **({"target": target} if target else {})}
        return (f"the agent said it cannot run {what}: do it with `run {json.dumps(call)}` (there is no fixed action "
                f"enum any more); make that explicit in SOUL.md")
    where = f" on {target}" if target else ""
    return (f"the agent said it cannot {what}{where}: do it with `run` and the shell command for it"
            f"{' (' + json.dumps({'target': target}) + ')' if target else ''} (there is no fixed action enum any more); "
            f"make that explicit in SOUL.md")


class CantRun(Rule):
    """The agent says it cannot act for lack of a capability, tool, target or access.

    Detects: an assistant message (never a user's) that declines, in whole or in part, because
    the agent lacks the means: it cannot run or execute something, reach a host, file, account,
    device or URL, has no tool or permission for it, or its client mode does not let it edit
    ("I can't run commands inside containers", "I don't have access to your server", "As a text
    model I cannot make phone calls", "switch to agent mode and I'll apply it", "no puedo
    ejecutar comandos", "ich habe keinen Zugriff", "我无法执行"), in a dozen languages. The
    decision is the one text.refusal makes for every reply (one kind per message: a model refusal
    on safety, ethics, law or guidelines, or a decline with no reason, is policy-refusal's;
    missing live knowledge is no-web-tool's). Besides, claims precise enough to stand alone
    (Claude Code's "Both Bash and Write permissions are in auto-deny mode", "sudo requires an
    interactive password", "it requires a pseudo-terminal, which isn't available here", "I can't
    programmatically quit myself", "you'll have to run these yourself since they need sudo"); and
    in a message that goes on to call a tool, only a claim that names what is missing ("I can't run
    pylint because it's not installed", "I can't test it without numpy"). A reply that declines
    only part of the request is reported as partial (friction, not a blocker).
    Not: a result the agent reports after trying ("I couldn't find the file", "the build
    failed"); a platform limit it relays (a rate limit, an image quota); text it quotes or reviews
    (a log, docs, code, a story); an agent's thought in a message that calls a tool and names
    nothing missing ("since we can't do that, let me think"), a text-protocol agent's step
    ("THOUGHT: …" and its fenced command block, mini-swe-agent's, even one the harness rejected
    for its format) read the same way; a judgement of effort ("I can't change the signature
    easily", "I cannot simply remove the early return"); statements about third parties
    ("nginx can't start", "the exporter can't restart itself"); the agent waiting on the user's
    files ("add the todo file to the chat", "you haven't shared any files yet"); statements about
    code ("the angle is a float, so we can't use it directly"); the client's edit format ("I can
    only give SEARCH/REPLACE blocks"); the task's scope; the agent citing its own instructions; a
    statement about its state ("I don't have visibility into processes outside of this CLI
    session"); a terminal or prompt it lacks but works around ("apt-get needs a prompt, so I'll
    pass -y"); a verb that is only the topic of information declined ("I cannot provide
    information on where to buy a gun": declining to inform, a model refusal), and an act of
    harm to someone declined ("I can't help you hack into someone's account", "spy on my wife
    without her consent"), whatever words of access it holds (lexicons/declined_topics.toml);
    both are policy-refusal's; a disclaimer before the answer in one sentence ("As an AI, I don't
    have personal experiences, but I can tell you that the best place is …").
    Root cause: missing target or capability: the agent believes there is no way to act.
    Fix: use `run` with a shell command (there is no fixed action enum any more); make that explicit in SOUL.md.
    """

    code = "NF001"
    name = "cant-run"
    severity = Severity.BLOCKER

    def check(self, session, ctx) -> Iterator[Finding]:
        hits = [(message, found) for message, found in refusals(session) if found.kind == "cant-run"]
        hits.extend((message, Refusal("cant-run", False, sentence, CLAIMED, 0.0))
                    for message, sentence in acting_claims(session))
        if not hits:
            return
        position = {id(m): n for n, m in enumerate(session.messages)}  # by identity: list.index compares whole messages
        hits.sort(key=lambda hit: position[id(hit[0])])
        said = declined(hits)
        before = session.messages[:position[id(hits[0][0])]]
        asked = " ".join(m.text for m in before if m.role == "user" and m.text)
        yield self.finding(
            f"agent says it cannot act ({said.count}): \"{excerpt(said.first, 80)}\"",
            said.quoted,
            severity=Severity.FRICTION if said.partial else None,
            blocker=None if said.partial else f"agent says it cannot act: \"{excerpt(said.first, 70)}\"",
            fix=session_fix(said.first.split(". ")[0], hits[0][0].text + " " + asked),
            data={"messages": said.messages},
        )


@hookimpl
def nomos_forensics_rules():
    return [CantRun]
