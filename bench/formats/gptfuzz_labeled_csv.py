"""GPTFuzzer's human-labelled replies (sherdencooper/GPTFuzz, Yu et al. 2023): replies of target
models to jailbreak templates filled with harmful questions, labelled by hand to train the
benchmark's RoBERTa judge.

Files: `datasets/responses_labeled/train.csv` and `evaluate.csv` with columns `question` (an index
into `datasets/questions/question_list.csv`, columns `index, text`), `Response` and `label`
(1 = the reply is jailbroken: it complies with the harmful question; 0 = it does not: refusals and
off-task replies). The jailbreak template that wrapped the question is not recorded; the user
message is the bare question.

Each row is one session [user question, assistant reply]; `label` goes on the assistant message as
`external`. `max_replies` (default 1500) keeps an even deterministic sample over the rows sorted by
(file, row). Fixed start plus 5 s per message.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta, timezone

START = datetime(2023, 9, 1, tzinfo=timezone.utc)
QUESTIONS = "datasets/questions/question_list.csv"


def evenly(items: list, cap: int) -> list:
    n = len(items)
    if n <= cap:
        return list(items)
    return [items[(j * n) // cap] for j in range(cap)]


def sessions(read, files, source):
    qtext = read(QUESTIONS) or ""
    questions = {row.get("index"): row.get("text") for row in csv.DictReader(io.StringIO(qtext))}
    items = []
    for path in sorted(f for f in files if f != QUESTIONS):
        text = read(path)
        if text is None:
            continue
        for n, row in enumerate(csv.DictReader(io.StringIO(text))):
            items.append((path, n, row))
    for path, n, row in evenly(items, int(source.get("max_replies", 1500))):
        q = row.get("question")
        name = path.rsplit("/", 1)[-1].removesuffix(".csv")
        yield {
            "key": f"{name}:{n:04d}",
            "path": path,
            "session": {"title": f"GPTFuzz question {q}", "model": None, "created_at": START, "status": None,
                        "goal": None, "extra": {"question_index": q}},
            "messages": [
                {"role": "user", "content": {"text": questions.get(q) or ""}, "created_at": START},
                {"role": "assistant", "content": {"text": row.get("Response") or "", "tool_calls": [], "finish_reason": "stop"},
                 "created_at": START + timedelta(seconds=5),
                 "external": {"label": int(row["label"]), "by": "human", "field": f"{path}:row {n}.label"}},
            ],
        }
