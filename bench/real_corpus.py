"""The real-transcript corpus: public agent transcripts mapped into the Nomos schema (issue 12).

    python bench/real_corpus.py extract [--mirror /work/.mirror]    # snapshots -> data/*.jsonl + manifest
    python bench/real_corpus.py build --dsn ADMIN_DSN [--dbname nomos_forensics_real]   # one command
    python bench/real_corpus.py show KEY [--full]                   # a session, for labelling
    python bench/real_corpus.py raw-counts                          # fan-out/oversized from the raw files

Each source of bench/realcorpus/sources.yaml (a repository, a commit, files, a format, a
licence) is read from its git snapshot and mapped the way Nomos stores a chat: one assistant
message per model response (text, tool_calls, reasoning), tool results as `tool` rows, text
the client injects (system prompts, harness observations that are not tool results, the
client's own output, slash commands) as `system` messages, API errors as assistant error
cards (`{"error": ...}`). Every session keeps where it came from (repo, path, commit,
licence) in the manifest. The mapped sessions (`data/<source>.jsonl`) are the only input of
`build`; they are kept out of git (see bench/README.md, "Real transcripts").
"""

from __future__ import annotations

import argparse
import collections
import fnmatch
import functools
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "bench" / "realcorpus"
SOURCES = HERE / "sources.yaml"
MANIFEST = HERE / "manifest.jsonl"
LABELS = HERE / "labels"
DATA_ENV = "NOMOS_REALCORPUS_DATA"
NAMESPACE = uuid.UUID("5b0c8f1e-6a52-4d1e-9a51-7c1f2e0d4a10")  # session ids: uuid5(NAMESPACE, key)
OVERSIZED_BYTES = 50 * 1024  # the runbook's ">50KB", as the rule reads it (max_kb KiB)
FANOUT_CALLS = 30  # the runbook's ">30 tool calls per turn"


def data_dirs() -> list[Path]:
    """Where the mapped sessions may be, first match wins: $NOMOS_REALCORPUS_DATA, the work
    tree's bench/realcorpus/data, the shared/ folder beside the repository (as CI lays it)."""
    dirs = [Path(os.environ[DATA_ENV])] if os.environ.get(DATA_ENV) else []
    return dirs + [HERE / "data", ROOT.parent / "shared" / "realcorpus" / "data"]


def find_data_dir() -> Path | None:
    for d in data_dirs():
        if d.is_dir() and any(d.glob("*.jsonl")):
            return d
    return None


def load_sources() -> list[dict[str, Any]]:
    return yaml.safe_load(SOURCES.read_text(encoding="utf-8"))["sources"]


def session_id(key: str) -> str:
    return str(uuid.uuid5(NAMESPACE, key))


# ----------------------------------------------------------------------------- git snapshots
def _git(repo_dir: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo_dir), *args], check=True, capture_output=True).stdout


def repo_dir(mirror: Path, repo: str) -> Path:
    return mirror / repo.replace("/", "+") / "repo"


def source_files(mirror: Path, source: dict[str, Any]) -> list[str]:
    if source.get("files"):
        return list(source["files"])
    names = _git(repo_dir(mirror, source["repo"]), "ls-tree", "-r", "--name-only", source["commit"]).decode().splitlines()
    return sorted(n for n in names if any(fnmatch.fnmatchcase(n, g) for g in source["globs"]))


def read_file(mirror: Path, source: dict[str, Any], path: str) -> str | None:
    """The file at the source's commit; None when the snapshot lacks its blob (files of 4 MiB and more)."""
    try:
        return _git(repo_dir(mirror, source["repo"]), "show", f"{source['commit']}:{path}").decode("utf-8", "replace")
    except subprocess.CalledProcessError:
        return None


# ----------------------------------------------------------------------------- mini-swe-agent
def _ts(value: Any) -> datetime | None:
    try:
        return datetime.fromtimestamp(float(value), tz=timezone.utc)
    except (TypeError, ValueError):
        return None


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw  # the data model allows a JSON string; keep it as the model sent it
    return raw


def map_traj(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A mini-swe-agent .traj.json -> (session row, message rows)."""
    traj = json.loads(text)
    info = traj.get("info") or {}
    model = ((info.get("config") or {}).get("model") or {}).get("model_name")
    rows: list[dict[str, Any]] = []
    seen_user = False
    names: dict[str, str] = {}
    clock: datetime | None = None
    for m in traj.get("messages") or []:
        role = m.get("role")
        extra = m.get("extra") or {}
        response = extra.get("response") or {}
        stamp = _ts(response.get("created")) or _ts(extra.get("timestamp"))
        clock = stamp if stamp and (clock is None or stamp >= clock) else (clock or stamp)
        if role == "assistant":
            calls = []
            for call in m.get("tool_calls") or []:
                fn = call.get("function") or {}
                names[call.get("id")] = fn.get("name")
                calls.append({"id": call.get("id"), "name": fn.get("name"), "arguments": _arguments(fn.get("arguments"))})
            choice = (response.get("choices") or [{}])[0]
            content: dict[str, Any] = {"text": m.get("content") or "", "tool_calls": calls,
                                       "finish_reason": choice.get("finish_reason") or ("tool_calls" if calls else "stop")}
            reasoning = (choice.get("message") or {}).get("reasoning_content")
            if reasoning:
                content["reasoning"] = reasoning
            rows.append({"role": "assistant", "content": content})
        elif role == "tool":
            rows.append({"role": "tool", "content": {
                "tool_call_id": m.get("tool_call_id"), "name": names.get(m.get("tool_call_id"), "bash"),
                "output": m.get("content") or "", "is_error": bool(extra.get("exception_info"))}})
        elif role == "user" and not seen_user:
            seen_user = True
            rows.append({"role": "user", "content": {"text": m.get("content") or ""}})
        elif role == "exit" and isinstance(m.get("content"), str) and m["content"].startswith("litellm."):
            # the run died on a failed completion: Nomos persists that as the turn's error card
            rows.append({"role": "assistant", "content": {"text": "", "tool_calls": [], "finish_reason": "error",
                                                          "error": m["content"]}})
        else:  # system prompt, harness nudges (format errors, limits), the exit record
            text = m.get("content") if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
            label = "" if role == "system" else f"[{role}] "
            rows.append({"role": "system", "content": {"text": label + (text or "")}})
        rows[-1]["created_at"] = clock
    start = next((r["created_at"] for r in rows if r["created_at"]), datetime(2026, 4, 1, tzinfo=timezone.utc))
    _fill_clock(rows, start)
    exit_status = info.get("exit_status")
    session = {"title": traj.get("instance_id"), "goal": None, "model": model,
               "status": "completed" if exit_status == "Submitted" else "failed",
               "created_at": start, "extra": {"exit_status": exit_status}}
    return session, rows


def _fill_clock(rows: list[dict[str, Any]], start: datetime) -> None:
    """Monotonic created_at: missing or backwards stamps become one second after the previous."""
    previous = start
    for r in rows:
        t = r.get("created_at")
        if t is None or t < previous:
            t = previous + timedelta(seconds=1)
        r["created_at"] = previous = t


# ----------------------------------------------------------------------------- Claude Code
CLAUDE_ENTRY = re.compile(r"^### (User|Assistant)\n> (\d{1,2}/\d{1,2}/\d{4}, \d{1,2}:\d\d:\d\d [AP]M)\n\n", re.M)
CLAUDE_FILE_KEY = re.compile(r"(agent-[0-9a-f]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|.*?(?=\.md$))")
CLAUDE_SESSION_ID = re.compile(r"^- \*\*Session ID\*\*: `([^`]+)`", re.M)
# text Claude Code itself puts in the user's turn: local slash commands and their output, hook
# output, the summary a compacted conversation restarts from, the marker of an interrupted reply,
# a skill's text when the agent invokes it ("Base directory for this skill: …")
CLAUDE_CLIENT_TEXT = ("Caveat: The messages below were generated", "<command-name>", "<command-message>",
                      "<local-command-stdout>", "<local-command-stderr>", "Stop hook feedback:", "<session-start-hook>",
                      "<system-reminder>", "This session is being continued from a previous conversation",
                      "[Request interrupted by user", "Unknown slash command:", "Base directory for this skill:")
CLAUDE_API_ERROR = ("API Error", "Claude AI usage limit reached", "Request timed out", "Invalid API key",
                    "Prompt is too long", "Credit balance is too low")


def _claude_blocks(body: str) -> list[dict[str, Any]] | str:
    """An entry's body: the API content blocks (a JSON array, as the exporter writes them) or plain text."""
    body = body.strip()
    if body.startswith("["):
        try:
            blocks = json.loads(body)
        except ValueError:
            return body
        if isinstance(blocks, list) and all(isinstance(b, dict) for b in blocks):
            return blocks
    return body


def _tool_output(content: Any) -> Any:
    if isinstance(content, list):  # [{"type": "text", "text": ...}, {"type": "image", ...}]
        return "\n".join(b.get("text") or f"[{b.get('type')}]" for b in content if isinstance(b, dict))
    return content if content is not None else ""


def _claude_rows(entries: list[tuple[str, datetime, list[dict[str, Any]] | str, bool]]) -> list[dict[str, Any]]:
    """Nomos rows of Claude Code entries, each (role "User"/"Assistant", stamp, content blocks or
    plain text, whether Claude Code marks the entry as its own): consecutive assistant entries are
    one model response (Claude Code logs each content block of a response as its own entry);
    tool_result blocks become `tool` rows named after their tool_use; text Claude Code injects
    becomes `system` rows."""
    rows: list[dict[str, Any]] = []
    names: dict[str, str] = {}

    def add(role: str, content: dict[str, Any], stamp: datetime) -> None:
        rows.append({"role": role, "content": content, "created_at": stamp})

    for who, stamp, blocks, meta in entries:
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        if who == "Assistant":
            if rows and rows[-1]["role"] == "assistant" and not rows[-1]["content"].get("error"):
                content = rows[-1]["content"]
            else:
                content = {"text": "", "tool_calls": [], "finish_reason": "stop"}
                add("assistant", content, stamp)
            for b in blocks:
                if b.get("type") == "text" and (b.get("text") or "").startswith(CLAUDE_API_ERROR):
                    if content["text"] or content["tool_calls"]:
                        content = {"text": "", "tool_calls": [], "finish_reason": "stop"}
                        add("assistant", content, stamp)
                    content.update(finish_reason="error", error=b["text"])
                elif b.get("type") == "text":
                    content["text"] = "\n\n".join(t for t in (content["text"], b.get("text") or "") if t)
                elif b.get("type") == "thinking":
                    content["reasoning"] = "\n\n".join(t for t in (content.get("reasoning"), b.get("thinking")) if t)
                elif b.get("type") == "tool_use":
                    names[b.get("id")] = b.get("name")
                    content["tool_calls"].append({"id": b.get("id"), "name": b.get("name"),
                                                  "arguments": _arguments(b.get("input"))})
                    content["finish_reason"] = "tool_calls"
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                add("tool", {"tool_call_id": b.get("tool_use_id"), "name": names.get(b.get("tool_use_id")),
                             "output": _tool_output(b.get("content")), "is_error": bool(b.get("is_error"))}, stamp)
            elif b.get("type") == "text":
                said = b.get("text") or ""
                add("system" if meta or said.lstrip().startswith(CLAUDE_CLIENT_TEXT) else "user", {"text": said}, stamp)
            else:  # an image the user pasted
                add("user", {"text": f"[{b.get('type')}]"}, stamp)
    return rows


def map_claude_export(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A Claude Code session exported as markdown ("# Claude Session Export": each JSONL entry
    under `### User` / `### Assistant` with its timestamp, the API content blocks kept as JSON)
    -> (session row, message rows), as `_claude_rows` maps the entries."""
    found_entries = list(CLAUDE_ENTRY.finditer(text))
    entries = []
    for i, match in enumerate(found_entries):
        end = found_entries[i + 1].start() if i + 1 < len(found_entries) else len(text)
        body = re.sub(r"\n---\s*$", "", text[match.end():end].rstrip())
        stamp = datetime.strptime(match.group(2), "%m/%d/%Y, %I:%M:%S %p").replace(tzinfo=timezone.utc)
        entries.append((match.group(1), stamp, _claude_blocks(body), False))
    rows = _claude_rows(entries)
    start = rows[0]["created_at"] if rows else datetime(2026, 4, 1, tzinfo=timezone.utc)
    _fill_clock(rows, start)
    first = next((r["content"]["text"] for r in rows if r["role"] == "user"), "")
    found = CLAUDE_SESSION_ID.search(text)
    session = {"title": first.strip().split("\n")[0][:80] or None, "goal": None, "model": None, "status": None,
               "created_at": start, "extra": {"claude_session": found.group(1) if found else None}}
    return session, rows


# ----------------------------------------------------------------------------- Claude Code (JSONL)
# the session file Claude Code itself writes (~/.claude/projects/<dir>/<session>.jsonl): one JSON
# entry a line; "user" and "assistant" entries carry the API message (content blocks, or a string
# the user typed); the rest (summaries, file-history snapshots, "system" retry records, queue
# operations) is Claude Code's bookkeeping. `isMeta` marks text Claude Code writes in the user's
# turn (the local-command caveat, a skill's text); `!cmd` shell input and its output are the
# client's too, and so is the notice of a background command that ended ("<task-notification>").
CLAUDE_JSONL_CLIENT = ("<local-command-caveat>", "<bash-input>", "<bash-stdout>", "<bash-stderr>", "<task-notification>")


def _claude_jsonl_conversation(text: str) -> Iterator[tuple[dict[str, Any], Any]]:
    """(entry, its message content) of each readable user or assistant line of the main thread
    (sub-agent sidechains and Claude Code's bookkeeping lines left out)."""
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("type") not in ("user", "assistant") or entry.get("isSidechain"):
            continue
        yield entry, (entry.get("message") or {}).get("content")


def _claude_jsonl_entries(text: str) -> list[tuple[str, datetime | None, list[dict[str, Any]] | str, bool]]:
    entries = []
    for entry, content in _claude_jsonl_conversation(text):
        if content is None:
            continue
        if isinstance(content, list):
            content = [b for b in content if isinstance(b, dict)]
        meta = bool(entry.get("isMeta")) or (isinstance(content, str) and content.lstrip().startswith(CLAUDE_JSONL_CLIENT))
        if isinstance(content, list) and any((b.get("text") or "").lstrip().startswith(CLAUDE_JSONL_CLIENT)
                                             for b in content if b.get("type") == "text"):
            meta = True
        try:
            stamp = datetime.fromisoformat(str(entry.get("timestamp")).replace("Z", "+00:00"))
        except ValueError:
            stamp = None
        entries.append(("Assistant" if entry["type"] == "assistant" else "User", stamp, content, meta))
    return entries


def map_claude_jsonl(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A Claude Code session file (JSONL, as Claude Code writes it) -> (session row, message rows),
    the entries mapped as the export's are (`_claude_rows`)."""
    rows = _claude_rows(_claude_jsonl_entries(text))
    start = next((r["created_at"] for r in rows if r["created_at"]), None) or datetime(2026, 4, 1, tzinfo=timezone.utc)
    _fill_clock(rows, start)
    first = next((r["content"]["text"] for r in rows if r["role"] == "user"), "")
    found = re.search(r'"sessionId":\s*"([^"]+)"', text)
    session = {"title": first.strip().split("\n")[0][:80] or None, "goal": None, "model": None, "status": None,
               "created_at": start, "extra": {"claude_session": found.group(1) if found else None}}
    return session, rows


def _claude_jsonl_raw_counts(text: str) -> dict[str, int]:
    """A Claude Code session file counted from its lines: a turn starts at a user entry with text
    the user typed (not a tool result, not text Claude Code writes); a payload is one content block."""
    fanout, big = _Fanout(), 0
    for entry, content in _claude_jsonl_conversation(text):
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else [b for b in content or [] if isinstance(b, dict)]
        for b in blocks:
            payload = b.get("text") if b.get("type") == "text" else b.get("content", b.get("input", b.get("thinking")))
            if len((payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)).encode()) > OVERSIZED_BYTES:
                big += 1
            said = (b.get("text") or "").lstrip()
            if (entry["type"] == "user" and b.get("type") == "text" and not entry.get("isMeta")
                    and not said.startswith(CLAUDE_CLIENT_TEXT) and not said.startswith(CLAUDE_JSONL_CLIENT)):
                fanout.turn()
            if b.get("type") == "tool_use":
                fanout.call(b.get("name"), b.get("input"))
    return {**fanout.result(), "oversized": big}


# ----------------------------------------------------------------------------- Claude Code (extractor)
# claude-conversation-extractor's markdown ("# Claude Conversation Log", `--detailed`): each JSONL
# entry a "## 👤 User" or "## 🤖 Claude" block; a tool use as "🔧 Using tool: NAME" and its input as
# JSON; tool results are not written at all
CLOG_BLOCK = re.compile(r"^---\n\n## (👤 User|🤖 Claude)\n", re.M)
CLOG_TOOL = re.compile(r"^🔧 Using tool: (.+)\nInput: ", re.M)
CLOG_SESSION = re.compile(r"^Session ID: (\S+)", re.M)
CLOG_DATE = re.compile(r"^Date: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", re.M)
CLOG_FILE_KEY = re.compile(r"claude-conversation-\d{4}-\d\d-\d\d-(.+?)\.md$")


def _clog_blocks(text: str) -> list[tuple[str, str]]:
    """(role, body) of each block, in order."""
    parts = CLOG_BLOCK.split(text)[1:]
    return [(role, re.sub(r"\n---\s*$", "", body.rstrip()).strip("\n")) for role, body in zip(parts[0::2], parts[1::2])]


def _clog_claude(body: str) -> tuple[str, list[dict[str, Any]]]:
    """A Claude block's text and tool calls (each "🔧 Using tool" followed by its JSON input)."""
    calls: list[dict[str, Any]] = []
    tools = list(CLOG_TOOL.finditer(body))
    text = body[: tools[0].start()].strip() if tools else body.strip()
    decoder = json.JSONDecoder()
    for n, match in enumerate(tools):
        raw = body[match.end(): tools[n + 1].start() if n + 1 < len(tools) else len(body)].strip()
        try:
            arguments, _ = decoder.raw_decode(raw)
        except ValueError:
            arguments = raw
        calls.append({"id": f"clog_{n}", "name": match.group(1).strip(), "arguments": arguments})
    return text, calls


def map_claude_conversation_log(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A Claude Code session as claude-conversation-extractor writes it -> (session row, message rows).

    A "🤖 Claude" block is one entry of a model response: consecutive blocks are one response
    until a block follows one with a tool call (its result, which the extractor drops, came
    between); text Claude Code puts in the user's turn is `system` (as in the export format)."""
    stamp = CLOG_DATE.search(text)
    start = (datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc) if stamp
             else datetime(2026, 4, 1, tzinfo=timezone.utc))
    rows: list[dict[str, Any]] = []
    calls_seen = 0
    for role, body in _clog_blocks(text):
        if role == "👤 User":
            rows.append({"role": "system" if body.lstrip().startswith(CLAUDE_CLIENT_TEXT) else "user",
                         "content": {"text": body}})
            continue
        said, calls = _clog_claude(body)
        for call in calls:
            call["id"] = f"clog_{calls_seen}"
            calls_seen += 1
        last = rows[-1]["content"] if rows and rows[-1]["role"] == "assistant" else None
        if last is None or last["tool_calls"] or last.get("error"):
            last = {"text": "", "tool_calls": [], "finish_reason": "stop"}
            rows.append({"role": "assistant", "content": last})
        if said.startswith(CLAUDE_API_ERROR) and not calls:
            if last["text"]:
                last = {"text": "", "tool_calls": [], "finish_reason": "stop"}
                rows.append({"role": "assistant", "content": last})
            last.update(finish_reason="error", error=said)
            continue
        last["text"] = "\n\n".join(t for t in (last["text"], said) if t)
        if calls:
            last["tool_calls"].extend(calls)
            last["finish_reason"] = "tool_calls"
    for n, r in enumerate(rows):
        r["created_at"] = start + timedelta(seconds=5 * (n + 1))
    first = next((r["content"]["text"] for r in rows if r["role"] == "user"), "")
    found = CLOG_SESSION.search(text)
    session = {"title": first.strip().split("\n")[0][:80] or None, "goal": None, "model": None, "status": None,
               "created_at": start, "extra": {"claude_session": found.group(1) if found else None}}
    return session, rows


def _clog_raw_counts(text: str) -> dict[str, int]:
    """An extractor log counted from its blocks: a turn starts at a User block with text the user
    typed (not text Claude Code injects); a payload is one block."""
    fanout, big = _Fanout(), 0
    for role, body in _clog_blocks(text):
        big += len(body.encode()) > OVERSIZED_BYTES
        if role == "👤 User" and not body.lstrip().startswith(CLAUDE_CLIENT_TEXT):
            fanout.turn()
        if role == "🤖 Claude":
            tools = list(CLOG_TOOL.finditer(body))
            for n, match in enumerate(tools):  # the input as written, up to the next tool
                fanout.call(match.group(1).strip(), body[match.end(): tools[n + 1].start() if n + 1 < len(tools)
                                                         else len(body)].strip())
    return {**fanout.result(), "oversized": big}


# ----------------------------------------------------------------------------- aider
AIDER_START = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$", re.M)
AIDER_MODEL = re.compile(r"^(?:Main )?[Mm]odel: (\S+)")
# what litellm/aider print when the completion failed (the turn produced no answer)
AIDER_ERROR = re.compile(
    r"litellm\.\w*(?:Error|Exception)|\b(?:RateLimitError|APIConnectionError|APIError|InternalServerError|"
    r"ServiceUnavailableError|AuthenticationError|BadRequestError|Timeout)\b|has hit a token limit|"
    r"exceeds? (?:the )?(?:model's )?context (?:window|length)|context window (?:is )?exceeded|"
    r"The API provider|Retrying in \d|quota|credit balance", re.I)
THINKING = re.compile(r"<(thinking-content-[0-9a-f]+|think|thinking|reasoning)>(.*?)</\1>\s*", re.S)
CLIENT_PROMPT = re.compile(r"\(Y\)es/\(N\)o")  # the user answering one of aider's own questions
CLIENT_REPROMPT = "Please answer with one of: yes, no"  # aider asking its question again
CLIENT_ANSWER = re.compile(r"(?:y|n|yes|no|a|all|s|skip|d)\b", re.I)
UNCLOSED_THINKING = re.compile(r"^<(thinking-content-[0-9a-f]+|think|thinking)>(.*)$", re.S)


PY_TRACEBACK = "Traceback (most recent call last):"
API_STATUS = re.compile(r"\b(?:error|status)(?: code)?:? [45]\d\d\b", re.I)
PY_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b(?::.*)?$")


def _traceback_error(lines: list[str], matched: list[int]) -> list[str]:
    """The error lines of a client block: the lines AIDER_ERROR matched, unless each of them is
    a source line quoted in a Python traceback's frames (`result = future.result(timeout=180)`),
    where the error is the exception line that ends that traceback."""
    regions = []  # (first frame line, exception line) of each traceback
    for n, ln in enumerate(lines):
        if ln.strip() == PY_TRACEBACK:
            end = next((i for i in range(n + 1, len(lines)) if PY_EXCEPTION.match(lines[i].strip())), None)
            if end is not None:
                regions.append((n + 1, end))
    inside = [next((end for first, end in regions if first <= i < end), None) for i in matched]
    if matched and all(end is not None for end in inside):
        return [lines[end].strip() for end in sorted(set(inside))]
    if not matched:  # a crash of the API call itself: its exception names an HTTP error status
        return [lines[end].strip() for _first, end in regions if API_STATUS.search(lines[end])][-1:]
    return [lines[i] for i in matched]


def _aider_blocks(body: str) -> Iterator[tuple[str, list[str]]]:
    """Consecutive lines of one kind: 'user' (#### ), 'client' (> ) or 'assistant' (the rest).

    aider prefixes every line of what the user typed and of its own output, blank ones too,
    so a bare blank line ends such a block."""
    kind, lines = None, []
    for line in body.split("\n"):
        if line.rstrip() == "####" or line.startswith("#### "):
            k, line = "user", line[4:].removeprefix(" ")
        elif line.rstrip() == ">" or line.startswith("> "):  # not ">>>>>>> REPLACE" of an edit block
            k, line = "client", line[1:].removeprefix(" ")
        elif not line.strip() and kind == "assistant":
            k = kind  # a blank line is part of a reply; aider ends a user or client block with one
        else:
            k = "assistant"
        line = line.rstrip()  # aider ends lines with two spaces (markdown line breaks)
        if k != kind and kind is not None:
            yield kind, lines
            lines = []
        kind = k
        lines.append(line)
    if kind is not None:
        yield kind, lines


REFLECTION_START = ("## SearchReplaceNoExactMatch", "# The other ", "Don't re-send them", "Just reply with fixed versions")
REFLECTION_END = re.compile(r"^(The SEARCH section must exactly match.*|# The other \d+ SEARCH/REPLACE blocks? (?:were|was) "
                            r"applied successfully\.|Don't re-send them\..*|Just reply with fixed versions of the blocks? above that failed to match\.?)$", re.M)


def _echoes_previous_reply(rows: list[dict[str, Any]], block: str) -> bool:
    previous = next((r["content"].get("text") or "" for r in reversed(rows) if r["role"] == "assistant"), "")
    head = block[:200].strip()
    return len(head) >= 40 and head in previous


def _split_reflection(block: str) -> tuple[str, str]:
    """(aider's failed-edit reflection, the model's reply after it) of an assistant-looking block."""
    if not block.startswith(REFLECTION_START):
        return "", block
    ends = list(REFLECTION_END.finditer(block))
    if not ends:
        return block, ""
    cut = ends[-1].end()
    return block[:cut].strip(), block[cut:].strip()


MARKDOWN_HEADING = re.compile(r"^#{1,3} \S", re.M)
REPLY_MARKUP = ("```", "**", "- ", "* ", "|", "<", "1.", "2.", "3.", "4.", "5.")


def _reply_heading(rows: list[dict[str, Any]], lines: list[str], following: tuple[str, list[str]] | None) -> bool:
    """A model's `#### heading` inside its reply, which aider's log cannot tell from a user line:
    one line, right after a reply that already uses markdown headings, and followed by more of
    the reply that opens with markup (a fence, bold, a list item), not by a new answer."""
    if len(lines) != 1 or not rows or rows[-1]["role"] != "assistant" or rows[-1]["content"].get("error"):
        return False
    if following is None or following[0] != "assistant":
        return False
    after = "\n".join(following[1]).strip()
    return bool(MARKDOWN_HEADING.search(rows[-1]["content"].get("text") or "")) and after.startswith(REPLY_MARKUP)


def map_aider(text: str) -> Iterator[tuple[datetime, dict[str, Any], list[dict[str, Any]]]]:
    """An .aider.chat.history.md -> one (start, session row, message rows) per `aider chat started`."""
    starts = list(AIDER_START.finditer(text))
    for i, match in enumerate(starts):
        body = text[match.end(): starts[i + 1].start() if i + 1 < len(starts) else len(text)]
        start = datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
        model = None
        rows: list[dict[str, Any]] = []
        after_command = False  # since the last slash command, nothing was sent to the model
        help_prompt = False  # inside the prompt aider writes for "/help X" (its docs, logged as user lines)
        continues_reply = False  # the next assistant block is the rest of the reply before a heading
        blocks = list(_aider_blocks(body))
        for n_block, (kind, lines) in enumerate(blocks):
            block = "\n".join(lines).strip()
            if not block:
                continue
            if kind != "user":
                help_prompt = False
            if kind == "user":
                if block == "<blank>":  # aider's record of an empty prompt: nothing was sent to the model
                    rows.append({"role": "user", "content": {"text": ""}})
                    continue
                following = next(((k, ls) for k, ls in blocks[n_block + 1:] if "\n".join(ls).strip()), None)
                if not help_prompt and _reply_heading(rows, lines, following):
                    rows[-1]["content"]["text"] += "\n\n#### " + block
                    continues_reply = True
                    continue
                if help_prompt:  # the user's question stays theirs; the docs around it are the client's
                    if block.startswith("# Question:"):
                        after_command = False  # what the model answers next is a reply
                        rows.append({"role": "user", "content": {"text": block.removeprefix("# Question:").strip()}})
                    else:
                        rows.append({"role": "system", "content": {"text": block}})
                    continue
                help_prompt = block.startswith("/help ")
                after_command = block.startswith(("/", "!"))
                if block.startswith("!"):  # aider's shell escape: the command runs, the model is not asked
                    rows.append({"role": "system", "content": {"text": block}})
                    continue
                # a slash command is the client's (aider echoes what "/ask X" sends on as a line "X")
                if CLIENT_PROMPT.search(block) or block.startswith("/"):
                    rows.append({"role": "system", "content": {"text": block}})  # a client command
                elif _echoes_previous_reply(rows, block):  # architect mode hands its answer to the editor model
                    rows.append({"role": "system", "content": {"text": block}})
                else:
                    rows.append({"role": "user", "content": {"text": block}})
            elif kind == "client":
                if (rows and rows[-1]["role"] == "user" and CLIENT_ANSWER.match(rows[-1]["content"]["text"])
                        and any(ln.startswith(CLIENT_REPROMPT) for ln in lines)):
                    rows[-1]["role"] = "system"  # a mistyped answer to aider's own yes/no question ("n/add x")
                errors = _traceback_error(lines, [n for n, ln in enumerate(lines) if AIDER_ERROR.search(ln)])
                if model is None:
                    model = next((m.group(1) for ln in lines if (m := AIDER_MODEL.match(ln))), None)
                if errors and any(r["role"] == "user" for r in rows):  # the pending completion failed
                    rows.append({"role": "assistant", "content": {
                        "text": "", "tool_calls": [], "finish_reason": "error", "error": "\n".join(errors).strip()}})
                    rest = "\n".join(ln for ln in lines if ln not in errors).strip()
                    if rest:
                        rows.append({"role": "system", "content": {"text": rest}})
                else:
                    rows.append({"role": "system", "content": {"text": block}})
            else:
                if after_command or not any(r["role"] == "user" for r in rows):
                    # the output of a client command (/map, /help, ...), or the rest of the command
                    # line (aider --message "..."): the model has not been asked anything
                    rows.append({"role": "system", "content": {"text": block}})
                    continue
                if continues_reply:
                    continues_reply = False
                    rows[-1]["content"]["text"] += "\n\n" + block
                    continue
                reflection, block = _split_reflection(block)
                if reflection:  # aider's own message back to the model after a failed edit
                    rows.append({"role": "system", "content": {"text": reflection}})
                if not block:
                    continue
                reasoning = "\n".join(m.group(2).strip() for m in THINKING.finditer(block))
                answer = THINKING.sub("", block).strip()
                if unclosed := UNCLOSED_THINKING.match(answer):  # interrupted while still reasoning
                    reasoning = "\n".join(filter(None, [reasoning, unclosed.group(2).strip()]))
                    answer = ""
                content: dict[str, Any] = {"text": answer, "tool_calls": [], "finish_reason": "stop"}
                if reasoning:
                    content["reasoning"] = reasoning
                rows.append({"role": "assistant", "content": content})
        for n, r in enumerate(rows):
            r["created_at"] = start + timedelta(seconds=5 * (n + 1))
        first_user = next((r["content"]["text"] for r in rows if r["role"] == "user"), "")
        title = next((line.strip() for line in first_user.split("\n") if line.strip()), "")
        session = {"title": title[:80] or None, "goal": None, "model": model,
                   "status": None, "created_at": start, "extra": {}}
        yield start, session, rows


# ----------------------------------------------------------------------------- extract
# formats whose files each hold one session: the mapper of each
ONE_SESSION_FORMATS = {
    "mini-swe-agent-traj": map_traj,
    "claude-code-export": map_claude_export,
    "claude-conversation-log": map_claude_conversation_log,
    "claude-code-jsonl": map_claude_jsonl,
}


def file_key(source: dict[str, Any], path: str) -> str:
    """The manifest key of a one-session file (extract and raw-counts must agree on it)."""
    name, fmt = source["name"], source["format"]
    if fmt == "mini-swe-agent-traj":
        return f"{name}:{path.split('/')[1]}/{Path(path).name.removesuffix('.traj.json')}"
    if fmt == "claude-code-export":
        return f"{name}:{CLAUDE_FILE_KEY.match(Path(path).name).group(1)}"
    if fmt == "claude-conversation-log":
        return f"{name}:{CLOG_FILE_KEY.search(path).group(1)}"
    return f"{name}:{Path(path).name.removesuffix('.jsonl')[:8]}"  # claude-code-jsonl


def format_module(fmt: str):
    """The mapper module of a format kept in bench/formats/ (one module per format), or None.

    Such a module has `sessions(read, files, source)`, yielding dicts with `key` (unique within
    the source), `session` (title, status, goal, model, created_at), `messages` (role, content,
    created_at; a message may carry `external`: labels the source ships for it) and, optionally,
    `external` (the session's labels from outside the text: reward, pass/fail, rating)."""
    import importlib

    name = fmt.replace("-", "_")
    if not (ROOT / "bench" / "formats" / f"{name}.py").is_file():
        return None
    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    return importlib.import_module(f"formats.{name}")


def extract(mirror: Path, out: Path, only: set[str] | None = None) -> int:
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    kept_lines = [m for m in load_manifest() if m["source"] not in only] if only else []
    seen: dict[str, str] = {}
    for source in load_sources():
        if only and source["name"] not in only:
            continue
        sessions = []
        module = format_module(source["format"])
        if module is not None:
            files = source_files(mirror, source)
            for n, item in enumerate(module.sessions(functools.partial(read_file, mirror, source), files, source)):
                rows = item["messages"]
                session = {"title": None, "goal": None, "model": None, "status": None, "extra": {}, **item["session"]}
                if item.get("external"):
                    session["external"] = item["external"]
                sessions.append((f"{source['name']}:{item['key']}", item.get("path", ""), n, session, rows))
        for path in (source_files(mirror, source) if module is None else ()):
            text = read_file(mirror, source, path)
            if text is None:
                print(f"  skipped {path}: not in the snapshot (too large to be copied)")
                continue
            if source["format"] in ONE_SESSION_FORMATS:
                session, rows = ONE_SESSION_FORMATS[source["format"]](text)
                sessions.append((file_key(source, path), path, 0, session, rows))
            elif source["format"] == "aider-history":
                for n, (_start, session, rows) in enumerate(map_aider(text)):
                    if not any(r["role"] in ("user", "assistant") for r in rows):
                        continue  # aider started and exited: nothing was said
                    sessions.append((f"{source['name']}:{n:03d}", path, n, session, rows))
            else:
                raise SystemExit(f"unknown format {source['format']!r} in {SOURCES}")
        kept = []
        for item in sessions:  # the same run committed twice under two names is one session
            said = sum(1 for r in item[4] if r["role"] in ("user", "assistant"))
            if said < source.get("min_said", 0):  # a source may ask for some substance (heldout7: 2)
                print(f"  skipped {item[0]}: {said} user/assistant message(s), under min_said {source['min_said']}")
                continue
            fingerprint = json.dumps(item[4], ensure_ascii=False, default=_iso, sort_keys=True)
            if fingerprint in seen:
                print(f"  skipped {item[0]}: the same messages as {seen[fingerprint]}")
                continue
            seen[fingerprint] = item[0]
            kept.append(item)
        sessions = kept
        with (out / f"{source['name']}.jsonl").open("w", encoding="utf-8") as fh:
            for key, path, index, session, rows in sessions:
                provenance = {"source": source["name"], "repo": source["repo"], "path": path,
                              "commit": source["commit"], "licence": source["licence"], "index": index}
                record = {"key": key, "id": session_id(key), "provenance": provenance,
                          "session": _no_nul(session), "messages": _no_nul(rows)}
                fh.write(json.dumps(record, ensure_ascii=False, default=_iso) + "\n")
                if source.get("family"):  # the real-text corpus: its items files say what is used
                    continue
                entry = {"key": key, "id": session_id(key), **provenance,
                         "language": source.get("language"), "messages": len(rows)}
                if source.get("split", "tuned") != "tuned":  # the tuned set's lines stay as they were
                    entry["split"] = source["split"]
                manifest.append(entry)
        print(f"{source['name']:20} {len(sessions):4} sessions  ({source['repo']} @ {source['commit'][:10]})")
    manifest = kept_lines + manifest if only else manifest
    MANIFEST.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in manifest), encoding="utf-8")
    print(f"{len(manifest)} sessions -> {out}, provenance -> {MANIFEST.relative_to(ROOT)}")
    return 0


SECRET = re.compile(r"\b(?:AIza[0-9A-Za-z_-]{35}|sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{36,}|"
                    r"xox[abp]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})")


def _no_nul(value: Any) -> Any:
    """jsonb cannot hold U+0000 (tool output sometimes has it): store U+FFFD instead. API keys
    that users pasted into public histories are replaced by a placeholder."""
    if isinstance(value, str):
        return SECRET.sub("[REDACTED-KEY]", value.replace("\x00", "\ufffd"))
    if isinstance(value, dict):
        return {k: _no_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_nul(v) for v in value]
    return value


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(type(value))


def iter_records(data: Path) -> Iterator[dict[str, Any]]:
    for path in sorted(data.glob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    yield json.loads(line)


def load_manifest() -> list[dict[str, Any]]:
    return [json.loads(line) for line in MANIFEST.read_text(encoding="utf-8").splitlines() if line.strip()]


# ----------------------------------------------------------------------------- build
def build(admin_dsn: str, dbname: str, data: Path) -> str:
    """(Re)create `dbname` with the Nomos schema and load every mapped session; returns its conninfo."""
    import psycopg
    import psycopg.conninfo
    from psycopg import sql
    from psycopg.types.json import Jsonb

    from nomos_forensics import devdb

    if not re.fullmatch(r"nomos_forensics\w*", dbname):
        raise SystemExit(f"refusing to (re)create {dbname!r}: the name must start with nomos_forensics")
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(dbname)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
    dsn = psycopg.conninfo.make_conninfo(admin_dsn, dbname=dbname)
    devdb.apply_migrations(dsn)
    load_into(dsn, data, Jsonb)
    return dsn


def load_into(dsn: str, data: Path, jsonb=None) -> int:
    """Insert every mapped session into a database that has the Nomos schema; returns the count."""
    import psycopg

    if jsonb is None:
        from psycopg.types.json import Jsonb as jsonb
    n = 0
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        for record in iter_records(data):
            s = record["session"]
            cur.execute("INSERT INTO sessions (id, title, status, goal, model, created_at, updated_at) "
                        "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                        (record["id"], s["title"], s["status"], s["goal"], s["model"], s["created_at"],
                         record["messages"][-1]["created_at"] if record["messages"] else s["created_at"]))
            with cur.copy("COPY messages (session_id, role, content, created_at) FROM STDIN") as copy:
                for m in record["messages"]:
                    copy.write_row((record["id"], m["role"], jsonb(m["content"]), m["created_at"]))
            n += 1
        conn.commit()
    return n


# ----------------------------------------------------------------------------- labelling view
CAPABILITY_WORDS = re.compile(r"[^.!?\n]*\b(?:cannot|can't|can ?not|unable|not able|don't have|do not have|no access|"
                              r"permission|internet|network|offline|manually|not installed|not available|"
                              r"isn't available|sorry|unfortunately|impossible|not possible|I apologi[sz]e)\b[^.!?\n]*[.!?]?", re.I)


def digest(record: dict[str, Any]) -> None:
    """A long agent run in a page, for labellers: every reply without a tool call, every
    sentence with a capability or apology word in it, every harness message, the last four
    messages in full. Replies that only narrate the next tool call are counted, not shown."""
    rows = record["messages"]
    s = record["session"]
    calls = sum(len(m["content"].get("tool_calls") or []) for m in rows if m["role"] == "assistant")
    print(f"{record['key']}  status={s['status']}  model={s['model']}  {s['extra']}  msgs={len(rows)}  calls={calls}")
    for n, m in enumerate(rows[:-4]):
        c = m["content"]
        if m["role"] == "assistant":
            text = (c.get("text") or "").strip()
            mark = "" if c.get("tool_calls") else "  [NO TOOL CALL]"
            if c.get("error"):
                mark += f"  [ERROR CARD {c['error'][:100]}]"
            if not text:
                if mark:  # no text and no tool call: a blank reply (or an error card)
                    print(f"{n:4} assi <no text>{' [reasoning]' if c.get('reasoning') else ''}{mark}")
                continue
            hits = [h.strip() for h in CAPABILITY_WORDS.findall(text)]
            if hits or mark:
                print(f"{n:4} assi {text[:90]!r}{mark}" + "".join(f"\n        ~ {h[:200]}" for h in hits[:4]))
        elif m["role"] in ("system", "user") and n > 1:
            print(f"{n:4} {m['role'][:4]} {(c.get('text') or '')[:150]!r}")
    for n, m in list(enumerate(rows))[-4:]:
        c = m["content"]
        if m["role"] == "assistant":
            text = (c.get("text") or "") + (f" CALLS {[t['arguments'] for t in c['tool_calls']]}" if c.get("tool_calls") else "")
        elif m["role"] == "tool":
            text = str(c.get("output"))
        else:
            text = c.get("text") or ""
        print(f"{n:4} {m['role'][:4]} END {text[:500]!r}")


def show(key: str, full: bool, data: Path, as_digest: bool = False) -> int:
    """Print one mapped session compactly for a labeller (no rule runs here)."""
    for record in iter_records(data):
        if record["key"] != key:
            continue
        if as_digest:
            digest(record)
            return 0
        s = record["session"]
        print(f"{key}  id={record['id'][:8]}  status={s['status']}  model={s['model']}  {s['extra']}")
        print(f"title: {s['title']}")
        width = None if full else int(os.environ.get("SHOW_WIDTH", "300"))
        for n, m in enumerate(record["messages"]):
            c = m["content"]
            if m["role"] == "assistant":
                calls = ", ".join(f"{t['name']}({json.dumps(t['arguments'], ensure_ascii=False)[:80]})" for t in c["tool_calls"])
                bits = [c.get("text") or ""]
                if c.get("error"):
                    bits.append(f"ERROR CARD: {c['error']}")
                if c.get("reasoning"):
                    bits.append(f"[reasoning {len(c['reasoning'])} chars]")
                if calls:
                    bits.append(f"CALLS: {calls}")
                text = " | ".join(b for b in bits if b)
            elif m["role"] == "tool":
                text = f"{c['name']} -> {str(c['output'])}"
            else:
                text = c.get("text") or ""
            text = text.replace("\n", " ⏎ ")
            print(f"{n:4} {m['role'][:4]:4} {text[:width] if width else text}")
        return 0
    print(f"no session {key!r} in {data}", file=sys.stderr)
    return 2


# ----------------------------------------------------------------------------- raw counts
_RAW_MASK = re.compile(r"[0-9a-f]{8,}|[0-9]+|\s+", re.IGNORECASE)


class _Fanout:
    """tool-fanout's expectation counted from the raw calls (the runbook's N+1, issue 33),
    written apart from the rule: a turn fans out when one tool is called over FANOUT_CALLS times
    and half of those calls send arguments of one shape (JSON with sorted keys, hex runs, numbers
    and whitespace masked) over 3 or more different values, or when 10 or more calls in a row of
    one tool have one shape and 3 or more values. Calls whose arguments the source does not keep
    count by number alone."""

    def __init__(self) -> None:
        self.turns = self.most = 0
        self.calls: list[tuple[str, Any]] = []

    def turn(self) -> None:
        self._close()
        self.calls = []

    def call(self, name: Any, arguments: Any = None) -> None:
        self.calls.append((str(name), arguments))

    def result(self) -> dict[str, int]:
        self._close()
        self.calls = []
        return {"fanout_turns": self.turns, "max_calls_in_turn": self.most}

    def _close(self) -> None:
        calls = self.calls
        self.most = max(self.most, len(calls))
        if len(calls) < 10:
            return
        items = [(name, None if args is None else self._text(args)) for name, args in calls]
        shaped = [(name, None if text is None else _RAW_MASK.sub("#", text), text) for name, text in items]
        fans = False
        for name in {n for n, _, _ in shaped}:
            mine = [(s, t) for n, s, t in shaped if n == name]
            if len(mine) > FANOUT_CALLS:
                if any(s is None for s, _ in mine):
                    fans = True
                else:
                    top = collections.Counter(s for s, _ in mine).most_common(1)[0][1]
                    fans |= 2 * top >= len(mine) and len({t for _, t in mine}) >= 3
        run: list[tuple[str, Any, Any]] = []
        for call in shaped + [("", None, None)]:
            if run and call[1] is not None and (call[0], call[1]) == (run[-1][0], run[-1][1]):
                run.append(call)
                continue
            fans |= len(run) >= 10 and len({t for _, _, t in run}) >= 3
            run = [call] if call[1] is not None else []
        self.turns += fans

    @staticmethod
    def _text(arguments: Any) -> str:
        return (arguments if isinstance(arguments, str) else json.dumps(arguments, sort_keys=True, ensure_ascii=False))[:2048]


def _claude_raw_counts(text: str) -> dict[str, int]:
    """A Claude Code export counted from its entries: a turn starts at an entry with text the user
    typed (not a tool result, not text Claude Code injects); a payload is one content block."""
    fanout, big = _Fanout(), 0
    bodies = CLAUDE_ENTRY.split(text)[1:]  # role, stamp, body, role, stamp, body ...
    for role, body in zip(bodies[0::3], bodies[2::3]):
        blocks = _claude_blocks(re.sub(r"\n---\s*$", "", body.rstrip()))
        blocks = [{"type": "text", "text": blocks}] if isinstance(blocks, str) else blocks
        for b in blocks:
            payload = b.get("text") if b.get("type") == "text" else b.get("content", b.get("input", b.get("thinking")))
            if len((payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)).encode()) > OVERSIZED_BYTES:
                big += 1
            if role == "User" and b.get("type") == "text" and not (b.get("text") or "").lstrip().startswith(CLAUDE_CLIENT_TEXT):
                fanout.turn()
            if b.get("type") == "tool_use":
                fanout.call(b.get("name"), b.get("input"))
    return {**fanout.result(), "oversized": big}


def raw_counts(mirror: Path) -> dict[str, dict[str, int]]:
    """tool-fanout and oversized-message expectations straight from the raw source files.

    Independent of the mapping above and of the rules: a trajectory's turns are counted from
    the raw JSON (a turn starts at a message of role "user" whose text is a person's request:
    in mini-swe-agent only the first one is; later "user" rows are harness observations), and
    a message is oversized when the raw payload it becomes (text, tool output, error) is over
    50 KiB of UTF-8. Aider histories have no tool calls; their sizes are per markdown block.
    """
    out: dict[str, dict[str, int]] = {}
    for source in load_sources():
        for path in source_files(mirror, source):
            text = read_file(mirror, source, path)
            if text is None:
                continue
            if source["format"] == "mini-swe-agent-traj":
                traj = json.loads(text)
                key = file_key(source, path)
                fanout = _Fanout()  # one turn: the task (later "user" rows are observations)
                for m in traj["messages"]:
                    for call in (m.get("tool_calls") or []) if m.get("role") == "assistant" else ():
                        function = call.get("function") or {} if isinstance(call, dict) else {}
                        fanout.call(function.get("name") or call.get("name"), function.get("arguments",
                                                                                            call.get("arguments")))
                big = sum(1 for m in traj["messages"]
                          if len(json.dumps(m.get("content"), ensure_ascii=False).encode()) > OVERSIZED_BYTES)
                out[key] = {**fanout.result(), "oversized": big}
            elif source["format"] == "claude-code-export":
                out[file_key(source, path)] = _claude_raw_counts(text)
            elif source["format"] == "claude-conversation-log":
                out[file_key(source, path)] = _clog_raw_counts(text)
            elif source["format"] == "claude-code-jsonl":
                out[file_key(source, path)] = _claude_jsonl_raw_counts(text)
            else:
                starts = list(AIDER_START.finditer(text))
                for n, match in enumerate(starts):
                    body = text[match.end(): starts[n + 1].start() if n + 1 < len(starts) else len(text)]
                    # one block = a run of lines of one kind, as aider writes them
                    sizes, current, kind = [], 0, None
                    for line in body.split("\n"):
                        k = ("u" if line.rstrip() == "####" or line.startswith("#### ") else
                             "c" if line.rstrip() == ">" or line.startswith("> ") else  # not ">>>>>>> REPLACE"
                             "a" if line.strip() else kind)
                        if k != kind:
                            sizes.append(current)
                            current = 0
                        kind = k
                        current += len(line.encode()) + 1
                    sizes.append(current)
                    out[f"{source['name']}:{n:03d}"] = {"fanout_turns": 0, "max_calls_in_turn": 0,
                                                       "oversized": sum(1 for b in sizes if b > OVERSIZED_BYTES)}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("extract", help="map the sources' snapshots into data/*.jsonl and write the manifest")
    p.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    p.add_argument("--out", type=Path, default=HERE / "data")
    p.add_argument("--only", default=None, help="comma list of source names: extract these, keep the others' manifest lines")
    p = sub.add_parser("build", help="(re)create a database and load the corpus into it")
    p.add_argument("--dsn", required=True, help="an admin connection (the database is created on its server)")
    p.add_argument("--dbname", default="nomos_forensics_real")
    p.add_argument("--data", type=Path)
    p = sub.add_parser("show", help="print one session for labelling")
    p.add_argument("key")
    p.add_argument("--full", action="store_true")
    p.add_argument("--digest", action="store_true", help="a long agent run in a page")
    p.add_argument("--data", type=Path)
    p = sub.add_parser("raw-counts", help="write labels/raw_counts.yaml from the raw source files")
    p.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args(argv)
    if args.command == "extract":
        return extract(args.mirror, args.out, set(args.only.split(",")) if args.only else None)
    if args.command == "raw-counts":
        counts = raw_counts(args.mirror)
        keys = {m["key"] for m in load_manifest()}
        kept = {k: v for k, v in sorted(counts.items()) if k in keys}
        header = ("# Expected tool-fanout / oversized-message per session, computed by `real_corpus.py raw-counts`\n"
                  "# from the raw source files (not from the mapped sessions, not by the rules).\n")
        (LABELS / "raw_counts.yaml").write_text(header + yaml.safe_dump(kept, sort_keys=True), encoding="utf-8")
        print(f"{len(kept)} sessions: {sum(v['fanout_turns'] for v in kept.values())} fan-out turns, "
              f"{sum(v['oversized'] for v in kept.values())} oversized messages")
        return 0
    data = args.data or find_data_dir()
    if data is None:
        print(f"no mapped sessions found (looked in {', '.join(map(str, data_dirs()))}); "
              "run `real_corpus.py extract` or set $" + DATA_ENV, file=sys.stderr)
        return 2
    if args.command == "build":
        dsn = build(args.dsn, args.dbname, data)
        print(f"loaded {sum(1 for _ in iter_records(data))} sessions into {args.dbname}")
        print(dsn)
        return 0
    return show(args.key, args.full, data, args.digest)


if __name__ == "__main__":
    sys.exit(main())
