"""Claiming a job for one run: a fresh lease token, decided on the locked rows."""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import BooleanField, ExpressionWrapper, F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from evaluation.jobs.outbox import outbox_add
from evaluation.jobs.outcomes import dead_letter, end_abandoned_tries, finish
from evaluation.jobs.registry import handler_for
from evaluation.jobs.transitions import job_transition_if
from evaluation.models import FINAL_JOB_STATUSES, EvaluationJob, JobStatus, JobTry, Outbox
from interviewprep.writes import Writes

logger = logging.getLogger(__name__)


def lease_timeout() -> float:
    """A running job whose heartbeat is older than this has lost its run (killed, paused)."""
    return max(2.0, settings.CONFIG.heartbeat_interval * 5)


@dataclass
class Claim:
    job_id: int
    kind: str
    subject_id: int
    token: uuid.UUID
    # The try's row; its id is set once the claim's writes are sent.
    job_try: JobTry
    tries: int
    lock_key: str
    created_at: Any
    # Another job of the same share (a user) was running when this was claimed: its heavy
    # processes yield the CPU to everyone else's (interviewprep.courtesy).
    courteous: bool = False
    # What its log lines name: the request, the try, and the ids the handler describes.
    log_ids: dict[str, Any] = field(default_factory=dict)
    # What the handler's `run` needs, read under the claim's locks.
    work: Any = None
    started: float = field(default_factory=time.monotonic)

    @property
    def try_id(self) -> int:
        return self.job_try.pk

    @property
    def actor(self) -> str:
        return f"job:{self.job_id}:try:{self.tries}"


def claimable(now) -> Q:
    """The one rule of which jobs a run may claim now: waiting ones, retries that are due, and
    running ones whose heartbeat stopped (a takeover)."""
    stale = now - timedelta(seconds=lease_timeout())
    return (
        Q(status__in=(JobStatus.PENDING, JobStatus.QUEUED))
        | Q(status=JobStatus.RETRYING) & (Q(next_retry_at__isnull=True) | Q(next_retry_at__lte=now))
        | Q(status=JobStatus.RUNNING) & (Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=stale))
    )


# In the claim's RETURNING, on the row it moved: is another job of its share running? The
# partial index job_share_in_flight answers it; a job without a share has none.
SHARE_BUSY_SQL = """EXISTS (
    SELECT 1 FROM evaluation_evaluationjob other
    WHERE other.share_key = evaluation_evaluationjob.share_key AND other.share_key <> ''
      AND other.status = 'running' AND other.id <> evaluation_evaluationjob.id
)"""

CLAIMED_FROM = (JobStatus.PENDING, JobStatus.QUEUED, JobStatus.RETRYING, JobStatus.RUNNING)


def job_claim(*, job_id: int, worker: str, kind: str | None = None, subject_id: int | None = None) -> Claim | None:
    """Claim the job for this run, or None when there is nothing to do now.

    One transaction: the handler locks the subject, then one compare-and-swap moves the job to
    running with a fresh lease token if `claimable` and tries are left (the UPDATE locks the row
    and re-checks its WHERE on the latest version, so the decision is made on the locked row);
    the subject moves to processing. Only when the swap finds nothing is the row read, to learn
    why. `kind` and `subject_id` come with the message; an older message without them costs
    one read.
    """
    if kind is None or subject_id is None:
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
        token = uuid.uuid4()
        moved = None
        if handler.discard_reason(subject) is None:
            moved = job_transition_if(
                job_id=job_id,
                # The message's kind and subject must be the row's: the subject locked is the job's.
                where=claimable(now) & Q(kind=kind, subject_id=subject_id, tries__lt=F("max_tries")),
                from_statuses=CLAIMED_FROM,
                to=JobStatus.RUNNING,
                returning=("tries", "created_at", "request_id"),
                returning_sql=(SHARE_BUSY_SQL,),
                tries=F("tries") + 1,
                lease_token=token,
                heartbeat_at=now,
                next_retry_at=None,
                started_at=Coalesce(F("started_at"), Value(now)),
            )
        if moved is None:
            _not_claimed(job_id, subject, now)
            return None
        tries, created_at, request_id, courteous = moved
        # The rest of the claim's writes go as one statement.
        writes = Writes()
        if tries > 1:
            # A takeover: the silent run's try is over, and it counted. (A first try has none.)
            end_abandoned_tries(job_id, "heartbeat stopped (worker died or hung)", writes=writes)
        claim = Claim(
            job_id=job_id,
            kind=kind,
            subject_id=subject_id,
            token=token,
            job_try=JobTry(
                job_id=job_id,
                number=tries,
                lease_token=token,
                worker=worker[:200],
                request_id=request_id,
                started_at=now,
            ),
            tries=tries,
            lock_key=handler.lock_key(subject),
            created_at=created_at,
            courteous=courteous,
            log_ids={"request_id": request_id, "job_id": job_id, "try": tries, **handler.describe(subject)},
        )
        writes.insert([claim.job_try])
        claim.work = handler.start(subject, actor=claim.actor, try_number=claim.tries, writes=writes)
        writes.flush()
    return claim


def _not_claimed(job_id: int, subject: Any, now) -> None:
    """The swap found nothing to claim: read the locked row (with the same rule's verdict) to
    learn why, and act on it: a live run to look at later, a discard, or no tries left."""
    job = (
        EvaluationJob.objects.select_for_update()
        .annotate(is_claimable=ExpressionWrapper(claimable(now), output_field=BooleanField()))
        .filter(pk=job_id)
        .first()
    )
    if job is None or job.status in FINAL_JOB_STATUSES:
        return
    if not job.is_claimable:
        if job.status == JobStatus.RUNNING:
            _recheck_later(job)
        return
    if job.status == JobStatus.RUNNING:
        end_abandoned_tries(job.pk, "heartbeat stopped (worker died or hung)")
    handler = handler_for(job.kind)
    reason = handler.discard_reason(subject)
    if reason:
        finish(job, JobStatus.DISCARDED, reason=reason)
        return
    if job.tries >= job.max_tries:
        dead_letter(
            job,
            subject,
            error=f"gave up after {job.tries} tries; the last one never finished "
            f"(its worker died or was killed). Last error: {job.last_error or 'none'}",
            error_class="WorkerLost",
        )
        return
    # Claimable, not discarded, tries left, yet the swap missed: the message named another
    # kind or subject than the row. Nothing to do for it.
    logger.warning("job message does not match its row", extra={"job_id": job.pk})


def _recheck_later(job: EvaluationJob) -> None:
    """A delivery found its job running with a live heartbeat: the run is alive, or its worker
    was just killed and the message came back. Look again once the lease would have run out,
    unless a message for that is already waiting."""
    if Outbox.objects.filter(job=job, published_at__isnull=True).exists():
        return
    outbox_add(job=job, available_at=job.heartbeat_at + timedelta(seconds=lease_timeout() + 0.5))
