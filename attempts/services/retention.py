"""The candidate side's retention (docs/operations.md, "Housekeeping"): finished runs and old
state changes, deleted by beat tasks through the one purge helper.

What stays whatever its age: an attempt's latest run (its panel may show it again), a run whose
job is unfinished or has a dead letter (the console replays through the run), and everything a
candidate's history reads (attempts, submissions, results: never purged).
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Exists, OuterRef
from django.utils import timezone

from attempts.models import Run, RunStatus, StateChange
from attempts.services.runs import RUN
from evaluation.jobs import job_subjects_held, jobs_of_subjects_delete
from interviewprep.purge import purge_in_batches


def runs_purge(*, now=None) -> int:
    """Delete the runs finished before RUN_RETENTION_DAYS, with their jobs and state changes;
    the count of runs deleted."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.CONFIG.run_retention_days)
    newer = Run.objects.filter(attempt_id=OuterRef("attempt_id"), pk__gt=OuterRef("pk"))
    old = (
        Run.objects.filter(status__in=(RunStatus.COMPLETED, RunStatus.FAILED), finished_at__lt=cutoff)
        .filter(Exists(newer))
        .exclude(pk__in=job_subjects_held(kind=RUN))
    )
    return purge_in_batches(old, delete=_runs_delete)


def _runs_delete(ids: list[int]) -> int:
    # Locked and checked in this batch's transaction: the run, its record and its jobs go together,
    # so the invariant "every run has its job" never sees a run without one.
    jobs_of_subjects_delete(kind=RUN, subject_ids=ids)
    StateChange.objects.filter(entity="run", object_id__in=ids).delete()
    return Run.objects.filter(pk__in=ids).delete()[1].get(Run._meta.label, 0)


def state_changes_purge(*, now=None) -> int:
    """Delete the state changes recorded before STATE_CHANGE_RETENTION_DAYS; the count deleted.
    Only the staff timeline reads them; what a candidate sees is on the rows themselves."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.CONFIG.state_change_retention_days)
    return purge_in_batches(StateChange.objects.filter(created_at__lt=cutoff))
