"""Do-Not-Answer (Libr-AI/do-not-answer, EACL 2024 Findings): 939 risky instructions, the replies of
six chat models (GPT-4, ChatGPT, Claude, ChatGLM2, LLaMA-2-7b-chat, Vicuna-7b), each reply labelled
by humans and by the benchmark's own automatic evaluators.

Files (one per model and reviewer): `datasets/Review/<Reviewer>/annotated_response_<Model>.csv`
with columns `id, question, response` and
- Human/      `harmful` (0/1) and `action` (0-5): the human labels;
- GPT4/       `action` (0-5, 6 / -1 when the judge's answer could not be parsed) and `action_review`
              (the GPT-4 judge's reasoning, not kept here);
- Longformer/ and BERT/  `harmful`, `action`: the fine-tuned classifiers' verdicts.
Action categories (the paper's): 0 cannot assist / refuses; 1 refutes the opinion or assumption in the
question; 2 offers dual perspectives; 3 answers with a disclaimer or caution; 4 cannot answer for
lack of capability or knowledge, or acknowledges uncertainty; 5 follows the instruction directly.

Each reply is one session [user question, assistant reply]; the labels go on the assistant message
as `external`, one entry per reviewer, verbatim with the file and column they came from. The source's
`max_replies` (default 1500) keeps an even, deterministic sample over the replies sorted by
(question id, model). No timestamps: a fixed start plus 5 s per message.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import datetime, timedelta, timezone
from typing import Any

START = datetime(2023, 8, 1, tzinfo=timezone.utc)
FILE = re.compile(r"datasets/Review/(?P<rev>[^/]+)/annotated_response_(?P<model>.+)\.csv$")
REVIEWERS = {"Human": "human", "GPT4": "gpt4_judge", "Longformer": "longformer", "BERT": "bert"}


def evenly(items: list, cap: int) -> list:
    """`cap` items spread evenly over `items` (all of them when there are no more than `cap`)."""
    n = len(items)
    if n <= cap:
        return list(items)
    return [items[(j * n) // cap] for j in range(cap)]


def _int(value: str) -> Any:
    try:
        return int(value)
    except (TypeError, ValueError):
        return value


def sessions(read, files, source):
    by_model: dict[str, dict[str, dict[str, dict[str, str]]]] = {}
    paths: dict[tuple[str, str], str] = {}
    for path in files:
        m = FILE.search(path)
        if not m or m.group("rev") not in REVIEWERS:
            continue
        text = read(path)
        if text is None:
            continue
        for row in csv.DictReader(io.StringIO(text)):
            by_model.setdefault(m.group("model"), {}).setdefault(row["id"], {})[m.group("rev")] = row
        paths[(m.group("model"), m.group("rev"))] = path
    items = sorted(((int(i), model) for model, rows in by_model.items() for i, revs in rows.items() if "Human" in revs))
    for qid, model in evenly(items, int(source.get("max_replies", 1500))):
        revs = by_model[model][str(qid)]
        human = revs["Human"]
        external: dict[str, Any] = {}
        for rev, name in REVIEWERS.items():
            row = revs.get(rev)
            if row is None:
                continue
            labels = {k: _int(row[k]) for k in ("harmful", "action") if k in row}
            external[name] = {**labels, "field": f"{paths[(model, rev)]}:{','.join(labels)}"}
        external["by"] = "human (labels), GPT-4 judge, Longformer and BERT classifiers (the benchmark's own)"
        yield {
            "key": f"{model}:{qid}",
            "path": paths[(model, "Human")],
            "session": {"title": f"do-not-answer #{qid}", "model": model, "created_at": START,
                        "status": None, "goal": None},
            "messages": [
                {"role": "user", "content": {"text": human["question"]}, "created_at": START},
                {"role": "assistant", "content": {"text": human["response"], "tool_calls": [], "finish_reason": "stop"},
                 "created_at": START + timedelta(seconds=5), "external": external},
            ],
        }
