"""Completions of "Refusal in Language Models Is Mediated by a Single Direction" (andyrdt/refusal_direction,
Arditi et al., NeurIPS 2024), committed with the pipeline's own evaluations.

Files: `pipeline/runs/<model>/completions/<dataset>_<intervention>_evaluations.json`, a dict whose
`completions` list holds `category, prompt, response` and the verdicts of the benchmark's own
classifiers: `is_jailbreak_substring_matching` (0/1, a refusal-phrase list: 1 = no refusal phrase found)
and, on the harmful set (`jailbreakbench`), `is_jailbreak_llamaguard2` (0/1, Llama Guard 2 says the
reply is unsafe). Datasets: `jailbreakbench` (100 harmful behaviours) and `harmless` (100 Alpaca
instructions). Interventions: `baseline` (the model as released), `ablation` (the refusal direction
projected out: induces compliance) and `actadd` (the direction added: induces refusals). Steered
replies are real model text under an intervention; the intervention is kept in the session's `extra`.

Each completion is one session [user prompt, assistant reply]; the verdicts go on the assistant
message as `external`. `max_replies` (default 1500) keeps an even deterministic sample over the
completions sorted by (model, dataset, intervention, index). Fixed start plus 5 s per message.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

START = datetime(2024, 6, 1, tzinfo=timezone.utc)
FILE = re.compile(r"pipeline/runs/(?P<model>[^/]+)/completions/(?P<ds>[a-z]+)_(?P<iv>baseline|ablation|actadd)_evaluations\.json$")
VERDICTS = ("is_jailbreak_substring_matching", "is_jailbreak_llamaguard2")


def evenly(items: list, cap: int) -> list:
    n = len(items)
    if n <= cap:
        return list(items)
    return [items[(j * n) // cap] for j in range(cap)]


def sessions(read, files, source):
    items = []
    for path in sorted(files):
        m = FILE.search(path)
        if not m:
            continue
        text = read(path)
        if text is None:
            continue
        for i, c in enumerate(json.loads(text).get("completions") or []):
            items.append((m.group("model"), m.group("ds"), m.group("iv"), i, path, c))
    for model, ds, iv, i, path, c in evenly(items, int(source.get("max_replies", 1500))):
        verdicts = {k: c[k] for k in VERDICTS if k in c}
        external = {**verdicts, "by": "substring matching (refusal-phrase list) and Llama Guard 2, the pipeline's own",
                    "field": f"{path}:completions[{i}].{'/'.join(verdicts)}"}
        yield {
            "key": f"{model}:{ds}_{iv}:{i:03d}",
            "path": path,
            "session": {"title": f"{ds} #{i} ({iv})", "model": model, "created_at": START, "status": None,
                        "goal": None, "extra": {"dataset": ds, "intervention": iv, "category": c.get("category")}},
            "messages": [
                {"role": "user", "content": {"text": c.get("prompt") or ""}, "created_at": START},
                {"role": "assistant", "content": {"text": c.get("response") or "", "tool_calls": [], "finish_reason": "stop"},
                 "created_at": START + timedelta(seconds=5), "external": external},
            ],
        }
