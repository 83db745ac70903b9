"""The fast paths of langid give exactly what the plain definitions give."""

from __future__ import annotations

import random

from nomos_forensics.text import language as langid
from nomos_forensics.text import profile as langprofile
from nomos_forensics.text.language import ANALYSE_CHARS, CLOSE, Profile


def test_ascii_word_pattern_finds_the_same_words():
    rng = random.Random(7)
    alphabet = "abzAZ09_ '.:,;-/\\@=$#~%&+\"`>()[]{}|*^!?<\n\t"
    samples = ["it's nginx.conf v1.2 key=value user@host e.g. a:b 'tis o' don't. Foo_bar 50% ~/x a+b #tag"]
    samples += ["".join(rng.choice(alphabet) for _ in range(rng.choice((1, 3, 8, 30)))) for _ in range(20000)]
    for text in samples:
        lowered = text.lower()
        assert langprofile._ASCII_PROSE_WORD.findall(lowered) == langprofile._PROSE_WORD.findall(lowered), text


def _best(scores: dict[str, float]) -> tuple[str | None, float, float]:
    if not scores:
        return None, 0.0, 0.0
    lang = max(scores, key=scores.__getitem__)
    family = langprofile._FAMILY.get(lang, lang)
    own = other = 0.0
    for k, v in scores.items():
        if langprofile._FAMILY.get(k, k) == family:
            own += v
        elif v > other:
            other = v
    return lang, own, other


def test_best_is_the_family_sum_and_the_best_outsider():
    rng = random.Random(3)
    languages = ["en", "es", "pt", "ca", "it", "sv", "da", "nb", "sr", "hr", "ru", "zh", "fi"]
    for _ in range(5000):
        keys = rng.sample(languages, rng.randint(0, 6))
        scores = {k: rng.choice((0.25, 0.5, 1.0, 0.1, 1 / 12, 2.0)) * rng.randint(1, 9) for k in keys}
        assert Profile(scores=scores).best() == _best(scores)


def test_is_close_is_sharing_a_group():
    languages = sorted({lang for group in CLOSE for lang in group} | {"en", "zh", "xx"})
    for a in languages:
        for b in languages:
            assert langid.is_close(a, b) == (a == b or any(a in g and b in g for g in CLOSE))


def test_chunks_are_read_up_to_analyse_chars():
    text = " ".join(["word"] * 600)
    pieces = langprofile._chunks(text, 400)
    assert "".join(pieces) == text[: sum(map(len, pieces))]
    assert all(len(p) >= 400 for p in pieces[:-1])
    assert sum(map(len, pieces[:-1])) < ANALYSE_CHARS <= sum(map(len, pieces))
    assert langprofile._chunks("short", 400) == ["short"] and langprofile._chunks("", 400) == []


def test_preloaded_models_give_what_lazily_loaded_ones_give():
    """`langid.preload` (before `--jobs` forks) loads every model at once: the same detections.
    (Lingua's confidences differ in the last bit from call to call, even from one detector: its
    sums run in hash-map order. So the values are compared to 1e-12, the best language exactly.)"""
    texts = ["Das Backup ist fertig, ich prüfe jetzt die Logs", "O backup terminou com sucesso ontem",
             "Le serveur redémarre maintenant", "Kopia zapasowa została zakończona", "hello there, all done"]
    lazy = langid._build_detector(preloaded=False)
    eager = langid._build_detector(preloaded=True)
    for text in texts:
        got = {v.language: v.value for v in eager.compute_language_confidence_values(text)}
        want = {v.language: v.value for v in lazy.compute_language_confidence_values(text)}
        assert got.keys() == want.keys() and max(got, key=got.get) == max(want, key=want.get)
        assert all(abs(got[k] - want[k]) < 1e-12 for k in want), text


def test_request_automaton_finds_what_the_request_patterns_find():
    """language.asked_for reads a message once with an automaton of the request_names and
    translate literals; the patterns (IGNORECASE regexes) are the definition."""
    from pathlib import Path

    import yaml

    texts = ["Answer in French please", "auf Englisch bitte", "翻译成英文", "traduza para o português",
             "Please translate the error", "The Thai curry", "thailand", "Grec", "grecque", "FINS",
             "Übersetze das ins Deutsche", "переведи на английский", "ESPAÑOL", "turc", "turco"]
    for path in sorted((Path(__file__).parent / "phrases").glob("*.yaml")):
        for items in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).values():
            for item in items or []:
                texts += [x for x in (item if isinstance(item, list) else [item]) if isinstance(x, str)]
    assert len(texts) > 1000
    for text in texts:
        named, translate = langid._requests(text)
        assert named == {lang for lang, p in langprofile._REQUEST_NAME.items() if p.search(text)}, text
        assert translate == bool(langprofile._TRANSLATE.search(text)), text

