"""A job's states and the one function that moves them (the table lists the legal moves)."""

from __future__ import annotations

import logging
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.sql import UpdateQuery
from django.utils import timezone

from evaluation.models import EvaluationJob, JobStatus
from interviewprep import metrics
from interviewprep.errors import IllegalTransition
from interviewprep.writes import Writes, Written

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


def _refuse_illegal(job_id: int, from_status: str, to: str) -> None:
    if job_move_is_legal(from_status, to):
        return
    metrics.incr("interviewprep_invalid_transitions_total", {"entity": "job", "from": from_status, "to": to})
    logger.warning(
        "illegal transition refused", extra={"entity": "job", "object_id": job_id, "from": from_status, "to": to}
    )
    raise IllegalTransition(
        f"job {job_id} cannot go from {from_status} to {to}",
        entity="job",
        object_id=job_id,
        from_status=from_status,
        to_status=to,
    )


def job_transition(job: EvaluationJob, to: str, **changes: Any) -> None:
    """Move a locked job row to `to`, with the other fields in `changes`, in one save.

    An illegal move is counted, logged and refused with IllegalTransition, which rolls the
    caller's transaction back."""
    _refuse_illegal(job.pk, job.status, to)
    job.status = to
    for field, value in changes.items():
        setattr(job, field, value)
    job.save(update_fields=["status", "updated_at", *changes])


def _swap(job_id: int, where: Q, from_statuses: tuple[str, ...], to: str) -> QuerySet:
    # Every move the statement admits must be legal: the row is never read before it is moved.
    for from_status in from_statuses:
        _refuse_illegal(job_id, from_status, to)
    return EvaluationJob.objects.filter(where, pk=job_id, status__in=from_statuses)


def job_transition_if(
    *,
    job_id: int,
    where: Q,
    from_statuses: tuple[str, ...],
    to: str,
    returning: tuple[str, ...] = (),
    returning_sql: tuple[str, ...] = (),
    **changes: Any,
) -> tuple | None:
    """Compare-and-swap: move the job to `to` only if its row, as the UPDATE finds it (locked,
    re-read after any concurrent write), is in `from_statuses` and matches `where`. One statement;
    the `returning` fields as the move left them, then the `returning_sql` expressions (constant
    SQL over the moved row), or None when the row did not qualify."""
    queryset = _swap(job_id, where, from_statuses, to)
    query = queryset.query.chain(UpdateQuery)
    query.add_update_values({"status": to, "updated_at": timezone.now(), **changes})
    statement, params = query.get_compiler(queryset.db).as_sql()
    # RETURNING is what QuerySet.update() cannot give: the claim learns the try's number here
    # rather than by reading the row first.
    columns = ", ".join(
        [connection.ops.quote_name(EvaluationJob._meta.get_field(f).column) for f in ("id", *returning)]
        + list(returning_sql)
    )
    with connection.cursor() as cursor:
        cursor.execute(f"{statement} RETURNING {columns}", params)
        row = cursor.fetchone()
    return None if row is None else tuple(row[1:])


def job_transition_queued(
    writes: Writes, *, job_id: int, where: Q, from_statuses: tuple[str, ...], to: str, **changes: Any
) -> Written:
    """The same compare-and-swap, joining the step's `writes`: its `count` (0 or 1) is the verdict
    once they are sent."""
    queryset = _swap(job_id, where, from_statuses, to)
    return writes.update(queryset, status=to, updated_at=timezone.now(), **changes)


def jobs_mark_published(job_ids: list[int]) -> None:
    """A pending job whose message reached the broker is queued (compare-and-swap: a job
    claimed meanwhile has moved on and is left alone)."""
    EvaluationJob.objects.filter(pk__in=job_ids, status=J.PENDING).update(status=J.QUEUED, updated_at=timezone.now())
