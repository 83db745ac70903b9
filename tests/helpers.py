"""Shared test helpers: run the CLI in-process or as the installed script."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from nomos_forensics.cli import run

SCRIPT = Path(sys.executable).with_name("nomos-forensics")


def ctrl_c_default() -> None:
    """A child's `preexec_fn` for the tests that press Ctrl-C: SIGINT back to its default. A test
    run started in the background (`pytest &` in a script) has SIGINT ignored, every child
    inherits that, and Python keeps an inherited SIG_IGN: the child would never see the Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@dataclass
class Result:
    code: int
    out: str
    err: str


def invoke(capsys, *args: str) -> Result:
    """Run `nomos-forensics ARGS` in this process; returns exit code, stdout, stderr."""
    capsys.readouterr()
    code = run(list(args))
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def shard_files(capsys, tmp_path: Path, dsn: str, n: int, *args: str, name: str = "shard") -> list[Path]:
    """`scan --shard K/N ARGS` for every K, each into tmp_path/NAME-K.jsonl."""
    paths = []
    for k in range(n):
        r = invoke(capsys, "scan", "--dsn", dsn, "--shard", f"{k}/{n}", *args)
        assert r.code in (0, 1), r.err
        path = tmp_path / f"{name}-{k}.jsonl"
        path.write_text(r.out, encoding="utf-8")
        paths.append(path)
    return paths


def script(*args: str, env: dict | None = None, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
    """Run the installed `nomos-forensics` script as a subprocess."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, env=full_env, timeout=timeout, **kwargs
    )


def probe_plugin(tmp_path: Path, name: str, body: str, *, header: str = "", code_prefix: str = "T",
                 methods: str = "") -> str:
    """Write a one-rule plugin file whose `check()` is `body` (`methods`: more of the class, such
    as a `preload`); returns its path (for `-p`)."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(f'''
        from nomos_forensics import Rule, hookimpl
        {header}

        class Probe(Rule):
            """Test probe.

            Detects: nothing real.
            Root cause: a test.
            Fix: none.
            """
            code = "{code_prefix}{abs(hash(name)) % 900 + 100}"
            name = "{name.replace('_', '-')}"
        ''') + textwrap.indent(textwrap.dedent(methods), " " * 4) + "\n    def check(self, session, ctx):\n" + textwrap.indent(textwrap.dedent(body), " " * 8) + textwrap.dedent('''

        @hookimpl
        def nomos_forensics_rules():
            return [Probe]
        '''))
    return str(path)
