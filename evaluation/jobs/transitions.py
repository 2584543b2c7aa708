"""A job's states and the one function that moves them (the table lists the legal moves)."""

from __future__ import annotations

import logging
from typing import Any

from django.utils import timezone

from evaluation.models import EvaluationJob, JobStatus
from interviewprep import metrics
from interviewprep.errors import IllegalTransition

logger = logging.getLogger(__name__)

J = JobStatus

# RUNNING -> RUNNING is a takeover: a new run claims a job whose last run went silent.
# Any unfinished state -> QUEUED is the sweeper sending a stuck job again.
JOB_MOVES: dict[str, set[str]] = {
    J.PENDING: {J.QUEUED, J.RUNNING, J.DISCARDED, J.DEAD},
    J.QUEUED: {J.QUEUED, J.RUNNING, J.DISCARDED, J.DEAD},
    J.RUNNING: {J.RUNNING, J.QUEUED, J.RETRYING, J.SUCCEEDED, J.DISCARDED, J.DEAD},
    J.RETRYING: {J.RUNNING, J.QUEUED, J.DISCARDED, J.DEAD},
    J.SUCCEEDED: set(),
    J.DEAD: set(),
    J.DISCARDED: set(),
}


def job_move_is_legal(from_status: str, to_status: str) -> bool:
    return to_status in JOB_MOVES.get(from_status, set())


def job_transition(job: EvaluationJob, to: str, **changes: Any) -> None:
    """Move a locked job row to `to`, with the other fields in `changes`, in one save.

    An illegal move is counted, logged and refused with IllegalTransition, which rolls the
    caller's transaction back."""
    if not job_move_is_legal(job.status, to):
        metrics.incr("interviewprep_invalid_transitions_total", {"entity": "job", "from": job.status, "to": to})
        logger.warning(
            "illegal transition refused", extra={"entity": "job", "object_id": job.pk, "from": job.status, "to": to}
        )
        raise IllegalTransition(
            f"job {job.pk} cannot go from {job.status} to {to}",
            entity="job",
            object_id=job.pk,
            from_status=job.status,
            to_status=to,
        )
    job.status = to
    for field, value in changes.items():
        setattr(job, field, value)
    job.save(update_fields=["status", "updated_at", *changes])


def jobs_mark_published(job_ids: list[int]) -> None:
    """A pending job whose message reached the broker is queued (compare-and-swap: a job
    claimed meanwhile has moved on and is left alone)."""
    EvaluationJob.objects.filter(pk__in=job_ids, status=J.PENDING).update(status=J.QUEUED, updated_at=timezone.now())
