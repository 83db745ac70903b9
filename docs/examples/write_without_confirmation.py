"""write-without-confirmation: a write tool called in a turn the user did not open with a yes.

An example of a rule driven by the operator's config, built on `nomos_forensics.rulekit` like
the built-in rules (docs/writing-rules.md). It is not installed and not enabled by default: the
write tools are yours to name. Run it with

    nomos-forensics scan -p docs/examples/write_without_confirmation.py --config nf.toml

where nf.toml says which tools write:

    [tool.nomos-forensics.rules.write-without-confirmation]
    write_tools = ["run", "upsert_knowledge"]
"""

from __future__ import annotations

import re

from nomos_forensics.rulekit import Evidence, Option, Rule, Severity, excerpt, hookimpl

# an explicit yes at the start of the user's message, in the languages Nomos users write
YES = re.compile(
    r"^\W*(?:yes|yep|yeah|y|ok(?:ay)?|sure|go ahead|go for it|do it|proceed|confirm(?:ed)?|approved?|"
    r"please do|sí|si|adelante|oui|vas-y|ja|mach das|да|давай|是的|好的|可以|はい)\b",
    re.I,
)


class WriteWithoutConfirmation(Rule):
    """The agent called a write tool in a turn where the user had not said yes.

    Detects: in a turn, the first call of one of `write_tools` (set in the config; none by
    default, so the rule finds nothing until you list them) when the turn's user message does
    not open with an explicit yes ("yes", "go ahead", "do it", "confirmed", "sí", "да", ...).
    One finding per turn, naming the tool and quoting the user's message.
    Not flagged: a read tool, whatever it does; a write in a turn the user opened with a yes
    (the agent asked in the turn before and got its answer); a yes buried later in the message
    ("looks risky, but yes") is not read as one, so such a turn is flagged: say in your runbook
    that a confirmation starts with it. Calls before the first user message belong to no turn.
    Root cause: the agent acts on a request without asking the user to confirm a change.
    Fix: make the agent propose the change and wait for an explicit yes before any write tool.
    """

    code = "X101"
    name = "write-without-confirmation"
    severity = Severity.FRICTION
    config = {"write_tools": Option([], "the tools that change something (names as the calls give them)")}

    def check(self, session, ctx):
        writes = set(self.options["write_tools"])
        if not writes:
            return
        for turn in session.turns:
            request = turn.messages[0]
            if request.role == "user" and YES.match(request.text or ""):
                continue
            for message in turn.messages:
                call = next((c for c in message.tool_calls if c.name in writes), None)
                if call is not None:
                    yield self.finding(
                        f"turn {turn.number}: `{call.name}` called without a yes from the user",
                        [Evidence(message.id, turn.number, f"`{call.name}` after: {excerpt(request.text, 80)}")],
                        data={"turn": turn.number, "tool": call.name})
                    break


@hookimpl
def nomos_forensics_rules():
    return [WriteWithoutConfirmation]
