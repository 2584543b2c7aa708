"""What the job machinery keeps and for how long (docs/operations.md, "Housekeeping").

A job's outbox rows are kept OUTBOX_RETENTION_DAYS after they were published, once the job has
finished: the relay and the sweeper only read a live job's rows. A job's tries are kept
JOB_TRY_RETENTION_DAYS, and then only once the job has finished and no
dead letter of its waits for a replay: a live job's retry and dead letter read its tries, and
the console shows a waiting letter's job whole. Jobs themselves go only with their subject
(`jobs_of_subjects_delete`, called by the app that deletes it): an app's invariants may ask
that each of its subjects has its job.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from evaluation.models import FINAL_JOB_STATUSES, DeadLetter, EvaluationJob, JobTry, Outbox
from interviewprep.purge import purge_in_batches


def job_tries_purge(*, now=None) -> int:
    """Delete the tries of finished jobs started before the retention; the count deleted."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.CONFIG.job_try_retention_days)
    waiting_letter = DeadLetter.objects.filter(job_id=OuterRef("job_id"), replayed_at__isnull=True)
    old = (
        JobTry.objects.filter(started_at__lt=cutoff, job__status__in=FINAL_JOB_STATUSES)
        .exclude(outcome=JobTry.Outcome.RUNNING)
        .exclude(Exists(waiting_letter))
    )
    return purge_in_batches(old)


def outbox_purge(*, now=None) -> int:
    """Delete the outbox rows of finished jobs published before the retention; the count deleted."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.CONFIG.outbox_retention_days)
    return purge_in_batches(Outbox.objects.filter(published_at__lt=cutoff, job__status__in=FINAL_JOB_STATUSES))


def job_subjects_held(*, kind: str) -> QuerySet:
    """The subject ids of `kind` whose jobs the machinery still needs, as a subquery: a job
    not finished yet, or one with a dead letter (the console's record, and an audit's)."""
    held = EvaluationJob.objects.filter(kind=kind).filter(
        ~Q(status__in=FINAL_JOB_STATUSES) | Q(Exists(DeadLetter.objects.filter(job_id=OuterRef("pk"))))
    )
    return held.values("subject_id")


def jobs_of_subjects_delete(*, kind: str, subject_ids: list[int]) -> int:
    """Inside the caller's transaction, its subjects locked and none of them held: their jobs,
    tries and outbox rows go with them. The count of jobs deleted."""
    jobs = EvaluationJob.objects.filter(kind=kind, subject_id__in=subject_ids, status__in=FINAL_JOB_STATUSES)
    return jobs.delete()[1].get(EvaluationJob._meta.label, 0)
