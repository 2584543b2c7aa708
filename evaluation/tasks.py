"""Celery tasks: thin wrappers that take ids and call one service each."""

import os

from celery import shared_task
from celery.signals import worker_init

from evaluation.jobs import job_run, jobs_sweep
from evaluation.sandbox import current_mode
from evaluation.sandbox.programs import languages_prepare


@shared_task(name="evaluation.tasks.run_job", bind=True)
def run_job(self, job_id: int) -> str:
    # The pid tells staff (and drills) which child of which worker ran a try.
    return job_run(job_id=job_id, worker=f"{self.request.hostname or 'unknown'}:{os.getpid()}")


@shared_task(name="evaluation.tasks.sweep_stale_jobs")
def sweep_stale_jobs() -> int:
    return jobs_sweep()


@worker_init.connect
def _probe_sandbox(**_kwargs) -> None:
    """Probe the code sandbox once in the worker's parent, so every prefork child inherits the
    answer and the first submission does not pay for it; the same for the languages' versions
    and what their compiles share (a C++ precompiled header)."""
    current_mode()
    languages_prepare()
