"""A thread per process for the Redis writes that follow a job's commit, and `PerProcess`,
which the project's per-process threads are made with.

A worker child is busy until its task returns, so every round trip left in a job delays the
next one. What only has to happen soon after a commit (the cache copy, the claim's cache floor,
releasing the per-attempt lock) is handed to this thread in order; measured, that took three
of five Redis round trips off each instant job. A process that dies first loses them: that costs
a cache miss, and a lock that expires by its TTL, never a wrong answer.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable
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


class _Runner:
    def __init__(self) -> None:
        self.queue: queue.Queue[Callable[[], None]] = queue.Queue()
        self.thread = threading.Thread(target=self._loop, name="after-commit", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            work = self.queue.get()
            try:
                work()
            except Exception:  # noqa: BLE001 - each step handles its own failure; never stop the thread
                logger.exception("background step failed")
            finally:
                self.queue.task_done()


_runner = PerProcess(_Runner)


def run_soon(work: Callable[[], None]) -> None:
    """Run `work` on this process's background thread, after what was handed over before it."""
    _runner.get().queue.put(work)


def settle(timeout: float = 5.0) -> bool:
    """Wait until everything handed over so far is done (shutdown, tests). False on timeout."""
    runner = _runner.made()
    if runner is None:
        return True
    deadline = time.monotonic() + timeout
    while runner.queue.unfinished_tasks:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True
