"""failing-loop: the same tool failing again and again in one turn."""

from __future__ import annotations

from collections.abc import Iterator

from nomos_forensics.rulekit import (
    Evidence,
    Finding,
    Message,
    Option,
    Rule,
    Severity,
    failed_action,
    hookimpl,
    results_of,
)


class FailingLoop(Rule):
    """The agent called the same tool again and again, and it failed every time.

    Detects: in one turn, `min_failures` (default 3) or more failed results of the same tool
    (the row's error flag, or an output that opens as an error, as tool-error-ignored reads
    it) with no successful result of that tool between them; calls of other tools in between
    do not break the run (read, retry, read, retry). Blocker when the turn ends with that
    tool still failing (no success of it after the run), friction when it finally worked.
    One finding per run, naming the tool, how many times it failed and in which turn.
    Not flagged: two failures; failures of different tools; failures spread over turns (the
    user spoke in between); a run that a success of the same tool breaks (fail, fail, ok,
    fail, fail is two runs of two); a coding client's general shell (`bash`, `Bash`,
    `execute_command`, ...), whose non-zero exits are as often a `grep` that found nothing or a
    failed probe as a failed action (three in a row are ordinary in a mini-swe-agent run);
    a tool that asks the user (`AskUserQuestion`), whose "error" is the user declining.
    The calls' arguments are not compared (the scan does not load them): three failures of
    one tool in a row count whatever was asked of it.
    Root cause: the agent retries a failing call without changing what it sends, or without
    reading the error; nothing stops it before the step limit.
    Fix: have the agent read the error and change the call (or stop and tell the user) after
    the second failure of the same tool; cap identical retries in the harness.
    """

    code = "NF011"
    name = "failing-loop"
    severity = Severity.FRICTION
    reads_tool_record = True  # its blockers move the Outcome (docs/outcome.md, step 4)
    config = {"min_failures": Option(3, "failed results of one tool in a row that make a loop", minimum=2)}

    def check(self, session, ctx) -> Iterator[Finding]:
        least = self.options["min_failures"]
        for turn in session.turns:
            holding = [m for m in turn.messages if m.role == "tool" or m.tool_results]
            if sum(len(m.tool_results) or 1 for m in holding) < least:
                continue  # too few results in the turn for a run: their outputs are not read
            runs: dict[str, list[Message]] = {}  # tool -> the failed results of its current run
            done: list[tuple[str, list[Message], bool]] = []
            for message in holding:
                for name, failed in results_of(message):
                    if failed:
                        # a shell's non-zero exit is as often `grep` finding nothing; the user said no
                        if failed_action(name):
                            runs.setdefault(name, []).append(message)
                    elif name in runs:  # (runs hold only failed actions)
                        run = runs.pop(name)
                        if len(run) >= least:
                            done.append((name, run, True))
            done += [(name, run, False) for name, run in runs.items() if len(run) >= least]
            for name, run, recovered in done:
                yield self.finding(
                    f"turn {turn.number}: `{name}` failed {len(run)} times in a row"
                    + (", then worked" if recovered else ", and the turn ends with it failing"),
                    [Evidence(m.id, m.turn, f"`{name}` failed ({n} of {len(run)})") for n, m in
                     _shown(list(enumerate(run, 1)))],
                    severity=None if recovered else Severity.BLOCKER,
                    blocker=None if recovered else f"`{name}` failed {len(run)} times in a row in turn {turn.number}",
                    data={"turn": turn.number, "tool": name, "failures": len(run), "recovered": recovered},
                )


def _shown(items: list) -> list:
    """The first three and the last of a long run."""
    return items[:3] + items[-1:] if len(items) > 4 else items


@hookimpl
def nomos_forensics_rules():
    return [FailingLoop]
