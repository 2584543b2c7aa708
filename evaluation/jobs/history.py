"""Reads of what jobs did, for staff: each job of some subjects, with its tries."""

from __future__ import annotations

from collections.abc import Iterable
from functools import reduce
from operator import or_

from django.db.models import Count, Prefetch, Q

from evaluation.models import EvaluationJob, JobStatus, JobTry


def jobs_of_subjects(subjects: Iterable[tuple[str, Iterable[int]]]) -> list[EvaluationJob]:
    """The jobs of each (kind, subject ids), oldest first, their tries (`job_tries`) fetched in
    one more read."""
    wanted = [Q(kind=kind, subject_id__in=ids) for kind, ids in ((kind, list(ids)) for kind, ids in subjects) if ids]
    if not wanted:
        return []
    tries = JobTry.objects.only(
        "job_id", "number", "worker", "request_id", "started_at", "finished_at", "duration_ms", "outcome", "error"
    ).order_by("number")
    return list(
        EvaluationJob.objects.filter(reduce(or_, wanted))
        .only("kind", "subject_id", "status", "request_id", "correlation_id", "created_at", "finished_at")
        .prefetch_related(Prefetch("job_tries", queryset=tries))
        .order_by("id")
    )


def jobs_status_counts(*, kind: str, subject_ids: Iterable[int]) -> dict[str, int]:
    """How many jobs of `kind` for these subjects are in each status (every status named)."""
    counts = dict(
        EvaluationJob.objects.filter(kind=kind, subject_id__in=list(subject_ids))
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    return {status: counts.get(status, 0) for status in JobStatus.values}
