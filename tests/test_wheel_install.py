"""The wheel, as a user gets it: built from a copy of the repo, installed with the `demo` extra
into a fresh venv, and `nomos-forensics demo` run from a directory outside the repo."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# what a build needs; everything else (venvs, caches, other engineers' scratch files) stays out
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "setup.cfg",
           "nomos_forensics", "rules", "sql")
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")
# optional: a folder of wheels to install from first (pip still falls back to the index)
WHEEL_CACHE_ENV = "NOMOS_FORENSICS_WHEEL_CACHE"

pytestmark = pytest.mark.slow


def _run(args: list[str], *, cwd: Path, env: dict[str, str] | None = None, timeout: float = 900):
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, (
        f"{' '.join(map(str, args))} exited {result.returncode}\n"
        f"--- stdout\n{result.stdout[-4000:]}\n--- stderr\n{result.stderr[-4000:]}"
    )
    return result


def _clean_env() -> dict[str, str]:
    """The environment of a fresh shell: none of the test suite's nomos-forensics settings."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("NOMOS_FORENSICS_") and k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Build the wheel from a copy of the repo, so the build writes nothing into the working tree."""
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=IGNORE)
        elif path.is_file():
            shutil.copy2(path, src / name)
    out = tmp_path_factory.mktemp("dist")
    if importlib.util.find_spec("build") is not None:
        _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(src)], cwd=src)
    else:
        _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out), str(src)], cwd=src)
    wheels = list(out.glob("nomos_forensics-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_ships_rules_migrations_queries_and_sample(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    migrations = sorted(p.name for p in (ROOT / "sql" / "migrations").glob("*.sql"))
    assert migrations
    for name in migrations:
        assert f"nomos_forensics_sql/migrations/{name}" in names
    for query in (ROOT / "sql" / "queries").glob("*.sql"):
        assert f"nomos_forensics_sql/queries/{query.name}" in names
    assert "nomos_forensics_sql/sample/sample.sql" in names
    for rule in (ROOT / "rules").glob("*.py"):
        assert f"nomos_forensics_rules/{rule.name}" in names
    assert "nomos_forensics/py.typed" in names
    for lexicon in [*(ROOT / "nomos_forensics" / "text" / "lexicons").glob("*.toml"), *(ROOT / "rules" / "lexicons").glob("*.toml")]:
        package = "nomos_forensics_rules" if lexicon.parent.parent.name == "rules" else "nomos_forensics/text"
        assert f"{package}/lexicons/{lexicon.name}" in names, f"{lexicon.name} is not in the wheel"
    for data in [*(ROOT / "nomos_forensics" / "report" / "templates").iterdir(),
                 *(ROOT / "nomos_forensics" / "report" / "static").iterdir()]:  # the report's templates, uPlot
        assert data.relative_to(ROOT).as_posix() in names, f"{data.relative_to(ROOT)} is not in the wheel"
    for module in (ROOT / "nomos_forensics").rglob("*.py"):  # subpackages too (commands/)
        assert module.relative_to(ROOT).as_posix() in names, f"{module.relative_to(ROOT)} is not in the wheel"
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "nomos-forensics = nomos_forensics.launch:main" in text
    assert "[nomos_forensics]" in text and "nomos_forensics_rules.cant_run" in text
    assert not any(n.startswith(("tests/", "rules/", "sql/")) for n in names), "repo-relative paths leaked"


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel and its `demo` extra installed; returns its bin directory."""
    home = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True, clear=True).create(home)
    bindir = home / ("Scripts" if os.name == "nt" else "bin")
    args = [str(bindir / "python"), "-m", "pip", "install", "--disable-pip-version-check",
            f"{wheel}[demo]"]
    cache = os.environ.get(WHEEL_CACHE_ENV)
    if cache:
        args[4:4] = ["--find-links", cache]
    _run(args, cwd=home, env=_clean_env())
    return bindir


def test_installed_cli_lists_builtin_rules(installed, tmp_path):
    result = _run([str(installed / "nomos-forensics"), "rules"], cwd=tmp_path, env=_clean_env(),
                  timeout=120)
    for name in ("cant-run", "empty-response", "tool-fanout", "oversized-message"):
        assert name in result.stdout


def test_demo_runs_from_the_installed_wheel(installed, tmp_path):
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    result = _run([str(installed / "nomos-forensics"), "demo"], cwd=workdir, env=_clean_env(),
                  timeout=600)
    out = result.stdout
    assert "nomos-forensics sessions" in out
    header = next((line for line in out.splitlines() if line.split()[:2] == ["id", "title"]), None)
    assert header is not None, out
    assert "c0a1e5a1" in out.split("nomos-forensics review", 1)[0], "the sessions table lists the demo session"
    assert "Session: c0a1e5a1" in out
    assert "Outcome:" in out and "Findings:" in out
    assert "Traceback" not in result.stderr
    assert not list(workdir.iterdir()), "the demo must not leave files in the working directory"
