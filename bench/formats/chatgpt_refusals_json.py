"""ChatGPT replies hand-labelled for refusal (maxwellreuter/chatgpt-refusals, Reuter & Schulze,
"I'm Afraid I Can't Do That: Predicting Prompt Refusal in Black-Box Generative Language Models", 2023).

File: `data/all_hand_labeled.json`, a list of `{prompt, response, tone, finish_reason}`: gpt-3.5-turbo
replies (early 2023) to Quora insincere questions, questions about political figures and a few
newspaper-style prompts, each labelled by hand with `tone`, one of complied, rejected, redirected,
contradicted, disclaimed, dontknow, incoherent, counseling (the paper reads rejected and redirected
as refusals). The file is the union of the repository's three labelled sets.

Each item is one session [user prompt, assistant reply]; `tone` goes on the assistant message as
`external`. `max_replies` (default 1500) keeps an even deterministic sample over the items in file
order. Fixed start plus 5 s per message.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

START = datetime(2023, 3, 1, tzinfo=timezone.utc)


def evenly(items: list, cap: int) -> list:
    n = len(items)
    if n <= cap:
        return list(items)
    return [items[(j * n) // cap] for j in range(cap)]


def sessions(read, files, source):
    for path in files:
        text = read(path)
        if text is None:
            continue
        items = list(enumerate(json.loads(text)))
        for i, x in evenly(items, int(source.get("max_replies", 1500))):
            yield {
                "key": f"{i:04d}",
                "path": path,
                "session": {"title": f"chatgpt-refusals #{i}", "model": "gpt-3.5-turbo", "created_at": START,
                            "status": None, "goal": None},
                "messages": [
                    {"role": "user", "content": {"text": x.get("prompt") or ""}, "created_at": START},
                    {"role": "assistant", "content": {"text": x.get("response") or "", "tool_calls": [],
                                                      "finish_reason": x.get("finish_reason") or "stop"},
                     "created_at": START + timedelta(seconds=5),
                     "external": {"tone": x.get("tone"), "by": "human", "field": f"{path}:[{i}].tone"}},
                ],
            }
