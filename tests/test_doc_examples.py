"""Every command example in the README and docs/ runs: each `nomos-forensics …` line of a bash
block or a `$ nomos-forensics …` line of an output block is run against the sample database
(with its DSN, its output files in a tmp dir, and the shard files of a real `scan --shard` where
it names some), and must exit 0 or 1; the README's rule, case file and test run as written."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from .helpers import invoke, shard_files

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# what the examples write or read, made real here; shell placeholders get a value
SHARD_GLOB = re.compile(r"^(?:/[\w/]+/)?shard-\*\.jsonl$")
PLACEHOLDERS = {"$JOB_COMPLETION_INDEX/4": "0/4", "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT": "0/4",
                "{}/4": "0/4"}
NOT_RUN = {"demo": "starts its own embedded server (tests/test_wheel_install.py and test_hardening run it)"}


COMMAND = re.compile(r"(?<=')nomos-forensics\s[^;&|'\n]*|(?<![\w/.'-])nomos-forensics\s[^;&|\n]*")
SYNOPSIS = re.compile(r"\[--|\bSESSION\b|\bSHARD\.jsonl\.\.\.|\bRANGE\b|…")  # a usage line, not an example


def _commands(text: str) -> list[str]:
    """The nomos-forensics command lines of a page: in its shell, output and Kubernetes blocks,
    and in its inline code (`nomos-forensics merge shards-*.jsonl`); usage synopses left out."""
    found = []
    for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
        if lang not in ("", "bash", "sh", "console", "yaml"):
            continue
        body = body.replace("\\\n", " ").replace('\\"', '"')
        if lang == "yaml":  # a Kubernetes Job's command, over several lines of a YAML string
            body = " ".join(body.split())
        for line in body.splitlines():
            line = line.strip()
            if lang == "" and not line.startswith("$ nomos-forensics"):
                continue  # an output block: only its prompt lines are commands
            found += [m.group().strip().rstrip('"]') for m in COMMAND.finditer(line.removeprefix("$ "))]
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    found += [span for span in re.findall(r"`(nomos-forensics [^`]+)`", prose)]
    return [c for c in found if not SYNOPSIS.search(c) and len(c.split()) > 1]


EXAMPLES = [(page.name, command) for page in PAGES for command in _commands(page.read_text(encoding="utf-8"))]


def test_the_docs_have_command_examples():
    pages = {page for page, _ in EXAMPLES}
    assert len(EXAMPLES) >= 40 and {"README.md", "commands.md", "compare.md", "report.md", "scale-out.md"} <= pages


@pytest.fixture(scope="module")
def example_shards(sample_dsn, tmp_path_factory):
    import contextlib
    import io

    from nomos_forensics.cli import run

    folder = tmp_path_factory.mktemp("example-shards")
    paths = []
    for k in range(3):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert run(["scan", "--dsn", sample_dsn, "--shard", f"{k}/3"]) in (0, 1)
        paths.append(folder / f"shard-{k}.jsonl")
        paths[-1].write_text(out.getvalue(), encoding="utf-8")
    return [str(p) for p in paths]


def _runnable(command: str, dsn: str, shards: list[str], tmp_path: Path, rule: Path) -> list[str]:
    for placeholder, value in PLACEHOLDERS.items():
        command = command.replace(placeholder, value)
    command = re.sub(r"\s+#.*$", "", command)  # a trailing comment
    command = re.sub(r"\s*\d?>\s*\S+", "", command)  # a redirection: the output is checked here
    words = shlex.split(command)[1:]
    out: list[str] = []
    skip = False
    for i, word in enumerate(words):
        if skip:
            skip = False
            continue
        if word == "--dsn":
            skip = True
            continue
        if SHARD_GLOB.match(word):
            out += shards
        elif i and words[i - 1] in ("-o", "--output") and word != "-":
            out.append(str(tmp_path / Path(word).name))
        elif i and words[i - 1] in ("-p", "--plugin"):
            out.append(str(rule))
        else:
            out.append(word)
    if out and out[0] not in ("merge", "rules", "demo"):
        out += ["--dsn", dsn]
    return out


@pytest.mark.parametrize("page,command", EXAMPLES, ids=[f"{p}:{c[16:60]}" for p, c in EXAMPLES])
def test_every_command_example_runs(capsys, sample_dsn, example_shards, tmp_path, monkeypatch, page, command):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rule = tmp_path / "greeting_loop.py"
    rule.write_text(re.search(r"```python\n(.*?)```", readme[readme.index("## Writing a rule"):], re.S).group(1))
    monkeypatch.chdir(tmp_path)
    args = _runnable(command, sample_dsn, example_shards, tmp_path, rule)
    if args[0] in NOT_RUN:
        import click

        from nomos_forensics.cli import cli

        ctx = cli.make_context("nomos-forensics", list(args), resilient_parsing=False)  # parses, runs nothing
        assert isinstance(ctx, click.Context)
        return
    result = invoke(capsys, *args)
    assert result.code in (0, 1), (command, args, result.err)


def test_the_readme_rule_its_case_file_and_its_test_run_as_written(tmp_path, monkeypatch):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Writing a rule"):]
    rule, test = re.findall(r"```python\n(.*?)```", section, re.S)[:2]
    case = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    (tmp_path / "greeting_loop.py").write_text(rule)
    (tmp_path / "greeting_loop.yaml").write_text(case)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(test, "test_greeting_loop.py", "exec"), namespace)
    namespace["test_greeting_loop"]()
    from nomos_forensics.testing import load_cases

    assert [c["expect"]["greeting-loop"] for c in load_cases(tmp_path / "greeting_loop.yaml")] == [1, 0]


def test_the_full_rule_example_of_the_docs_loads(capsys, tmp_path):
    page = (ROOT / "docs" / "writing-rules.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", page, re.S).group(1)
    path = tmp_path / "docs_rule.py"
    path.write_text(code)
    listed = invoke(capsys, "rules", "-p", str(path), "--format", "json")
    assert listed.code == 0 and "greeting-loop" in listed.out, listed.err
    assert shard_files  # the helpers the examples' shards come from
