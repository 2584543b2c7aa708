"""A thread per process for the Redis writes that follow a job's commit, and `PerProcess`,
which the project's per-process threads are made with.

A worker child is busy until its task returns, so every round trip left in a job delays the
next one. What only has to happen soon after a commit (the cache copy, releasing the per-attempt
lock) is handed to this thread in order, in one hand-off at the end of the run. A process that
dies first loses them: that costs a cache miss, and a lock that expires by its TTL, never a wrong
answer.

`run_later` is for a step that may turn out not to be needed (the claim's cache floor, which a
job that finishes first makes moot) or that waits for something (a floor owed while Redis was
unreachable): it wakes no thread when handed over, and runs a little after its time, when the
thread next looks (within `TICK`). Measured on an instant job, three hand-offs that each woke
the thread and a floor raise that was moot made up about a fifth of the worker child's own CPU.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Generic, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")


class PerProcess(Generic[T]):
    """One `factory()` per process, made on first use. A forked child (gunicorn, Celery
    prefork) makes its own: the parent's threads do not survive the fork."""

    def __init__(self, factory: Callable[[], T]):
        self._factory = factory
        self._pid = 0
        self._value: T | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        if self._pid != os.getpid():
            with self._lock:
                if self._pid != os.getpid():
                    self._value = self._factory()
                    self._pid = os.getpid()
        return self._value

    def made(self) -> T | None:
        """This process's instance if it was made, else None (without making one)."""
        return self._value if self._pid == os.getpid() else None


TICK = 0.05  # how often the thread looks for `run_later` steps that are due


class _Runner:
    def __init__(self) -> None:
        self.queue: queue.Queue[Callable[[], None]] = queue.Queue()
        self.later: list[tuple[float, int, Callable[[], None]]] = []  # a heap by due time
        self.later_lock = threading.Lock()
        self.later_left = 0  # handed over and not yet run
        self._order = itertools.count()
        self.thread = threading.Thread(target=self._loop, name="after-commit", daemon=True)
        self.thread.start()

    def add_later(self, work: Callable[[], None], delay: float) -> None:
        with self.later_lock:
            heapq.heappush(self.later, (time.monotonic() + delay, next(self._order), work))
            self.later_left += 1

    def pending(self) -> bool:
        return bool(self.queue.unfinished_tasks or self.later_left)

    def _loop(self) -> None:
        while True:
            try:
                work = self.queue.get(timeout=TICK)
            except queue.Empty:
                pass
            else:
                _run(work)
                self.queue.task_done()
            while True:
                with self.later_lock:
                    if not self.later or self.later[0][0] > time.monotonic():
                        break
                    _, _, due = heapq.heappop(self.later)
                _run(due)
                with self.later_lock:
                    self.later_left -= 1


def _run_each(steps: tuple[Callable[[], None], ...]) -> None:
    for step in steps:
        _run(step)


def _run(work: Callable[[], None]) -> None:
    try:
        work()
    except Exception:  # noqa: BLE001 - each step handles its own failure; never stop the thread
        logger.exception("background step failed")


_runner = PerProcess(_Runner)


def run_soon(*steps: Callable[[], None]) -> None:
    """Run `steps` in order on this process's background thread, after what was handed over
    before them: one hand-off, and a step that fails does not stop the ones after it."""
    if len(steps) == 1:
        _runner.get().queue.put(steps[0])
    elif steps:
        _runner.get().queue.put(partial(_run_each, steps))


def run_later(work: Callable[[], None], delay: float) -> None:
    """Run `work` on this process's background thread once `delay` seconds have passed (up to
    `TICK` later), without waking the thread now."""
    _runner.get().add_later(work, delay)


def settle(timeout: float = 5.0) -> bool:
    """Wait until everything handed over so far is done, `run_later` steps included (shutdown,
    tests). False on timeout."""
    runner = _runner.made()
    if runner is None:
        return True
    deadline = time.monotonic() + timeout
    while runner.pending():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True
