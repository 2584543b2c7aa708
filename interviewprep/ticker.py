"""The one background thread a process may have: it calls the callbacks registered with it.

    ticker().start("heartbeat", beat_all, every=5.0)   # idempotent while started
    ticker().stop("heartbeat")

Work that must happen without a request or a task to carry it (a run's heartbeat, a cache floor
owed after a Redis failure) registers a callback while it has something to do and stops it when
it is done. The thread starts with the first callback and ends when the last one stops, so a
process with nothing to do has no thread; it gives its database connections back as it ends.

One thread per process, made through PerProcess: a forked child (gunicorn, Celery prefork)
makes its own, since the parent's threads do not survive a fork. Callbacks run one after
another on that thread: each must be short, bounded by its own timeouts, and must not raise
(an error is logged and the callback stays registered).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connections

from interviewprep.per_process import PerProcess

logger = logging.getLogger(__name__)


@dataclass
class _Callback:
    call: Callable[[], None]
    every: float
    due: float


class Ticker:
    def __init__(self) -> None:
        self._callbacks: dict[str, _Callback] = {}
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def start(self, name: str, call: Callable[[], None], *, every: float) -> None:
        """Call `call()` every `every` seconds, the first time `every` seconds from now, until
        `stop(name)`. A name already started keeps its callback and schedule."""
        with self._changed:
            if name in self._callbacks:
                return
            self._callbacks[name] = _Callback(call, every, time.monotonic() + every)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="ticker", daemon=True)
                self._thread.start()
            self._changed.notify()

    def stop(self, name: str) -> None:
        """No more calls of `name` after one that may be under way."""
        with self._changed:
            self._callbacks.pop(name, None)
            self._changed.notify()

    def running(self) -> bool:
        """Whether this process has a ticker thread now (for operators and tests)."""
        with self._changed:
            return self._thread is not None

    def _loop(self) -> None:
        try:
            while due := self._next_due():
                for name, callback in due:
                    if not self._started(name, callback):
                        continue
                    try:
                        callback.call()
                    except Exception:  # noqa: BLE001 - one failing callback must not stop the others
                        logger.exception("ticker callback failed", extra={"callback": name})
        finally:
            connections.close_all()  # this thread's own, opened by its callbacks

    def _started(self, name: str, callback: _Callback) -> bool:
        with self._changed:
            return self._callbacks.get(name) is callback

    def _next_due(self) -> list[tuple[str, _Callback]]:
        """Wait for the next callbacks due; an empty list when none is left (the thread ends)."""
        with self._changed:
            while self._callbacks:
                now = time.monotonic()
                due = [(name, cb) for name, cb in self._callbacks.items() if cb.due <= now]
                if due:
                    for _, callback in due:
                        callback.due = now + callback.every
                    return due
                self._changed.wait(min(cb.due for cb in self._callbacks.values()) - now)
            self._thread = None
            return []


_ticker = PerProcess(Ticker)


def ticker() -> Ticker:
    """This process's ticker (a forked child makes its own)."""
    return _ticker.get()
