"""Human-labelled jailbreak attempts with the verdicts of three published automatic evaluators
(purseclab/jailbreak-evaluation, Cai et al., "Rethinking How to Evaluate Language Model Jailbreak",
AISec 2025).

File: `raw-data/manual_data.json`, 300 records: `intent, prompt, response`, `model_id`
(0 Llama-2-7b-chat-hf, 1 gpt-3.5-turbo), `publication_id`/`dataset_id` (0 GCG / Zou et al.,
1 Catastrophic jailbreak / Huang et al., 2 PAIR / Chao et al.), three human labels
`manual_safeguard_violation_label` (the reply violates the provider's usage policy),
`manual_informativeness_label` (the reply gives information towards the intent rather than a refusal
or a restatement) and `manual_relative_truthfulness_label` (informative and true), and the automatic
evaluators' verdicts `automatic_zou_none_label` (GCG's refusal-prefix string match: true = no refusal
prefix = jailbroken), `automatic_huang_none_label` (Huang et al.'s classifier) and
`automatic_chao_none_label` (PAIR's GPT-4 judge; null where it was not run).

Each record is one session [user prompt, assistant reply]; all labels go on the assistant message as
`external`, verbatim. Fixed start plus 5 s per message.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

START = datetime(2024, 1, 1, tzinfo=timezone.utc)
MODELS = {0: "Llama-2-7b-chat-hf", 1: "gpt-3.5-turbo"}
PUBLICATIONS = {0: "GCG (Zou et al. 2023)", 1: "Catastrophic jailbreak (Huang et al. 2023)", 2: "PAIR (Chao et al. 2023)"}


def sessions(read, files, source):
    for path in files:
        text = read(path)
        if text is None:
            continue
        for i, x in enumerate(json.loads(text)):
            labels = {k: v for k, v in x.items() if k.startswith(("manual_", "automatic_"))}
            yield {
                "key": f"{i:03d}",
                "path": path,
                "session": {"title": f"jailbreak attempt #{i}", "model": MODELS.get(x.get("model_id")),
                            "created_at": START, "status": None, "goal": x.get("intent"),
                            "extra": {"attack": PUBLICATIONS.get(x.get("publication_id")),
                                      "dataset_id": x.get("dataset_id")}},
                "messages": [
                    {"role": "user", "content": {"text": x.get("prompt") or ""}, "created_at": START},
                    {"role": "assistant", "content": {"text": x.get("response") or "", "tool_calls": [],
                                                      "finish_reason": "stop"},
                     "created_at": START + timedelta(seconds=5),
                     "external": {**labels, "by": "human (manual_*) and three published evaluators (automatic_*)",
                                  "field": f"{path}:[{i}]"}},
                ],
            }
