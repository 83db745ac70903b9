"""How tool rounds read: a finishing call (complete_task or a submit step) or a hand-off to a
person at the end of a conversation, whether a stored result is an error, and whether a tool's
failure is a failed action. Read by nomos_forensics.ending and the record rules (through
rulekit); tool names are data (lexicons/endings.toml)."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .text import lexicon

if TYPE_CHECKING:
    from .model import Message

COMPLETION_TOOLS = ("complete_task",)
_PATTERNS = lexicon.load("nomos_forensics.text", "endings")["patterns"]
HANDOFF_TOOLS = re.compile(f"(?:{lexicon.pattern(_PATTERNS, 'handoff_tools')})", re.IGNORECASE)
SUBMIT_TOOLS = re.compile(f"(?:{lexicon.pattern(_PATTERNS, 'submit_tools')})", re.IGNORECASE)
SHELL_TOOLS = re.compile(lexicon.pattern(_PATTERNS, "shell_tools"), re.IGNORECASE)
ASKING_TOOLS = re.compile(lexicon.pattern(_PATTERNS, "asking_tools"), re.IGNORECASE)
# A tool output that reads as an error when its row carries no error flag ("Error: …", "ValueError:",
# a traceback, "not found", a non-zero exit, an HTTP 4xx/5xx status): read in Message.output, the
# first characters of a tool row's output that the scan ships, lowered (the patterns are written in
# lower case: case-blind matching of a long alternation costs twice as much). Those anchored at the
# start are tried there only (`match`); each of the others starts with a word, which `search` finds
# as fast as str.find (one alternation of them, tried at every character, cost twice as much).
_ERROR_OUTPUT = lexicon.patterns(_PATTERNS, "error_output")
_ERROR_OPENING = re.compile("|".join(f"(?:{p})" for p in _ERROR_OUTPUT if p.startswith("^")))
_ERROR_ANYWHERE = tuple(re.compile(p).search for p in _ERROR_OUTPUT if not p.startswith("^"))
ERROR_READ = 300  # characters of an output's opening read for its error shape


def failed_row(message: "Message") -> bool:
    """A `tool` row's result failed: its error flag, or an output that opens as an error (read
    once per message: several rules ask)."""
    if message.is_error:
        return True
    failed = message.failed_output
    if failed is None:
        head = (message.output or "")[:ERROR_READ].lower()
        failed = message.failed_output = bool(head) and (
            _ERROR_OPENING.match(head) is not None or any(search(head) for search in _ERROR_ANYWHERE))
    return failed


def results_of(message: "Message") -> list[tuple[str, bool]]:
    """(tool name, failed) of each tool result a message holds: a `tool` row's own, or those an
    assistant message carries (legacy `tool_results`); the row's error flag says failed, or for a
    `tool` row an output that opens as an error (`failed_row`)."""
    if message.role == "tool":
        return [(message.tool_name or "tool", failed_row(message))]
    return [(r.name or "tool", r.is_error) for r in message.tool_results]


@functools.lru_cache(maxsize=4096)  # a session calls a handful of tools, each many times
def failed_action(name: str) -> bool:
    """A failure of this tool is a failed action: not a coding client's general shell (a non-zero
    exit is as often a probe or a `grep` that found nothing), nor a tool that asks the user (its
    "error" is the user declining)."""
    return not (SHELL_TOOLS.fullmatch(name) or ASKING_TOOLS.fullmatch(name))


def is_finishing(call) -> bool:
    """A call that ends the task: complete_task or a submit step, by tool name (`submit`,
    `finish`, `attempt_completion`, ...). Arguments are not read: the scan does not load them,
    and an ending must not change with the rules selected; a command-line submit step
    (`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`) is known by the session's status instead."""
    return call.name in COMPLETION_TOOLS or bool(call.name and SUBMIT_TOOLS.fullmatch(call.name))


def ends_after_completion(conversation: "list[Message]") -> bool:
    """The last assistant tool-call round includes complete_task or a submit step, and only tool
    results follow it."""
    for message in reversed(conversation):
        if message.tool_calls:
            return any(is_finishing(call) for call in message.tool_calls)
        if message.role == "assistant" and message.has_text:
            return False
    return False


def ends_after_handoff(conversation: "list[Message]") -> bool:
    """The last tool round hands off to a person (transfer_to_human_agents, escalate, ...) and
    its stored results, none of them an error, are all that follow."""
    results = []
    for message in reversed(conversation):
        if message.tool_calls:
            names = {c.name for c in message.tool_calls if c.name and HANDOFF_TOOLS.fullmatch(c.name)}
            if not names:
                return False
            results += [(r.name, r.is_error) for r in message.tool_results]
            mine = [error for name, error in results if name in names]
            return bool(mine) and not any(mine)
        if message.role == "assistant" and message.has_text:
            return False
        if message.role == "tool":
            results.append((message.tool_name, failed_row(message)))
        results += [(r.name, r.is_error) for r in message.tool_results]
    return False


def last_successful_completion(messages: "Sequence[Message]") -> "Message | None":
    """The last message calling complete_task whose result (if any was stored) is not an error."""
    for index in range(len(messages) - 1, -1, -1):  # the latest call first: usually the only one read
        message = messages[index]
        if message.tool_calls and any(call.name in COMPLETION_TOOLS for call in message.tool_calls) and not (
                _completion_failed(messages[index + 1:])):
            return message
    return None


def _completion_failed(after: "Sequence[Message]") -> bool:
    for message in after:
        if message.role == "tool" and message.tool_name in COMPLETION_TOOLS:
            return failed_row(message)
        results = [r for r in message.tool_results if r.name in COMPLETION_TOOLS]
        if results:
            return any(r.is_error for r in results)
        if message.role == "user" or any(c.name in COMPLETION_TOOLS for c in message.tool_calls):
            return False
    return False
