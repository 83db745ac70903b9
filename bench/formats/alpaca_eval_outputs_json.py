"""AlpacaEval model outputs (tatsu-lab/alpaca_eval): chat models' replies to the 805 AlpacaEval
instructions (everyday requests gathered from self-instruct, OASST, Anthropic HH, Vicuna and Koala
evaluation sets), committed per model.

Files: `results/<model>/model_outputs.json`, a list of `{dataset, instruction, output, generator}`
in the same instruction order for every model. No refusal labels; the leaderboard's annotator
preferences (`results/<model>/*/annotations.json`) are not read (absent or not about refusal).
Useful as chat-assistant replies to benign requests: over-refusals of safety-tuned chat models
(e.g. Llama-2-chat, Gemma-it), disclaimers before a full answer, stories and code that mention
refusing.

Each output is one session [user instruction, assistant reply]. `max_replies` (default 1500) keeps an
even deterministic sample over (instruction index, model) for the models listed in `files`. Fixed
start plus 5 s per message.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

START = datetime(2023, 6, 1, tzinfo=timezone.utc)
FILE = re.compile(r"results/(?P<model>[^/]+)/model_outputs\.json$")


def evenly(items: list, cap: int) -> list:
    n = len(items)
    if n <= cap:
        return list(items)
    return [items[(j * n) // cap] for j in range(cap)]


def sessions(read, files, source):
    outputs: dict[str, tuple[str, list]] = {}
    for path in sorted(files):
        m = FILE.search(path)
        if not m:
            continue
        text = read(path)
        if text is None:
            continue
        outputs[m.group("model")] = (path, json.loads(text))
    items = sorted((i, model) for model, (_, rows) in outputs.items() for i in range(len(rows)))
    for i, model in evenly(items, int(source.get("max_replies", 1500))):
        path, rows = outputs[model]
        x = rows[i]
        yield {
            "key": f"{model}:{i:03d}",
            "path": path,
            "session": {"title": f"alpaca_eval #{i} ({x.get('dataset')})", "model": x.get("generator") or model,
                        "created_at": START, "status": None, "goal": None, "extra": {"dataset": x.get("dataset")}},
            "messages": [
                {"role": "user", "content": {"text": x.get("instruction") or ""}, "created_at": START},
                {"role": "assistant", "content": {"text": x.get("output") or "", "tool_calls": [], "finish_reason": "stop"},
                 "created_at": START + timedelta(seconds=5)},
            ],
        }
