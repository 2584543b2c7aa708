"""Keeps a run's lease and lock alive while its work goes on, and notices a lost lease.

One callback on the process's ticker (`interviewprep/ticker.py`) beats for every run in it (a
Celery child runs one at a time, a test process may run several), registered while a run goes
on: a process running nothing beats nothing. Per process through PerProcess, so a forked child
has its own.
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import connection
from django.utils import timezone

from evaluation.jobs.locks import SubjectLock
from evaluation.models import EvaluationJob, JobStatus
from interviewprep.per_process import PerProcess
from interviewprep.ticker import ticker

logger = logging.getLogger(__name__)


class Heartbeat:
    def __init__(self, *, job_id: int, token, lock: SubjectLock):
        self.job_id = job_id
        self.token = token
        self.lock = lock
        self.lost = False

    def __enter__(self) -> Heartbeat:
        _beater.get().add(self)
        return self

    def __exit__(self, *exc) -> None:
        _beater.get().discard(self)

    def beat(self) -> None:
        alive = EvaluationJob.objects.filter(pk=self.job_id, lease_token=self.token, status=JobStatus.RUNNING).update(
            heartbeat_at=timezone.now()
        )
        if not alive:
            self.lost = True
            return
        self.lock.extend()


class _Beater:
    def __init__(self) -> None:
        self.runs: set[Heartbeat] = set()
        self._guard = threading.Lock()

    def add(self, beat: Heartbeat) -> None:
        with self._guard:
            self.runs.add(beat)
            ticker().start(_BEATS, self._beat_all, every=settings.CONFIG.heartbeat_interval)

    def discard(self, beat: Heartbeat) -> None:
        with self._guard:
            self.runs.discard(beat)
            if not self.runs:
                # The ticker's thread ends with its last callback and gives its connection back.
                ticker().stop(_BEATS)

    def _beat_all(self) -> None:
        with self._guard:
            runs = [beat for beat in self.runs if not beat.lost]
        for beat in runs:
            try:
                beat.beat()
            except Exception:  # noqa: BLE001 - a failed beat only risks the lease, never the result
                logger.exception("heartbeat failed", extra={"job_id": beat.job_id})
                connection.close()


_BEATS = "heartbeat"
_beater = PerProcess(_Beater)
