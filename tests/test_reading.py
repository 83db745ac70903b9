"""What the operator reads: cards that fit an 80-100 column terminal with every count labelled
and one turn count in every format, tables wrapped to the width (`--wide` to turn that off),
fix texts that say when they are written for Nomos (and the operator's own in their place), and
empty or thin selections that say so, in every output format, with exit 4 behind a gate."""

from __future__ import annotations

import json
import re

import pytest

from nomos_forensics.render import display_width
from nomos_forensics.rulekit import quote_from

from .helpers import invoke, shard_files

DEMO = "c0a1e5a1"
RECOVERED = "a1b6686d"  # "Check ZFS pool health": an empty reply in turn 1, then answered: achieved
SAMPLE_SPAN = "the database holds 36 sessions, created 2026-11-01 – 2026-11-29"


@pytest.fixture(autouse=True)
def _no_terminal_width(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("NOMOS_FORENSICS_WIDE", raising=False)


@pytest.fixture(scope="module")
def sample_ids(sample_dsn) -> list[str]:
    import contextlib
    import io

    from nomos_forensics.cli import run

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert run(["sessions", "--dsn", sample_dsn, "--limit", "1000", "--format", "json"]) == 0
    return [s["id"] for s in json.loads(out.getvalue())["sessions"]]


def _widest(text: str) -> int:
    return max(display_width(line) for line in text.splitlines())


# ------------------------------------------------------------------ cards
def test_every_sample_card_fits_100_columns_and_labels_its_counts(capsys, sample_dsn, sample_ids):
    assert len(sample_ids) == 36
    for sid in sample_ids:
        r = invoke(capsys, "review", sid, "--dsn", sample_dsn)
        assert r.code == 0, r.err
        assert _widest(r.out) <= 100, (sid, [line for line in r.out.splitlines() if display_width(line) > 100])
        assert re.search(r"^Messages: \d+ \(\d+ user, \d+ assistant, \d+ tool(, \d+ other)?\) in \d+ turns?$", r.out, re.M)
        assert not re.search(r"\(\d+/\d+\)", r.out), "a fraction without its labels"


def test_a_card_wraps_to_a_narrow_terminal_and_wide_turns_that_off(capsys, sample_dsn, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    narrow = invoke(capsys, "review", DEMO, "--dsn", sample_dsn).out
    assert _widest(narrow) <= 80
    fixes = narrow[narrow.index("Fixes needed:\n"):narrow.index("Severity:")].splitlines()[1:]
    assert [line[:4] for line in fixes if line.startswith("  - ")] == ["  - "] * 4, "one bullet per fix"
    assert all(line.startswith(("  - ", "    ", "  (", "   [")) for line in fixes), fixes
    wide = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "--wide").out
    assert _widest(wide) > 150
    assert "`systemctl restart nginx`" in narrow, "inline code kept"


def test_one_turn_count_in_every_format(capsys, sample_dsn, sample_ids):
    """A turn is a user message and what follows it up to the next: text, markdown, JSON and
    the HTML page of every sample session say the same number."""
    for sid in sample_ids:
        card = json.loads(invoke(capsys, "review", sid, "--dsn", sample_dsn, "--format", "json").out)
        turns = card["stats"]["turns"]
        assert turns == sum(1 for _ in range(card["stats"]["user_messages"]))
        said = rf"in {turns} turns?\b"
        text = invoke(capsys, "review", sid, "--dsn", sample_dsn).out
        markdown = invoke(capsys, "review", sid, "--dsn", sample_dsn, "--format", "markdown").out
        html = invoke(capsys, "review", sid, "--dsn", sample_dsn, "--format", "html").out
        messages = re.search(r'<dd class="field-messages"><bdi>([^<]*)</bdi>', html).group(1)
        for fmt, shown in (("text", text), ("markdown", markdown), ("html", messages)):
            found = re.findall(r"in (\d+) turns?\b", shown.split("Tool calls")[0])
            assert found and {int(n) for n in found} == {turns}, (sid, fmt, found, turns)
            assert re.search(said, shown), (sid, fmt)


def test_outcome_and_severity_that_seem_to_disagree_say_why(capsys, sample_dsn):
    card = json.loads(invoke(capsys, "review", RECOVERED, "--dsn", sample_dsn, "--format", "json").out)
    assert (card["outcome"], card["severity"]) == ("achieved", "blocker")
    assert card["outcome_note"].startswith("achieved, after a blocker in turn 1 (empty-response)")
    text = invoke(capsys, "review", RECOVERED, "--dsn", sample_dsn).out
    assert "Severity: blocker — achieved, after a blocker in turn 1 (empty-response)" in text
    html = invoke(capsys, "review", RECOVERED, "--dsn", sample_dsn, "--format", "html").out
    assert "achieved, after a blocker in turn 1" in html
    demo = json.loads(invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "--format", "json").out)
    assert demo["outcome_note"] is None  # failed with a blocker: nothing to reconcile


def test_nomos_fixes_say_so_and_an_operator_sets_their_own(capsys, sample_dsn, tmp_path):
    card = json.loads(invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "--format", "json").out)
    by_rule = {f["rule"]: f for f in card["findings"]}
    assert by_rule["cant-run"]["fix_nomos"] == ["SOUL.md", "run tool"]
    assert by_rule["empty-response"]["fix_nomos"] == [] and by_rule["empty-response"]["fix_source"] == "rule"
    text = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "--wide").out
    assert "  - cant-run [Nomos: SOUL.md, run tool]: the agent said it cannot run" in text
    assert "  - empty-response: retry the completion" in text
    config = tmp_path / "fixes.toml"
    config.write_text('[fixes]\ncant-run = "Ask the platform team to give the agent a shell tool."\n'
                      'NF107 = "Resume the run from the harness."\n')
    own = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "--config", str(config), "--format", "json")
    fixes = {f["rule"]: (f["fix"], f["fix_source"], f["fix_nomos"]) for f in json.loads(own.out)["findings"]}
    assert fixes["cant-run"] == ("Ask the platform team to give the agent a shell tool.", "config", [])
    assert fixes["unfinished-session"][1] == "config" and fixes["empty-response"][1] == "rule"
    text = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "--config", str(config)).out
    assert "  - cant-run: Ask the platform team to give the agent a shell tool" in text
    config.write_text('[fixes]\nno-such-rule = "x"\n')
    assert "a fix for unknown rule 'no-such-rule'" in invoke(capsys, "review", DEMO, "--dsn", sample_dsn,
                                                              "--config", str(config)).err
    config.write_text("[fixes]\ncant-run = 3\n")
    bad = invoke(capsys, "review", DEMO, "--dsn", sample_dsn, "--config", str(config))
    assert bad.code == 2 and "fixes.cant-run" in bad.err


def test_shards_with_other_fix_texts_are_not_one_scan(capsys, sample_dsn, tmp_path):
    config = tmp_path / "fixes.toml"
    config.write_text('[fixes]\ncant-run = "Escalate."\n')
    mine = shard_files(capsys, tmp_path, sample_dsn, 2, "--config", str(config), name="own")
    theirs = shard_files(capsys, tmp_path, sample_dsn, 2, name="rule")
    r = invoke(capsys, "merge", str(mine[0]), str(theirs[1]))
    assert r.code == 3 and "other scan settings" in r.err


@pytest.mark.parametrize("text,sentence,quoted", [
    ("Ok. Since `sudo` requires a password, you have two options:", "Since requires a password, you have two options:",
     "Since `sudo` requires a password, you have two options:"),
    ("Unfortunately, `sudo` can\u2019t prompt for it.", "Unfortunately, can't prompt for it.",
     "Unfortunately, `sudo` can\u2019t prompt for it."),
    ("Sure. `make` fails here, so I can't build it.", "fails here, so I can't build it.",
     "`make` fails here, so I can't build it."),
    ("However, I can't run `systemctl restart nginx` there.", "However, I can't run there.",
     "However, I can't run `systemctl restart nginx` there."),
    ("nothing like it", "I cannot do that.", "I cannot do that."),
])
def test_quotes_keep_their_inline_code(text, sentence, quoted):
    assert quote_from(text, sentence) == quoted


# ------------------------------------------------------------------ tables
def test_tables_wrap_to_the_width_and_wide_turns_that_off(capsys, sample_dsn, monkeypatch):
    for columns in ("80", "100"):
        monkeypatch.setenv("COLUMNS", columns)
        scan = invoke(capsys, "scan", "--dsn", sample_dsn).out
        assert _widest(scan) <= int(columns), [line for line in scan.splitlines() if len(line) > int(columns)]
        compare = invoke(capsys, "compare", "--dsn", sample_dsn, "--at", "migration:020", "--min-sessions", "10").out
        assert _widest(compare) <= int(columns), [line for line in compare.splitlines() if len(line) > int(columns)]
        for rule in ("cant-run", "unfinished-session", "non-english-refusal"):
            assert re.search(rf"^{rule}\s", scan, re.M), "rule names are never broken"
    monkeypatch.delenv("COLUMNS")
    wide = invoke(capsys, "scan", "--dsn", sample_dsn, "--wide").out
    assert _widest(wide) > 120
    markdown = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "markdown").out
    assert all(line.count("|") >= 2 for line in markdown.splitlines() if line.startswith("|")), "markdown rows stay whole"


# ------------------------------------------------------------------ empty and thin selections
EMPTY = ("--since", "2030-01-01")
SAID = f"no sessions match (created since 2030-01-01 00:00 UTC); {SAMPLE_SPAN}"


@pytest.mark.parametrize("args", [
    ("scan", "--format", "table"), ("scan", "--format", "markdown"), ("scan", "--format", "json"),
    ("scan", "--format", "jsonl"),
    ("scan", "--by", "week", "--format", "table"), ("scan", "--by", "week", "--format", "json"),
    ("scan", "--by", "week", "--format", "jsonl"), ("scan", "--by", "week", "--format", "csv"),
    ("scan", "--by", "week", "--format", "markdown"),
    ("sessions", "--format", "table"), ("sessions", "--format", "json"),
], ids=lambda a: "-".join(a))
def test_an_empty_selection_says_so_in_every_format(capsys, sample_dsn, args):
    r = invoke(capsys, *args, "--dsn", sample_dsn, *EMPTY)
    assert r.code == 0, r.err
    assert f"nomos-forensics: warning: {SAID}" in r.err
    fmt = args[-1]
    if fmt == "json":
        doc = json.loads(r.out)
        assert doc.get("cards", doc.get("buckets", doc.get("sessions"))) == []
    elif fmt == "jsonl":
        assert r.out == ""
    elif fmt == "csv":
        assert r.out.splitlines() == ["week,sessions,messages,rule,rule_sessions,rate"]
    if args[0] == "scan":  # a gate over nothing passes nothing: exit 4
        gated = invoke(capsys, *args, "--dsn", sample_dsn, *EMPTY, "--fail-on", "cosmetic")
        assert gated.code == 4 and SAID in gated.err


@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_compare_says_no_sessions_and_too_few_instead_of_rates(capsys, sample_dsn, fmt):
    empty = invoke(capsys, "compare", "--dsn", sample_dsn, "--at", "2030-01-01", "--format", fmt)
    assert empty.code == 0
    assert "warning: no sessions after the split" in empty.err and SAMPLE_SPAN in empty.err
    thin = invoke(capsys, "compare", "--dsn", sample_dsn, "--at", "migration:020", "--format", fmt)
    assert "warning: too few sessions for rates: 21 before, 15 after" in thin.err
    if fmt == "json":
        doc = json.loads(empty.out)
        assert (doc["before"]["status"], doc["after"]["status"]) == ("ok", "no sessions")
        assert json.loads(thin.out)["after"]["status"] == "too few"
    else:
        assert "no sessions" in empty.out and "0/0" not in empty.out and "-100%" not in empty.out
        assert "too few" in thin.out and "%" not in thin.out.split("Model mix")[0].split("rule ")[1]
        assert "-100%" not in thin.out
    gated = invoke(capsys, "compare", "--dsn", sample_dsn, "--at", "2030-01-01", "--fail-on-regression", "--format", fmt)
    assert gated.code == 4


def test_an_empty_report_says_so_in_its_header(capsys, sample_dsn, tmp_path):
    path = tmp_path / "empty.html"
    r = invoke(capsys, "report", "--dsn", sample_dsn, "-o", str(path), *EMPTY)
    assert r.code == 0 and SAID in r.err
    html = path.read_text(encoding="utf-8")
    notice = re.search(r'<p class="notice" id="notice" role="status">([^<]*)</p>', html).group(1)
    assert notice == f"No sessions match (created since 2030-01-01 00:00 UTC); {SAMPLE_SPAN}."
    assert '<b id="n-sessions">0</b>' in html
    assert invoke(capsys, "report", "--dsn", sample_dsn, "-o", str(path), *EMPTY, "--fail-on", "blocker").code == 4


@pytest.mark.parametrize("fmt", ["table", "json", "jsonl", "markdown"])
def test_merging_the_shards_of_an_empty_scan_says_so(capsys, sample_dsn, tmp_path, fmt):
    paths = []
    for k in range(2):
        shard = invoke(capsys, "scan", "--dsn", sample_dsn, "--shard", f"{k}/2", *EMPTY, "--fail-on", "blocker")
        assert shard.code == 4 and SAID in shard.err  # the whole scan is empty, not only this shard
        paths.append(tmp_path / f"empty-{k}.jsonl")
        paths[-1].write_text(shard.out, encoding="utf-8")
    r = invoke(capsys, "merge", *map(str, paths), "--format", fmt)
    assert r.code == 4 and "warning: the shards hold no sessions (since 2030-01-01T00:00:00+00:00)" in r.err
    by = invoke(capsys, "merge", *map(str, paths), "--by", "week", "--format", "csv")
    assert by.code == 4
