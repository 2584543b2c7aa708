"""Where a waiting job stands in its queue, and an estimate of its wait, for whoever shows a
waiting subject to a person. Read from the job table, so it holds over every worker and relay;
it is a moment's picture and must not be cached with the subject."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from evaluation.models import WAITING_JOB_STATUSES, EvaluationJob, JobStatus

WAITING = WAITING_JOB_STATUSES
# The estimate learns from the runs of the last few minutes only, and from at most this many.
RECENT = timedelta(minutes=5)
RECENT_RUNS = 50


@dataclass(frozen=True)
class QueuePosition:
    """`position` is 1 for the next job to run; either field is None when unknown."""

    position: int | None
    estimated_seconds: int | None


UNKNOWN = QueuePosition(None, None)


def job_queue_position(*, kind: str, subject_id: int) -> QueuePosition:
    """The newest waiting job of `kind` for `subject_id`: 1 + the jobs of that kind waiting
    that were made before it, and about how many seconds until its result.

    The estimate is the position over the rate at which the workers get through jobs now: as
    many jobs at once as are running, each as long as the recent single-try runs took on
    average (their `finished_at - started_at`). A rate taken as "jobs finished in the last
    minutes" would count idle minutes too, and tell a lone job at the head of an idle queue to
    wait a minute. None without a run in the last `RECENT`.

    The count of jobs ahead reads the partial index `job_waiting_kind` (waiting jobs only, by
    kind and id), so it costs about one index entry per job ahead, however many jobs have
    finished (a backlog of 10,000 is a few milliseconds); the running count reads the status
    indexes, and the estimate at most `RECENT_RUNS` recent rows backwards along the
    (status, updated_at) index.
    """
    waiting = EvaluationJob.objects.filter(kind=kind, status__in=WAITING)
    mine = waiting.filter(subject_id=subject_id).order_by("-id").values_list("id", flat=True).first()
    if mine is None:
        return UNKNOWN
    position = waiting.filter(id__lt=mine).count() + 1
    seconds = _recent_run_seconds(kind)
    if seconds is None:
        return QueuePosition(position, None)
    running = EvaluationJob.objects.filter(kind=kind, status=JobStatus.RUNNING).count()
    return QueuePosition(position, max(1, math.ceil(position * seconds / max(1, running))))


def _recent_run_seconds(kind: str) -> float | None:
    """The mean run time of the last single-try successes of `kind`, if any in `RECENT`."""
    since = timezone.now() - RECENT
    runs = (
        EvaluationJob.objects.filter(
            status=JobStatus.SUCCEEDED,
            updated_at__gte=since,  # a finished job's row is last written when it finishes
            kind=kind,
            tries=1,
            finished_at__gte=since,
            started_at__isnull=False,
        )
        .order_by("-updated_at")
        .values_list("started_at", "finished_at")[:RECENT_RUNS]
    )
    spans = [(finished - started).total_seconds() for started, finished in runs]
    return sum(spans) / len(spans) if spans else None
