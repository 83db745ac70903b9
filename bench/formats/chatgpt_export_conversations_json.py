"""A ChatGPT data export (`conversations.json`, from Settings > Data controls > Export), committed to
a public repository.

The file is a list of conversations: `title`, `create_time`, `current_node`, `conversation_id` and
`mapping`, a tree of nodes `{id, message, parent, children}`; a message has `author.role` (system,
user, assistant, tool), `author.name` (the tool), `content` (`content_type` text, code,
multimodal_text, execution_output, system_error, thoughts, reasoning_recap, user_editable_context...;
`parts` or `text`), `recipient` (`all`, or the tool an assistant message addresses), `create_time`
and `metadata.model_slug`. Only the branch on screen is kept: the path from `current_node` back to
the root (regenerated or edited-away branches are dropped).

Mapping: user text (images as `[image]`) -> user; assistant text addressed to `all` -> assistant;
assistant messages addressed to a tool -> an assistant row with one tool call (name = the recipient,
arguments = the text); tool messages -> tool rows (`is_error` for system_error); hidden or empty
system messages are dropped, custom instructions (user_editable_context) and other system text ->
system; thoughts / reasoning_recap go to the next assistant row's `reasoning`. Empty assistant
placeholders are dropped. Timestamps are the export's (`create_time`), made monotonic.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone
from typing import Any

START = datetime(2024, 1, 1, tzinfo=timezone.utc)


def _ts(value: Any) -> datetime | None:
    try:
        return datetime.fromtimestamp(float(value), tz=timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def _text(content: dict[str, Any]) -> str:
    if not isinstance(content, dict):
        return ""
    if isinstance(content.get("parts"), list):
        out = []
        for p in content["parts"]:
            if isinstance(p, str):
                out.append(p)
            elif isinstance(p, dict):
                out.append(p.get("text") if isinstance(p.get("text"), str) else "[image]"
                           if "image" in str(p.get("content_type", "")) else f"[{p.get('content_type', 'part')}]")
        return "\n".join(t for t in out if t)
    for key in ("text", "result", "content"):
        if isinstance(content.get(key), str):
            return content[key]
    if content.get("content_type") == "thoughts":
        return "\n\n".join(t.get("content", "") for t in content.get("thoughts") or [] if isinstance(t, dict))
    if content.get("content_type") == "user_editable_context":
        return "\n\n".join(str(content.get(k) or "") for k in ("user_profile", "user_instructions")).strip()
    return ""


def _branch(conv: dict[str, Any]) -> list[dict[str, Any]]:
    mapping = conv.get("mapping") or {}
    node = conv.get("current_node")
    path, seen = [], set()
    while node and node in mapping and node not in seen:
        seen.add(node)
        path.append(mapping[node])
        node = mapping[node].get("parent")
    return [n["message"] for n in reversed(path) if n.get("message")]


def _rows(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Counter]:
    rows: list[dict[str, Any]] = []
    models: Counter = Counter()
    reasoning: list[str] = []
    pending: list[tuple[str, str]] = []
    for m in messages:
        role = (m.get("author") or {}).get("role")
        content = m.get("content") or {}
        ctype = content.get("content_type")
        text = _text(content)
        stamp = _ts(m.get("create_time"))
        meta = m.get("metadata") or {}
        if role == "assistant" and meta.get("model_slug"):
            models[meta["model_slug"]] += 1
        if role == "system":
            if meta.get("is_visually_hidden_from_conversation") and not (ctype == "user_editable_context" and text):
                continue
            if text.strip():
                rows.append({"role": "system", "content": {"text": text}, "created_at": stamp})
        elif role == "user":
            if ctype == "user_editable_context":
                if text.strip():
                    rows.append({"role": "system", "content": {"text": text}, "created_at": stamp})
                continue
            rows.append({"role": "user", "content": {"text": text}, "created_at": stamp})
        elif role == "assistant":
            if ctype in ("thoughts", "reasoning_recap"):
                if text.strip():
                    reasoning.append(text)
                continue
            recipient = m.get("recipient") or "all"
            if recipient != "all":
                cid = m.get("id") or f"call_{len(rows)}"
                pending.append((cid, recipient))
                rows.append({"role": "assistant", "content": {"text": "", "tool_calls": [
                    {"id": cid, "name": recipient, "arguments": text}], "finish_reason": "tool_calls"},
                    "created_at": stamp})
            elif text.strip():
                row = {"role": "assistant", "content": {"text": text, "tool_calls": [], "finish_reason": "stop"},
                       "created_at": stamp}
                if reasoning:
                    row["content"]["reasoning"] = "\n\n".join(reasoning)
                    reasoning = []
                rows.append(row)
        elif role == "tool":
            name = (m.get("author") or {}).get("name")
            match = next((p for p in reversed(pending) if p[1] == name), pending[-1] if pending else (None, name))
            rows.append({"role": "tool", "content": {"tool_call_id": match[0], "name": name, "output": text,
                                                     "is_error": ctype == "system_error"}, "created_at": stamp})
    return rows, models


def _clock(rows: list[dict[str, Any]], start: datetime) -> None:
    previous = start
    for r in rows:
        t = r.get("created_at")
        if t is None or t < previous:
            t = previous + timedelta(seconds=1)
        r["created_at"] = previous = t


def sessions(read, files, source):
    for path in files:
        text = read(path)
        if text is None:
            continue
        for conv in json.loads(text):
            rows, models = _rows(_branch(conv))
            if not any(r["role"] == "assistant" for r in rows):
                continue
            start = _ts(conv.get("create_time")) or START
            _clock(rows, start - timedelta(seconds=1))
            yield {
                "key": conv.get("conversation_id") or conv.get("id"),
                "path": path,
                "session": {"title": conv.get("title"), "model": models.most_common(1)[0][0] if models else None,
                            "created_at": rows[0]["created_at"], "status": None, "goal": None},
                "messages": rows,
            }
