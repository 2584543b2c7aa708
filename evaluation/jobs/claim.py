"""Claiming a job for one run: a fresh lease token, decided on the locked rows."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from evaluation.jobs.outbox import outbox_add
from evaluation.jobs.outcomes import dead_letter, end_abandoned_tries, finish
from evaluation.jobs.registry import handler_for
from evaluation.jobs.transitions import job_transition
from evaluation.models import FINAL_JOB_STATUSES, EvaluationJob, JobStatus, JobTry, Outbox


def lease_timeout() -> float:
    """A running job whose heartbeat is older than this has lost its run (killed, paused)."""
    return max(2.0, settings.CONFIG.heartbeat_interval * 5)


@dataclass
class Claim:
    job_id: int
    kind: str
    subject_id: int
    token: uuid.UUID
    try_id: int
    tries: int
    lock_key: str
    created_at: Any
    # What the handler's `run` needs, read under the claim's locks.
    work: Any = None
    started: float = field(default_factory=time.monotonic)

    @property
    def actor(self) -> str:
        return f"job:{self.job_id}:try:{self.tries}"


def _is_claimable(job: EvaluationJob, now) -> bool:
    if job.status in (JobStatus.PENDING, JobStatus.QUEUED):
        return True
    if job.status == JobStatus.RETRYING:
        return job.next_retry_at is None or job.next_retry_at <= now
    if job.status == JobStatus.RUNNING:
        return job.heartbeat_at is None or job.heartbeat_at < now - timedelta(seconds=lease_timeout())
    return False


def job_claim(*, job_id: int, worker: str) -> Claim | None:
    """Claim the job for this run, or None when there is nothing to do now.

    One transaction: the handler locks the subject, then the job's row is locked; the decision
    is made on the locked rows; the run gets a fresh lease token and the subject moves to
    processing.
    """
    found = EvaluationJob.objects.filter(pk=job_id).values_list("kind", "subject_id").first()
    if found is None:
        return None
    kind, subject_id = found
    handler = handler_for(kind)
    now = timezone.now()
    with transaction.atomic():
        # A claim lost in a database crash is harmless (the job is claimable again and the
        # run's outcome is refused by the fence), so it need not wait for the disk.
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
        subject = handler.lock(subject_id)
        job = EvaluationJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status in FINAL_JOB_STATUSES:
            return None
        if not _is_claimable(job, now):
            if job.status == JobStatus.RUNNING:
                _recheck_later(job)
            return None
        if job.status == JobStatus.RUNNING:
            end_abandoned_tries(job, "heartbeat stopped (worker died or hung)")
        reason = handler.discard_reason(subject)
        if reason:
            finish(job, JobStatus.DISCARDED, reason=reason)
            return None
        if job.tries >= job.max_tries:
            dead_letter(
                job,
                subject,
                error=f"gave up after {job.tries} tries; the last one never finished "
                f"(its worker died or was killed). Last error: {job.last_error or 'none'}",
            )
            return None
        token = uuid.uuid4()
        job_transition(
            job,
            JobStatus.RUNNING,
            tries=job.tries + 1,
            lease_token=token,
            heartbeat_at=now,
            next_retry_at=None,
            started_at=job.started_at or now,
        )
        job_try = JobTry.objects.create(
            job=job, number=job.tries, lease_token=token, worker=worker[:200], started_at=now
        )
        claim = Claim(
            job_id=job.pk,
            kind=kind,
            subject_id=subject_id,
            token=token,
            try_id=job_try.pk,
            tries=job.tries,
            lock_key=handler.lock_key(subject),
            created_at=job.created_at,
        )
        claim.work = handler.start(subject, actor=claim.actor, try_number=claim.tries)
    return claim


def _recheck_later(job: EvaluationJob) -> None:
    """A delivery found its job running with a live heartbeat: the run is alive, or its worker
    was just killed and the message came back. Look again once the lease would have run out,
    unless a message for that is already waiting."""
    if Outbox.objects.filter(job=job, published_at__isnull=True).exists():
        return
    outbox_add(job=job, available_at=job.heartbeat_at + timedelta(seconds=lease_timeout() + 0.5))
