"""Prefilters that make rules fast must never change what they find."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from nomos_forensics_rules import user_frustration as uf

HERE = Path(__file__).parent


def _user_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted((HERE / "cases" / "lifecycle").glob("*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            for message in case.get("messages", []):
                if isinstance(message, dict) and isinstance(message.get("user"), str):
                    texts.append(message["user"])
    for path in sorted((HERE / "phrases").glob("*.yaml")):
        for items in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).values():
            for item in items or []:
                texts += [x for x in (item if isinstance(item, list) else [item]) if isinstance(x, str)]
    return texts


def test_user_frustration_literal_prefilter_is_exact(monkeypatch):
    texts = _user_texts()
    assert len(texts) > 1000
    before = (uf.normalise("Do you want me to restart it?"), uf.normalise("I can't run that."), None)
    gated = [[uf.UserFrustration._correction(uf.normalise(t), a) for a in before] for t in texts]
    monkeypatch.setattr(uf, "_candidate_mask", lambda text: -1)  # every pattern is tried
    plain = [[uf.UserFrustration._correction(uf.normalise(t), a) for a in before] for t in texts]
    assert gated == plain
    assert sum(1 for g in gated if any(g)) > 100  # the corpus exercises the patterns


@pytest.mark.parametrize("pattern,text", [
    (r"\bwhy\s+did\s+you\b(?!\s+(?:think|say))", "why did you stop"),
    (r"(?:^|\bbut\s+)you\s+(?:didn't|never)\b", "you never listen"),
    (r"不是[,，]?\s*我(?:说|要|问)的?是", "不是我说的是这个"),
])
def test_required_words_are_really_required(pattern, text):
    import re

    compiled = re.compile(pattern)
    words = uf._literals(compiled)
    assert compiled.search(text)
    assert words is None or any(w in text for w in words)
