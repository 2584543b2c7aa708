"""Celery tasks: thin wrappers that take ids and call one service each."""

import os

from celery import shared_task

from evaluation.services.jobs import evaluation_job_run, jobs_sweep


@shared_task(name="evaluation.tasks.run_evaluate_job", bind=True)
def run_evaluate_job(self, job_id: int) -> str:
    return evaluation_job_run(job_id=job_id, worker=_worker_name(self))


@shared_task(name="evaluation.tasks.run_generate_job", bind=True)
def run_generate_job(self, job_id: int) -> str:
    return evaluation_job_run(job_id=job_id, worker=_worker_name(self))


@shared_task(name="evaluation.tasks.sweep_stale_jobs")
def sweep_stale_jobs() -> int:
    return jobs_sweep()


def _worker_name(task) -> str:
    # The pid tells staff (and drills) which child of which worker ran a try.
    return f"{task.request.hostname or 'unknown'}:{os.getpid()}"
