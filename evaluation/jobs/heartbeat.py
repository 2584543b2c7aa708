"""Keeps a run's lease and lock alive while its work goes on, and notices a lost lease.

One beating thread per process serves every run in it (a Celery child runs one at a time, a
test process may run several): made on first use with PerProcess, so a forked child makes its
own.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.db import connection
from django.utils import timezone

from evaluation.jobs.locks import SubjectLock
from evaluation.models import EvaluationJob, JobStatus
from interviewprep.per_process import PerProcess

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
        threading.Thread(target=self._loop, name="heartbeat", daemon=True).start()

    def add(self, beat: Heartbeat) -> None:
        with self._guard:
            self.runs.add(beat)

    def discard(self, beat: Heartbeat) -> None:
        with self._guard:
            self.runs.discard(beat)

    def _loop(self) -> None:
        interval = settings.CONFIG.heartbeat_interval
        while True:
            time.sleep(interval)
            with self._guard:
                runs = [beat for beat in self.runs if not beat.lost]
            if not runs:
                # Nothing running: give the connection back rather than hold it idle.
                connection.close()
                continue
            for beat in runs:
                try:
                    beat.beat()
                except Exception:  # noqa: BLE001 - a failed beat only risks the lease, never the result
                    logger.exception("heartbeat failed", extra={"job_id": beat.job_id})
                    connection.close()


_beater = PerProcess(_Beater)
