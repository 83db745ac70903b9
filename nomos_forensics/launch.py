"""The console script's entry point (`nomos-forensics`, `python -m nomos_forensics`): the
garbage collector tuned for this process, then the command line.

A run imports some 400 modules and hundreds of patterns, loads the text models, then builds a
session's (or a batch's) messages: objects that live until exit and that nothing frees in
cycles. CPython's default collector starts a young collection every 700 new objects and walks
all survivors every so often, which cost about a tenth of `review`'s wall time on the bench's
5,000-message session. The first generation gets a larger allowance (`GEN0`), and the objects
of start-up move out of the collector's sight (`gc.freeze`): they are never garbage.

Only the real process does this: tests and library users that call `cli.run` keep their own
collector settings, and nothing they allocate is frozen."""

from __future__ import annotations

import gc

GEN0 = 10_000  # new objects between young collections (CPython's default is 700)


def main() -> None:
    gc.set_threshold(GEN0, *gc.get_threshold()[1:])
    from .cli import main as run

    gc.freeze()  # the imported modules, their patterns and tables: alive until exit
    run()
