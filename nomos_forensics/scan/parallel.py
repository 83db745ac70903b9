"""`scan --jobs N`: worker processes over hash partitions of the sessions, merged back into
session-id order so the output is what one process prints."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .. import plugins
from ..card import Card
from ..db import Database
from ..engine import build_ruleset, fail_on_reached
from ..errors import Activity, ConnectionLost, ForensicsError, InternalError, QueryTimeout
from ..render import card_json
from ..schema import reflect
from .stream import ScanFilters, settle_memory, stream_sessions
from .summary import Summary


@dataclass
class ScanJob:
    """Everything a scan worker needs to rebuild its engine and rules in another process."""

    settings: Any  # db.ConnectionSettings
    filters: ScanFilters
    plugin_refs: tuple[str, ...]
    config: Any  # config.Config
    select: tuple[str, ...]
    ignore: tuple[str, ...]
    fail_on: Any  # Severity | None
    series: Any = None  # a trends.Series whose empty copy each worker fills (scan --by, compare)
    # what each worker aggregates into (and sends back to be merged): a Summary or a subclass
    summary_factory: Callable[[], Summary] = Summary
    lines: bool = True  # send each card's JSON line (report needs only the summary: False)


def card_results(cards: Iterator[Card], summary: Summary, fail_on) -> Iterator[tuple[Card, bool]]:
    for card in cards:
        summary.add(card)
        yield card, bool(card.errors) or fail_on_reached([card], fail_on)


def die_with_parent(parent: int) -> None:
    """End this worker when its parent dies, however it dies (SIGTERM, SIGKILL): the kernel
    sends SIGTERM on Linux (PR_SET_PDEATHSIG), and a watchdog thread notices the re-parenting
    within a second elsewhere. Without it a worker would hold its connection for minutes."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
    threading.Thread(target=watch, name="nomos-forensics-parent-watch", daemon=True).start()


def _worker(job: ScanJob, channel, parent: int) -> None:
    """Scan one hash partition and send ("cards", [(session id, json line, failed), ...]) ...
    then ("done", summary), or ("error", class name, message). Cards go in batches of
    CARD_BATCH: one queue message per card cost the parent about as much CPU as rendering."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what Ctrl-C means
    die_with_parent(parent)
    db = Database(job.settings)
    summary = job.summary_factory()
    if job.series is not None:
        summary.series = job.series.empty()
    try:
        registry = plugins.load(job.plugin_refs)
        with db.connect("scanning sessions") as conn:
            schema = reflect(conn, db)
            ruleset = build_ruleset(registry, job.config, select=job.select, ignore=job.ignore, schema=schema)
            settle_memory()
            cards = stream_sessions(db, conn, ruleset, job.filters, schema, manager=registry.manager)
            batch: list[tuple[str, str, bool]] = []
            for card, failed in card_results(cards, summary, job.fail_on):
                # a series prints no cards, and the report needs only the summary
                line = card_json(card, indent=None) if job.lines and job.series is None else ""
                batch.append((card.session.id, line, failed))
                if len(batch) == CARD_BATCH:
                    channel.put(("cards", batch))
                    batch = []
            if batch:
                channel.put(("cards", batch))
        channel.put(("done", summary))
    except ForensicsError as error:
        channel.put(("error", type(error).__name__, str(error)))
    except BaseException as error:  # a crash: the parent reports it as one line, exit 70
        text = (str(error).strip().splitlines() or [""])[0]
        what = f"{type(error).__name__}{': ' + text[:300] if text else ''}{Activity.describe()} in a scan worker"
        channel.put(("crash", what, "".join(traceback.format_exception(error))))
    finally:
        db.dispose()


MAX_JOBS = 64
AUTO_CAP = 8  # --jobs auto never starts more workers than this


def pick_jobs(cores: int, max_connections: int, reserved: int, used: int, cap: int = AUTO_CAP,
              limits: dict[str, tuple[int | None, int]] | None = None) -> tuple[int, str]:
    """--jobs auto: one worker per core this process may run on, no more than a quarter of the
    server's free connection slots (the application keeps the rest), no more than the role's or
    the database's connection limit leaves (`limits`: name -> (limit or None/-1, in use); the
    parent's own connection counts), at most `cap`; at least 1."""
    free = max(0, max_connections - reserved - used)
    jobs = max(1, min(cores, free // 4, cap))
    why = [f"{cores} core{'s' if cores != 1 else ''}", f"{free} free connection slots on the server"]
    for name, (limit, in_use) in (limits or {}).items():
        if limit is not None and limit >= 0:
            left = max(0, limit - in_use)
            jobs = max(1, min(jobs, left))
            why.append(f"{left} more connection{'s' if left != 1 else ''} allowed for the {name} (limit {limit})")
    return jobs, ", ".join([*why, f"cap {cap}"])


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def auto_jobs(db: Database, conn) -> tuple[int, str]:
    """(workers, why) for --jobs auto, from this machine's cores and the server's load."""
    row = db.query(conn, "scan_server_load", {}, purpose="reading the server's load")[0]
    limits = {"role": (row.role_limit, int(row.role_used)), "database": (row.database_limit, int(row.database_used))}
    return pick_jobs(usable_cores(), int(row.max_connections), int(row.reserved), int(row.used), limits=limits)


WORKER_QUEUE = 256  # cards a worker may run ahead of the merge
CARD_BATCH = 32  # cards per queue message


def parallel_scan(job: ScanJob, jobs: int, summary: Summary) -> Iterator[tuple[str, bool]]:
    """Run `jobs` worker processes over hash partitions of the sessions.

    Each worker reviews its partition in session-id order; the cards are merged back into
    session-id order, so the output is the same as a single process's. A worker may run at
    most about WORKER_QUEUE cards ahead of the slowest, which bounds the parent's memory. Yields
    (card JSON line, failed) and merges each worker's summary into `summary` as the worker
    finishes (complete once the generator is exhausted). Raises the first worker error.

    The workers are forked here, before the caller starts its output thread: a thread running
    at the fork may hold a lock (stdout's, stderr's) that the child then waits on forever.
    """
    channels, workers = _start_workers(job, jobs)
    return _merged(channels, workers, summary)


def _start_workers(job: ScanJob, jobs: int) -> tuple[list, list]:
    context = multiprocessing.get_context("fork")
    channels, workers = [], []
    base = job.filters  # partition K of N (scan --shard; 0 of 1 otherwise) split J ways: the
    # sessions with hash mod N*J = K + N*j for j < J are exactly those with hash mod N = K
    for worker in range(jobs):
        filters = ScanFilters(**{**base.__dict__, "partition": base.partition + base.partitions * worker,
                                 "partitions": base.partitions * jobs})
        worker_job = ScanJob(**{**job.__dict__, "filters": filters})
        channel = context.Queue(maxsize=max(1, WORKER_QUEUE // CARD_BATCH))
        process = context.Process(target=_worker, args=(worker_job, channel, os.getpid()), daemon=True)
        process.start()
        channels.append(channel)
        workers.append(process)
    return channels, workers


def _merged(channels: list, workers: list, summary: Summary) -> Iterator[tuple[str, bool]]:
    jobs = len(workers)
    pending: list[deque[tuple[str, str, bool]]] = [deque() for _ in range(jobs)]  # cards received, in order
    running = set(range(jobs))
    try:
        while running or any(pending):
            for index in sorted(running):
                while not pending[index] and index in running:
                    message = _receive(channels[index], workers[index])
                    if message[0] == "cards":
                        pending[index].extend(message[1])
                    elif message[0] == "done":
                        summary.merge(message[1])
                        running.discard(index)
                    elif message[0] == "crash":
                        raise InternalError(message[1], traceback=message[2])
                    else:
                        raise _worker_error(message[1], message[2])
            waiting = [i for i in range(jobs) if pending[i]]
            if not waiting:
                continue
            first = min(waiting, key=lambda i: pending[i][0][0])
            _, line, failed = pending[first].popleft()
            yield line, failed
    finally:
        for process in workers:
            if process.is_alive():
                process.terminate()
        for process in workers:
            process.join(timeout=5)


def _receive(channel, process) -> tuple:
    """The next message from one worker; a worker that died without a word is an error."""
    while True:
        try:
            return channel.get(timeout=1.0)
        except queue.Empty:
            if not process.is_alive() and channel.empty():
                raise InternalError(f"a scan worker exited unexpectedly (exit status {process.exitcode})") from None


def _worker_error(name: str, text: str) -> Exception:
    return {"ConnectionLost": ConnectionLost, "QueryTimeout": QueryTimeout}.get(name, ForensicsError)(text)
