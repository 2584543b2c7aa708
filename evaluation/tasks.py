"""Celery tasks: thin wrappers that take ids and call one service each."""

import logging
import os

from celery import bootsteps, shared_task
from celery.signals import task_received, worker_init
from celery.worker import state
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from evaluation.jobs import job_run, job_tries_purge, outbox_purge
from evaluation.jobs.liveness import worker_beat_forget, worker_beat_record
from evaluation.ops_samples import ops_sample_take
from evaluation.sandbox import current_mode
from evaluation.sandbox.programs import languages_prepare
from interviewprep.celery import app
from interviewprep.logging import log_context


@shared_task(name="evaluation.tasks.run_job", bind=True)
def run_job(self, job_id: int, kind: str | None = None, subject_id: int | None = None) -> str:
    # The pid tells staff (and drills) which child of which worker ran a try. Messages published
    # before kind and subject_id were sent carry the id alone.
    worker = f"{self.request.hostname or 'unknown'}:{os.getpid()}"
    with log_context(job_id=job_id):
        return job_run(job_id=job_id, worker=worker, kind=kind, subject_id=subject_id)


@shared_task(name="evaluation.tasks.take_ops_sample")
def take_ops_sample() -> int:
    return ops_sample_take().pk


@shared_task(name="evaluation.tasks.purge_job_tries")
def purge_job_tries() -> int:
    return job_tries_purge()


@shared_task(name="evaluation.tasks.purge_outbox")
def purge_outbox() -> int:
    return outbox_purge()


logger = logging.getLogger(__name__)


@worker_init.connect
def _probe_sandbox(**_kwargs) -> None:
    """Probe the code sandbox once in the worker's parent, so every prefork child inherits the
    answer and the first submission does not pay for it; the same for the languages' versions
    and what their compiles share (a C++ precompiled header)."""
    current_mode()
    languages_prepare()


class WorkerLiveness(bootsteps.StartStopStep):
    """The worker's liveness row, written from its consumer's event loop every heartbeat
    interval (evaluation/jobs/liveness.py): a loop that stops turning stops writing it too."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, parent, **kwargs):
        super().__init__(parent, **kwargs)
        self.timer_entry = None
        self.name = ""
        self.room_since = None
        self.took_job_at = None

    def start(self, parent) -> None:
        self.name = f"{parent.hostname}:{os.getpid()}"
        self.took_job_at = timezone.now()
        task_received.connect(self._took_job, weak=False)
        self.timer_entry = parent.timer.call_repeatedly(settings.CONFIG.heartbeat_interval, self.beat, (parent,))
        self.beat(parent)

    def _took_job(self, **_kwargs) -> None:
        self.took_job_at = timezone.now()

    def beat(self, parent) -> None:
        if len(state.reserved_requests) < parent.controller.concurrency:
            self.room_since = self.room_since or timezone.now()
        else:
            self.room_since = None
        queues = sorted(queue.name for queue in parent.task_consumer.queues) if parent.task_consumer else []
        try:
            close_old_connections()
            worker_beat_record(name=self.name, queues=queues, room_since=self.room_since, took_job_at=self.took_job_at)
        except Exception as exc:  # noqa: BLE001 - a missed beat is the signal, never a worker's failure
            logger.warning("worker beat not written", extra={"error": f"{type(exc).__name__}: {exc}"})

    def stop(self, parent) -> None:
        if self.timer_entry is not None:
            self.timer_entry.cancel()
            self.timer_entry = None
        task_received.disconnect(self._took_job)

    def shutdown(self, parent) -> None:
        try:
            worker_beat_forget(name=self.name)
        except Exception:  # noqa: BLE001 - a row left behind is forgotten by the sweeper
            logger.warning("worker beat not removed", exc_info=True)


app.steps["consumer"].add(WorkerLiveness)
