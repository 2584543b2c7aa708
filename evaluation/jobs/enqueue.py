"""Making a job: the one call other apps make, inside their own transaction."""

from __future__ import annotations

from django.conf import settings

from evaluation.jobs.outbox import outbox_add
from evaluation.jobs.queue import WAITING
from evaluation.models import DeadLetter, EvaluationJob, JobStatus
from interviewprep.logging import current_request_id


def job_enqueue(
    *,
    kind: str,
    subject_id: int,
    share_key: str = "",
    correlation_id: str = "",
    replay_of: DeadLetter | None = None,
) -> EvaluationJob:
    """A job and its outbox row, in the caller's transaction; the message goes out after commit.
    The job keeps the id of the request being served (or the job being run) that made it.
    `share_key` names whose work it is: the relay keeps at most JOBS_IN_FLIGHT_PER_USER jobs of
    one share and kind in flight (outbox.py); blank is work no one waits on, never held."""
    job = EvaluationJob.objects.create(
        kind=kind,
        subject_id=subject_id,
        share_key=share_key,
        status=JobStatus.PENDING,
        max_tries=settings.CONFIG.job_max_tries,
        correlation_id=correlation_id[:64],
        request_id=current_request_id(),
        replay_of=replay_of,
    )
    outbox_add(job=job)
    return job


def jobs_waiting(*, kind: str) -> int:
    """Jobs of `kind` waiting to run, published or not: the queue's depth as PostgreSQL knows it."""
    return EvaluationJob.objects.filter(kind=kind, status__in=WAITING).count()
