"""The one idiom for per-process state (the ticker thread, the runs it beats for, owed cache floors)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

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
