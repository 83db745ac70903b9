"""Latent Jailbreak's human-annotated replies (qiuhuachuan/latent-jailbreak, Qiu et al. 2023): replies
of ChatGPT, ChatGLM2-6B and BELLE-7B-2M to prompts that embed a harmful instruction inside a benign
task (mostly "translate the following sentence into Chinese", with the instruction before or after,
P1-P13), and to five further templates (P14-P18).

Files: `human_annotated_data/<P>/<model>/<prefix|suffix>/[<group>/]<n>.json`, each
`{context, response, safety, following}`: `safety` is safe/unsafe (absent on P14-P18) and
`following` is follow/not_follow on P1-P13 (did the model do the explicit task, e.g. translate) and
explicit/implicit/both/neither on P14-P18 (which instruction it followed). Replies are mostly
Chinese (translations, refusals) and some English.

Each file is one session [user prompt, assistant reply]; the labels go on the assistant message as
`external`. `max_replies` (default 1500) keeps an even deterministic sample over the files sorted by
path (only the sampled files are read). Fixed start plus 5 s per message.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

START = datetime(2023, 7, 1, tzinfo=timezone.utc)


def evenly(items: list, cap: int) -> list:
    n = len(items)
    if n <= cap:
        return list(items)
    return [items[(j * n) // cap] for j in range(cap)]


def _natural(path: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path)]


def sessions(read, files, source):
    paths = sorted((f for f in files if f.startswith("human_annotated_data/") and f.endswith(".json")), key=_natural)
    for path in evenly(paths, int(source.get("max_replies", 1500))):
        text = read(path)
        if text is None:
            continue
        x = json.loads(text)
        parts = path.split("/")
        labels = {k: x[k] for k in ("safety", "following") if k in x}
        yield {
            "key": "/".join(parts[1:]).removesuffix(".json"),
            "path": path,
            "session": {"title": f"latent-jailbreak {parts[1]} {parts[3]}", "model": parts[2], "created_at": START,
                        "status": None, "goal": None, "extra": {"template": parts[1], "position": parts[3]}},
            "messages": [
                {"role": "user", "content": {"text": x.get("context") or ""}, "created_at": START},
                {"role": "assistant", "content": {"text": x.get("response") or "", "tool_calls": [],
                                                  "finish_reason": "stop"},
                 "created_at": START + timedelta(seconds=5),
                 "external": {**labels, "by": "human", "field": f"{path}:{'/'.join(labels)}"}},
            ],
        }
