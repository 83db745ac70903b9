"""Lexicons are data: every file loads, every pattern compiles, every word list is clean."""

from __future__ import annotations

import importlib.resources
import re
import tomllib

import pytest

from nomos_forensics.text import language as langid
from nomos_forensics.text import lexicon
from nomos_forensics.text import profile as langprofile

FILES = [
    (package, entry.name.removesuffix(".toml"))
    for package in ("nomos_forensics.text", "nomos_forensics_rules")
    for entry in importlib.resources.files(package).joinpath("lexicons").iterdir()
    if entry.name.endswith(".toml")
]
PATTERN_TABLES = ("patterns", "corrections", "request_names", "failed", "escalation", "complaints", "topic", "harmful_act", "policy_ground")


def _pattern_entries(data):
    macros = data.get("macros", {})
    for table in PATTERN_TABLES:
        for key in data.get(table, {}):
            for pattern in lexicon.patterns(data[table], key, macros):
                yield f"{table}.{key}", pattern


def test_lexicon_files_are_found():
    assert {name for _, name in FILES} >= {"langid", "closings", "user_frustration"}


@pytest.mark.parametrize("package, name", FILES, ids=[n for _, n in FILES])
def test_every_pattern_compiles(package, name):
    data = lexicon.load(package, name)
    if "cues" in data:  # substring tables, not patterns: test_cue_tables_are_clean
        return
    entries = list(_pattern_entries(data))
    assert entries, f"{name}: no patterns"
    for where, pattern in entries:
        try:
            re.compile(pattern)
        except re.error as error:
            pytest.fail(f"{name}.toml {where}: {error}: {pattern[:80]}")


@pytest.mark.parametrize("package, name", FILES, ids=[n for _, n in FILES])
def test_word_lists_are_lower_case_and_unique(package, name):
    data = lexicon.load(package, name)
    lists = {"neutral": data.get("neutral"), **{f"english.{k}": v for k, v in data.get("english", {}).items()},
             **{f"languages.{k}": v["words"] for k, v in data.get("languages", {}).items()},
             **{f"words.{k}": v for k, v in data.get("words", {}).items()}}
    for where, value in lists.items():
        if value is None:
            continue
        words = lexicon.words(value)
        assert words, where
        assert all(w == w.lower() for w in words), f"{where}: upper-case entries"


def test_every_language_has_a_name_and_its_relatives_are_known():
    data = lexicon.load("nomos_forensics.text", "langid")
    assert set(data["languages"]) <= set(data["names"])
    assert set(data["request_names"]) <= set(data["names"])
    for group in data["close"]:
        assert set(group) <= set(data["names"]), group
    for langs in data["letter_hints"].values():
        assert set(langs) <= set(data["names"])


def test_an_unknown_macro_is_an_error():
    with pytest.raises(KeyError, match="unknown macro"):
        lexicon.expand(r"{nope}\s+x", {})
    assert lexicon.expand(r"a{0,2}{clause}", {"clause": "^"}) == "a{0,2}^"


def test_a_language_added_as_data_is_used(monkeypatch):
    """The loader reads the file: the index is built from the data, not from code."""
    data = tomllib.loads(importlib.resources.files("nomos_forensics.text").joinpath("lexicons", "langid.toml").read_text())
    assert set(langid.LEXICONS) == set(data["languages"])
    assert langprofile._INDEX["gracias"] and any(lang == "es" for lang, _ in langprofile._INDEX["gracias"])


@pytest.mark.parametrize("package, name", [f for f in FILES if "cues" in lexicon.load(*f)], ids=lambda f: str(f))
def test_cue_tables_are_clean(package, name):
    """Cue tables are matched in lower-cased text (the refusal cues in ASCII letters as words):
    every entry is lower case, two characters or more, and listed once in its table."""
    for table, value in lexicon.load(package, name)["cues"].items():
        entries = lexicon.cues(value)
        assert entries, table
        assert all(e == e.lower() for e in entries), f"{table}: upper-case entries"
        assert all(len(e) >= 2 for e in entries), f"{table}: an entry under two characters"
        assert len(entries) == len(set(entries)), f"{table}: {[e for e in entries if entries.count(e) > 1]} listed twice"


def test_every_word_the_profanity_pattern_spells_holds_a_stem_of_its_gate():
    """user-frustration searches its profanity pattern only in a text that holds one of
    `profanity_stems` (a one-pass gate): each word the pattern spells, and that it matches on its
    own, must hold a stem, or the gate would hide a match."""
    from nomos_forensics_rules import user_frustration as uf

    source = lexicon.load("nomos_forensics_rules", "user_frustration")["patterns"]["profanity"]
    words = set(re.findall(r"[^\W\d_]{2,}(?:-[^\W\d_]+)?", source.replace("\\b", " ").replace("\\s", " ")))
    matched = [w for w in words if uf._PROFANITY.search(w.lower())]
    assert len(matched) > 40
    for word in matched:
        assert any(stem in word.lower() for stem in uf.PROFANITY_STEMS), word


@pytest.mark.parametrize("raw, found", [
    # a failure report in the opening lines of a longer message, after the agent's reply
    ("ich habe es probiert\nfunktioniert nicht.\nes kommt wieder die Meldung: Die Adresse ist nicht erreichbar, "
     "bitte geben Sie eine neue ein.", "failure report (de"),
    ("ainda não consigo\nquando chego em Relatórios não aparece o botão de exportar, só o de imprimir e compartilhar",
     "failure report (pt"),
    ("Es kommt immer noch die gleiche Meldung. Ich habe den Job gelöscht und neu angelegt, wie Sie gesagt haben.",
     "failure report (de"),
    # not when the first sentence runs on past the opening, nor in a question of the opening
    ("Thanks, and while testing I noticed that the print preview on the invoices page doesn't work on Safari. "
     "Could you look at that next.", None),
    ("no funciona el botón de exportar?\nlo pregunto porque en la documentación dice que está disponible en todos los "
     "planes", None),
    # a question in the opening is a sentence of its own, not a report
    ("funktioniert nicht? steht so in der Anleitung.\nich wollte nur sichergehen, bevor ich den Router neu starte und "
     "dabei alles verliere", None),
    # "I already told you", not "I already spoke with your colleague"
    ("Já falei com o seu colega e fiz o que ele disse para fazer, e agora queria saber do reembolso do pedido", None),
    # what the agent sent never came; not "I got no error"
    ("não recebi nada", "failure report (pt"),
    ("I didn't get the email with the reset link", "failure report (en"),
    ("sim estou não recebi msg de erro, o formato do arquivo não entra", None),
    ("I didn't get any error this time", None),
    # Korean "must not" (…면 안 됩니다) is an instruction
    ("설정 페이지에 테스트 버튼이 있으면 안됩니다. 테스트 버튼은 관리자 페이지로 옮기고, 설정 페이지에는 저장 버튼만 남겨 주세요. "
     "다른 페이지는 그대로 두세요.", None),
])
def test_a_failure_report_is_read_in_the_opening_lines_of_a_longer_message(raw, found):
    from nomos_forensics_rules import user_frustration as uf

    reason = uf.UserFrustration._correction(uf.normalise(raw), "done, please try it now.", raw=raw)
    assert (reason if found is None else (reason or "")[:len(found)]) == found, reason


@pytest.mark.parametrize("raw, found", [
    # plain complaints about the service or the agent, as support chats write them
    ("I've been waiting for two weeks, this is unacceptable.", "complaint (en"),
    ("This is the worst customer service I've ever had.", "complaint (en"),
    ("I want to file a complaint.", "complaint (en"),
    ("I still haven't received it. Why is it taking so long?", "complaint (en"),
    ("you're wasting my time", "complaint (en"),
    ("That is nothing like Inception.", "complaint (en"),
    ("Why does this keep failing?", "complaint (en"),
    ("esto es inaceptable, llevo tres semanas esperando", "complaint (es"),
    ("pésimo servicio", "complaint (es"),
    ("que absurdo, estou esperando há duas semanas", "complaint (pt"),
    ("péssimo atendimento, vou fazer uma reclamação", "complaint (pt"),
    ("c'est inadmissible, j'attends depuis trois semaines", "complaint (fr"),
    ("Das ist eine Frechheit. Ich warte seit zwei Wochen.", "complaint (de"),
    ("ich möchte mich beschweren", "complaint (de"),
    ("è inaccettabile, sto aspettando da due settimane", "complaint (it"),
    ("это безобразие, жду уже три недели", "complaint (ru"),
    ("bu ne rezalet, günlerdir bekliyorum", "complaint (tr"),
    ("怎么还没发货啊", "complaint (zh"),
    ("都等了一个星期了，到底什么时候发", "complaint (zh"),
    ("你们这客服怎么回事，说了半天也没解决", "complaint (zh"),
    ("刚才不是已经给你了吗", "complaint (zh"),
    ("いつまで待たせるんですか", "complaint (ja"),
    ("さっきも言いましたよね", "complaint (ja"),
    ("언제까지 기다려야 돼요?", "complaint (ko"),
    ("어이가 없네요 진짜", "complaint (ko"),
    # a read-back corrected: the user restates what was said
    ("That's the wrong hotel and the wrong number of nights.", "correction (en"),
    ("I said moderate!", "correction (en"),
    ("I asked for 2 people at 7", "correction (en"),
    # a short report followed by a question: the question does not hide the report
    ("It doesn't work. What should I do?", "failure report (en"),
    # not: a task that names the words, the words quoted, a condition, a plain question, a neutral use
    ('add a button "I want to file a complaint" on the help page', None),
    ("add a complaints form where customers can say the service is terrible", None),
    ("if the customer says this is unacceptable, escalate the ticket", None),
    ("how long do I have to wait for the cache to expire?", None),
    ("I've been waiting for a feature like this, thanks!", None),
    ("I said it was fine before, but now let's add tests.", None),
    ("that's the wrong way to think about it maybe", None),
    ("最悪の場合はどうなる？", None),
    ("최악의 경우에는 어떻게 되나요?", None),
    ("그 말이 돼요, 고마워요", None),
    ("如果不满意可以退款吗", None),
    ("你觉得到底要不要加缓存", None),
    ("das ist unmöglich ohne Root-Rechte, oder?", None),
    ("it's just a joke for my friend's birthday card", None),
    ("Will it work on mobile?", None),
])
def test_a_complaint_about_the_service_is_read_anywhere_after_a_reply(raw, found):
    from nomos_forensics_rules import user_frustration as uf

    reason = uf.UserFrustration._correction(uf.normalise(raw), "your order is on its way.", raw=raw)
    assert (reason if found is None else (reason or "")[:len(found)]) == found, reason


@pytest.mark.parametrize("raw, reply, earlier, found", [
    ("7 AM, not PM.", "Alarm set for 7pm.", ["set an alarm for 7am"], True),
    ("Tuesday not Wednesday", "Booked the Wednesday train.", ["book the tuesday train"], True),
    ("el martes, no el miércoles", "Reservé el tren del miércoles.", ["el tren del martes"], True),
    ("水曜日じゃなくて火曜日", "水曜日の電車を予約しました。", ["火曜日の電車を予約して"], True),
    ("수요일이 아니라 화요일", "수요일 기차를 예약했습니다.", ["화요일 기차 예약해줘"], True),
    ("No, 4 people at 18:00.", "A table for 3 people at 19:00 on Monday. Shall I book it?", ["a table for 4 at 18:00 on monday"],
     True),
    # not: a choice offered, Portuguese "no" (in the), a "no" that thanks, German and Portuguese answers
    ("Python, not JavaScript.", "Should I use Python or JavaScript?", ["write the script"], False),
    ("leio no celular", "O livro está no celular.", ["comprei um ebook"], False),
    ("No, that's all, thanks Monday team", "Your table on Monday is booked. Anything else?", ["table on monday"], False),
    ("Nein, habe ich nicht.", "Haben Sie den Reader mit dem PC synchronisiert?", ["ich habe den reader am pc"], False),
])
def test_a_read_back_corrected(raw, reply, earlier, found):
    from nomos_forensics_rules import user_frustration as uf

    reason = uf._read_back(uf.normalise(raw), uf._Reply(reply), earlier, raw)
    assert (reason is not None) == found, reason


def test_a_lexicon_that_does_not_parse_names_its_file(tmp_path, monkeypatch):
    folder = tmp_path / "broken_lexicon_pkg"
    (folder / "lexicons").mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "lexicons" / "words.toml").write_text("broken = [\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=r"broken_lexicon_pkg:lexicons/words\.toml does not parse"):
        lexicon.load("broken_lexicon_pkg", "words")
