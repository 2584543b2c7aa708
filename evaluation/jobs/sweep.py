"""The sweeper (stuck jobs sent again) and the replay of dead letters."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from evaluation.jobs.enqueue import job_enqueue
from evaluation.jobs.liveness import beats_forget_gone, sweeper_beat_record
from evaluation.jobs.outbox import outbox_add
from evaluation.jobs.outcomes import end_abandoned_tries
from evaluation.jobs.registry import handler_for
from evaluation.jobs.transitions import job_transition
from evaluation.models import DeadLetter, EvaluationJob, JobStatus
from interviewprep import metrics

logger = logging.getLogger(__name__)


def sweep_one_stale_job(*, now=None) -> int | None:
    """Send one stuck job through the normal path again; None when there is none.

    One row at a time under SKIP LOCKED, and the row no longer qualifies once swept, so two
    sweepers at the same moment re-send each job exactly once.
    """
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.CONFIG.stale_job_after)
    with transaction.atomic():
        job = (
            EvaluationJob.objects.select_for_update(skip_locked=True)
            .filter(
                Q(status=JobStatus.RUNNING, heartbeat_at__lt=stale)
                | Q(status=JobStatus.QUEUED, updated_at__lt=stale)
                | Q(status=JobStatus.RETRYING, next_retry_at__lt=stale)
            )
            .order_by("id")
            .first()
        )
        if job is None:
            return None
        if job.status == JobStatus.RUNNING:
            end_abandoned_tries(job, "found stale by the sweeper")
        job_transition(job, JobStatus.QUEUED, lease_token=None, next_retry_at=None)
        outbox_add(job=job)
    logger.warning("stale job sent again", extra={"job_id": job.pk})
    return job.pk


def jobs_sweep(*, limit: int = 10_000) -> int:
    """One pass of the sweeper: every stuck job sent again, then the pass recorded (read by
    /healthz and /metrics, so a sweeper that stopped shows)."""
    swept = 0
    while swept < limit and sweep_one_stale_job() is not None:
        swept += 1
    if swept:
        metrics.incr("interviewprep_jobs_swept_total", amount=swept)
    beats_forget_gone()
    sweeper_beat_record()
    return swept


@dataclass(frozen=True)
class ReplayResult:
    dead_letter_id: int
    job_id: int | None
    replayed: bool
    detail: str


def dead_letter_replay(*, dead_letter_id: int, user) -> ReplayResult:
    """Send a dead-lettered job through the normal path again, once: a second replay of the
    same dead letter answers with the job the first one made."""
    with transaction.atomic():
        letter = DeadLetter.objects.select_for_update().get(pk=dead_letter_id)
        if letter.replayed_at is not None:
            existing = EvaluationJob.objects.filter(replay_of=letter).values_list("pk", flat=True).first()
            return ReplayResult(letter.pk, existing, False, "already replayed")
        old = EvaluationJob.objects.get(pk=letter.job_id)
        handler = handler_for(letter.kind)
        actor = f"staff:{user.pk}" if user is not None else "staff"
        handler.requeue(handler.lock(letter.subject_id), actor=actor, reason=f"replay of dead letter {letter.pk}")
        job = job_enqueue(
            kind=letter.kind, subject_id=letter.subject_id, correlation_id=old.correlation_id, replay_of=letter
        )
        letter.replayed_at = timezone.now()
        letter.replayed_by = user
        letter.save(update_fields=["replayed_at", "replayed_by"])
    return ReplayResult(letter.pk, job.pk, True, "replayed")


def dead_letter_list():
    return DeadLetter.objects.order_by("-created_at", "-id")
