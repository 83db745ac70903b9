"""scan --shard K/N and merge: shards merged are byte for byte one process's output, in every
format; shard sets that are not one whole scan are refused with one line and exit 3; --jobs auto."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import jsonschema
import psycopg
import psycopg.conninfo
import pytest

from nomos_forensics import devdb
from nomos_forensics.scan import Summary
from nomos_forensics.scan.parallel import pick_jobs

from .helpers import invoke, shard_files

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ("jsonl", "json", "table", "markdown")


def _assert_merge_is_the_scan(capsys, dsn: str, paths: list[Path], *args: str) -> None:
    for fmt in FORMATS:
        whole = invoke(capsys, "scan", "--dsn", dsn, "--format", fmt, *args)
        merged = invoke(capsys, "merge", *map(str, paths), "--format", fmt)
        assert merged.err == "", merged.err
        assert (merged.code, merged.out) == (whole.code, whole.out), fmt


def _trailer(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[-1])


@pytest.fixture(scope="module")
def generated_dsn(admin_dsn, tmp_path_factory):
    """A small database from bench/generate.py: every signature, messy shapes, lifecycle rows."""
    name = f"nomos_forensics_shardtest_{uuid.uuid4().hex[:8]}"
    meta = tmp_path_factory.mktemp("gen") / "meta.json"
    dsn = psycopg.conninfo.make_conninfo(admin_dsn, dbname=name)
    try:
        proc = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "generate.py"), "--dsn", admin_dsn, "--dbname", name,
             "--messages", "4000", "--sessions", "160", "--seed", "11", "--meta", str(meta), "--quiet"],
            capture_output=True, text=True, timeout=180,
        )
        assert proc.returncode == 0, proc.stderr
        yield dsn
    finally:
        devdb.drop_database(admin_dsn, dsn)


def test_three_shards_merge_to_the_whole_scan_on_the_sample(capsys, tmp_path, sample_dsn):
    paths = shard_files(capsys, tmp_path, sample_dsn, 3)
    counts = [_trailer(p)["nomos_forensics_shard"]["sessions"] for p in paths]
    assert all(counts) and sum(counts) == len(invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "jsonl").out.splitlines())
    _assert_merge_is_the_scan(capsys, sample_dsn, paths)
    # merge takes the shards in any order; a shard may itself run --jobs workers
    assert invoke(capsys, "merge", *map(str, reversed(paths)), "--format", "jsonl").out == \
        invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "jsonl").out
    jobs = shard_files(capsys, tmp_path, sample_dsn, 3, "--jobs", "2", name="jobs")
    assert [p.read_bytes() for p in jobs] == [p.read_bytes() for p in paths]


def test_three_shards_merge_to_the_whole_scan_on_a_generated_db(capsys, tmp_path, generated_dsn):
    paths = shard_files(capsys, tmp_path, generated_dsn, 3)
    _assert_merge_is_the_scan(capsys, generated_dsn, paths)
    # filters, --limit (picked before partitioning) and --fail-on travel with the shards
    args = ("--limit", "50", "--until", "2030-01-01", "--fail-on", "friction")
    limited = shard_files(capsys, tmp_path, generated_dsn, 3, *args, name="limited")
    _assert_merge_is_the_scan(capsys, generated_dsn, limited, *args)
    assert invoke(capsys, "merge", *map(str, limited)).code == 1


def test_a_shard_is_the_jobs_hash_partition(capsys, tmp_path, sample_dsn):
    paths = shard_files(capsys, tmp_path, sample_dsn, 4)
    with psycopg.connect(sample_dsn) as conn:
        for k, path in enumerate(paths):
            expected = [r[0] for r in conn.execute(
                "SELECT id::text FROM sessions WHERE mod(abs(hashtext(id::text)::bigint), 4) = %s ORDER BY id", (k,))]
            got = [json.loads(line)["session"]["id"] for line in path.read_text().splitlines()[:-1]]
            assert got == expected


def test_the_trailer_matches_its_schema_and_the_summary_round_trips(capsys, tmp_path, sample_dsn):
    schema = json.loads((ROOT / "docs" / "shard.schema.json").read_text())
    for path in shard_files(capsys, tmp_path, sample_dsn, 2):
        trailer = _trailer(path)
        jsonschema.validate(trailer, schema)
        state = trailer["nomos_forensics_shard"]["summary"]
        assert Summary.from_state(json.loads(json.dumps(state))).to_state() == state


@pytest.fixture(scope="module")
def shard_set(sample_dsn, tmp_path_factory):
    """Shard files written by the installed command (a real stdout, not captured)."""
    folder = tmp_path_factory.mktemp("shards")
    paths = []
    for k in range(3):
        path = folder / f"s{k}.jsonl"
        with path.open("w", encoding="utf-8") as out:
            done = subprocess.run([sys.executable, "-m", "nomos_forensics", "scan", "--dsn", sample_dsn,
                                   "--shard", f"{k}/3"], stdout=out, stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, "NOMOS_FORENSICS_LOAD_PLUGINS": ""})
        assert done.returncode in (0, 1), done.stderr
        paths.append(path)
    return paths


def _refused(capsys, *paths, needle: str) -> None:
    r = invoke(capsys, "merge", *map(str, paths), "--format", "jsonl")
    assert r.code == 3, (r.code, r.err)
    assert r.out == ""
    assert r.err.count("\n") == 1 and r.err.startswith("nomos-forensics: error: ") and needle in r.err, r.err


def test_bad_shard_sets_are_one_line_and_exit_3(capsys, tmp_path, sample_dsn, shard_set):
    s0, s1, s2 = shard_set
    _refused(capsys, s0, s1, needle="missing shard 2/3")
    _refused(capsys, s0, s1, s1, s2, needle="shard 1/3 given twice")
    _refused(capsys, tmp_path / "nope.jsonl", needle="cannot read shard")
    # mixed: another N, other settings
    other_n = shard_files(capsys, tmp_path, sample_dsn, 2, name="two")
    _refused(capsys, s0, s1, other_n[1], needle="a different number of shards")
    selected = shard_files(capsys, tmp_path, sample_dsn, 3, "--select", "tool-fanout", name="sel")
    _refused(capsys, s0, selected[1], s2, needle="other scan settings (rules differ)")
    # corrupt: truncated (no trailer), an edited card line, a plain scan, garbage, a dropped line
    text = s1.read_text(encoding="utf-8")
    cut = tmp_path / "cut.jsonl"
    cut.write_text(text[: len(text) // 2], encoding="utf-8")
    _refused(capsys, s0, cut, s2, needle="is not a whole shard")
    edited = tmp_path / "edited.jsonl"
    edited.write_text(text.replace('"outcome": "failed"', '"outcome": "achieved"', 1), encoding="utf-8")
    assert edited.read_text() != text
    _refused(capsys, s0, edited, s2, needle="do not match its trailer")
    dropped = tmp_path / "dropped.jsonl"
    dropped.write_text("".join(text.splitlines(keepends=True)[1:]), encoding="utf-8")
    _refused(capsys, s0, dropped, s2, needle="do not match its trailer")
    plain = tmp_path / "plain.jsonl"
    plain.write_text(invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "jsonl").out, encoding="utf-8")
    _refused(capsys, plain, needle="is not a whole shard")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"\xff\xfe not json\n" + text.splitlines()[-1].encode() + b"\n")
    _refused(capsys, s0, garbage, s2, needle="line 1")
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    _refused(capsys, empty, needle="is not a whole shard")


def test_shard_option_errors(capsys, sample_dsn):
    for value in ("3/3", "x", "1/0", "-1/2", "1/5000"):
        r = invoke(capsys, "scan", "--dsn", sample_dsn, "--shard", value)
        assert r.code == 2 and "--shard" in r.err and r.out == "", (value, r.err)
    r = invoke(capsys, "scan", "--dsn", sample_dsn, "--shard", "0/2", "--format", "table")
    assert r.code == 2 and "merge --format table" in r.err
    assert invoke(capsys, "merge").code == 2  # no files: usage


def test_pick_jobs():
    assert pick_jobs(2, 100, 3, 5)[0] == 2  # the cores
    assert pick_jobs(16, 100, 3, 5)[0] == 8  # the cap
    assert pick_jobs(16, 100, 3, 5, cap=32)[0] == 16
    assert pick_jobs(16, 40, 3, 25)[0] == 3  # a quarter of 12 free slots
    assert pick_jobs(4, 20, 3, 17)[0] == 1  # no free slot: still one
    assert "free connection slots" in pick_jobs(2, 100, 3, 5)[1]


def test_jobs_auto_gives_the_same_output(capsys, sample_dsn):
    one = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "jsonl")
    auto = invoke(capsys, "scan", "--dsn", sample_dsn, "--format", "jsonl", "--jobs", "auto")
    assert (auto.code, auto.out) == (one.code, one.out)
    assert "--jobs auto:" in auto.err and "free connection slots" in auto.err
    assert invoke(capsys, "scan", "--dsn", sample_dsn, "--jobs", "some").code == 2


def test_the_documented_array_job_pattern(tmp_path, sample_dsn):
    """The README's Slurm and Kubernetes lines: K from the scheduler's variable, exit 1 (findings)
    counted as success, then merge; every task against its own DSN (here the same database)."""
    from .helpers import SCRIPT

    env = {**os.environ, "NOMOS_FORENSICS_LOAD_PLUGINS": "", "DSN": sample_dsn, "SLURM_ARRAY_TASK_COUNT": "3"}
    for task in range(3):
        done = subprocess.run(
            ["bash", "-c", f'"{SCRIPT}" scan --shard "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT" --dsn "$DSN"'
                           ' --fail-on cosmetic > "shard-$SLURM_ARRAY_TASK_ID.jsonl"; test $? -le 1'],
            cwd=tmp_path, env={**env, "SLURM_ARRAY_TASK_ID": str(task)}, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    merged = subprocess.run([str(SCRIPT), "merge", *sorted(str(p) for p in tmp_path.glob("shard-*.jsonl")),
                             "--format", "jsonl"], env=env, capture_output=True, text=True, timeout=120)
    whole = subprocess.run([str(SCRIPT), "scan", "--dsn", sample_dsn, "--fail-on", "cosmetic", "--format", "jsonl"],
                           env=env, capture_output=True, text=True, timeout=120)
    assert (merged.returncode, merged.stdout) == (whole.returncode, whole.stdout) and whole.returncode == 1


def test_jobs_auto_in_compare_and_report(capsys, sample_dsn, tmp_path):
    """compare and report make scan's pass, so they take `--jobs auto` as scan does."""
    args = ("compare", "--dsn", sample_dsn, "--at", "migration:020", "--format", "json")
    one, auto = invoke(capsys, *args), invoke(capsys, *args, "--jobs", "auto")
    assert (auto.code, auto.out) == (one.code, one.out) and "--jobs auto:" in auto.err
    pages = []
    for jobs in ("1", "auto"):
        path = tmp_path / f"{jobs}.html"
        r = invoke(capsys, "report", "--dsn", sample_dsn, "-o", str(path), "--jobs", jobs)
        assert r.code in (0, 1) and ("--jobs auto:" in r.err) == (jobs == "auto"), r.err
        pages.append(re.sub(r"Made by nomos-forensics on [^.]*\.", "", path.read_text(encoding="utf-8")))
    assert pages[0] == pages[1]
    assert invoke(capsys, "report", "--dsn", sample_dsn, "--jobs", "some").code == 2


@pytest.mark.parametrize("by", ["week", "day,model", "month"])
def test_merge_by_gives_the_series_of_one_scan(capsys, tmp_path, generated_dsn, by):
    """One scan across machines, then trends without scanning again: `merge --by` of the shards
    prints what `scan --by` prints over the same sessions, in every format, with its exit code."""
    paths = shard_files(capsys, tmp_path, generated_dsn, 3, "--fail-on", "friction", name="by" + by.replace(",", "-"))
    for fmt in ("table", "json", "jsonl", "csv", "markdown"):
        whole = invoke(capsys, "scan", "--dsn", generated_dsn, "--by", by, "--format", fmt, "--fail-on", "friction")
        merged = invoke(capsys, "merge", *map(str, paths), "--by", by, "--format", fmt)
        assert (merged.code, merged.out) == (whole.code, whole.out), fmt
    assert invoke(capsys, "merge", *map(str, paths), "--format", "csv").code == 2  # csv needs --by


def test_compare_from_shards_is_compare_from_the_database(capsys, tmp_path, generated_dsn):
    """Did the release fix it, from the shard files of one scan across machines: the same
    comparison as `compare` reading the database, with the same gate and exit code."""
    paths = shard_files(capsys, tmp_path, generated_dsn, 3, name="cmp")
    with psycopg.connect(generated_dsn) as conn:
        middle = conn.execute("SELECT to_timestamp(avg(extract(epoch FROM created_at))) FROM sessions").fetchone()[0]
    at = middle.date().isoformat()
    for args in (("--at", at, "--format", "json", "--min-sessions", "5"),
                 ("--at", at, "--fail-on-regression", "--min-sessions", "5"),
                 ("--before", f"..{at}", "--after", f"{at}..", "--format", "markdown")):
        db = invoke(capsys, "compare", "--dsn", generated_dsn, *args)
        files = invoke(capsys, "compare", *args, *map(str, paths))
        assert (files.code, files.out) == (db.code, db.out), args
    refused = invoke(capsys, "compare", "--at", at, "--model", "x", *map(str, paths))
    assert refused.code == 2 and "own filters and rules" in refused.err
    assert invoke(capsys, "compare", "--at", "migration:020", *map(str, paths)).code == 2
    assert invoke(capsys, "compare", "--at", at, *map(str, paths[:2])).code == 3  # a shard missing
