"""bench/scaleout.py: N shards merged must give the whole scan's bytes, and the script says so
only when they do."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "bench" / "scaleout.py"

pytestmark = pytest.mark.skipif(shutil.which("psql") is None, reason="the COPY floor runs through psql")


def load_scaleout():
    sys.path.insert(0, str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("scaleout_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_shards_merge_to_the_whole_scan(sample_dsn, capsys):
    scaleout = load_scaleout()
    assert scaleout.main(["--dsn", sample_dsn, "--shards", "2,3", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "byte-identical to the whole scan" in out
    rows = [line.split()[0:2] for line in out.splitlines() if "machine" in line and "x " in line]
    assert rows == [["one", "machine"], ["2", "machines"], ["3", "machines"]]


def test_a_merge_that_differs_fails_the_run(sample_dsn, capsys, monkeypatch):
    scaleout = load_scaleout()
    real = scaleout.measure

    def measure_with_a_bad_merge(cmd, **kwargs):
        result = real(cmd, **kwargs)
        if "merge" in cmd:
            kwargs["stdout"].write(b"{}\n")  # one line more than the whole scan printed
        return result

    monkeypatch.setattr(scaleout, "measure", measure_with_a_bad_merge)
    assert scaleout.main(["--dsn", sample_dsn, "--shards", "2", "--repeat", "1"]) == 1
    assert "2 shards merged differ from the whole scan" in capsys.readouterr().out
