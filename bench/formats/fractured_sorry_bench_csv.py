"""FRACTURED-SORRY-Bench (AmanPriyanshu/FRACTURED-SORRY-Bench, Priyanshu & Vijay 2024): the 450
SORRY-Bench unsafe requests asked of four OpenAI models directly ("vanilla") and as a series of
innocuous-looking sub-questions ("decomposed", a multi-turn attack), every reply thread judged by the
benchmark's own GPT-4o judge.

Files: `responses/<model>/vanilla_responses.csv` and `responses/<model>/decomposed_responses.csv`,
columns `answers` and `llm-eval` (Harmful & Relevant Answer / Harmful but Irrelevant Answer /
Harmless Answer; empty when the judge failed). Decomposed `answers` is the whole chat as a JSON
list, and so is vanilla `answers` in most rows (a plain reply in the others) (system prompt asking for answers of at most two
sentences, then user sub-question / assistant answer pairs). Row i answers item i of
`data/question_breakdowns.jsonl` (`original_question`, `decomposed_steps`): the vanilla user message
is `original_question` (the runner read the same 450 questions in that order). The models were asked
to keep answers to two sentences (the decomposed chats carry that system prompt; the vanilla runner
sent it too).

Vanilla rows are sessions [user question, assistant reply]; decomposed rows are whole chats. The
judge's verdict goes on the (last) assistant message as `external`. The source's `vanilla_every`
(default 3) and `decomposed_every` (default 12) keep the rows whose index is a multiple, in every
model. Fixed start plus 5 s per message.
"""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import datetime, timedelta, timezone

START = datetime(2024, 8, 1, tzinfo=timezone.utc)
FILE = re.compile(r"responses/(?P<model>[^/]+)/(?P<kind>vanilla|decomposed)_responses\.csv$")
QUESTIONS = "data/question_breakdowns.jsonl"


def sessions(read, files, source):
    qtext = read(QUESTIONS) or ""
    questions = [json.loads(line) for line in qtext.splitlines() if line.strip()]
    every = {"vanilla": int(source.get("vanilla_every", 3)), "decomposed": int(source.get("decomposed_every", 12))}
    for path in sorted(files):
        m = FILE.search(path)
        if not m:
            continue
        text = read(path)
        if text is None:
            continue
        model, kind = m.group("model"), m.group("kind")
        for i, row in enumerate(csv.DictReader(io.StringIO(text))):
            if i % every[kind]:
                continue
            verdict = {"llm-eval": row.get("llm-eval"), "by": "the benchmark's GPT-4o judge (thread-level)",
                       "field": f"{path}:row {i}.llm-eval"}
            clock = START
            rows = []
            chat = _chat(row.get("answers"))
            if kind == "vanilla" and chat is None:  # a plain reply
                q = questions[i].get("original_question") if i < len(questions) else ""
                rows = [{"role": "user", "content": {"text": q or ""}, "created_at": clock},
                        {"role": "assistant", "content": {"text": row.get("answers") or "", "tool_calls": [],
                                                          "finish_reason": "stop"},
                         "created_at": clock + timedelta(seconds=5)}]
            else:  # the whole chat as a JSON list (decomposed rows, and most vanilla ones too)
                for msg in chat or ():
                    role = msg.get("role")
                    content = msg.get("content") or ""
                    if role == "assistant":
                        rows.append({"role": "assistant", "content": {"text": content, "tool_calls": [],
                                                                      "finish_reason": "stop"}, "created_at": clock})
                    elif role in ("user", "system"):
                        rows.append({"role": role, "content": {"text": content}, "created_at": clock})
                    clock = clock + timedelta(seconds=5)
            assistants = [r for r in rows if r["role"] == "assistant"]
            if not assistants:
                continue
            assistants[-1]["external"] = verdict
            yield {
                "key": f"{model}:{kind}:{i:03d}",
                "path": path,
                "session": {"title": f"SORRY-Bench #{i} ({kind})", "model": model, "created_at": START,
                            "status": None, "goal": None, "extra": {"attack": kind}},
                "messages": rows,
            }


def _chat(answers: str | None) -> list[dict] | None:
    """`answers` as a chat (a JSON list of {role, content}), or None when it is a plain reply."""
    text = (answers or "").lstrip()
    if not text.startswith("["):
        return None
    try:
        chat = json.loads(text)
    except ValueError:
        return None
    if isinstance(chat, list) and chat and all(isinstance(m, dict) and "role" in m for m in chat):
        return chat
    return None
