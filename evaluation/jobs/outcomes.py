"""How a try ends: the outcome written under the fence, a retry, a dead letter.

The fence: every outcome is written in one transaction that takes the subject's locks (through
its handler), then the job's, and checks that the lease token is still the run's own (`_held`);
a run that lost its lease changes nothing. Every path takes the subject's locks before the
job's, so no two of them deadlock. A success moves the job with one compare-and-swap on `_held`,
sent in the transaction's last statement with the handler's writes: its row count is the
fence, and a miss rolls back what the handler wrote.
"""

from __future__ import annotations

import logging
import random
import re
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from evaluation.jobs.outbox import outbox_add
from evaluation.jobs.registry import handler_for
from evaluation.jobs.transitions import job_transition, job_transition_queued
from evaluation.models import DeadLetter, EvaluationJob, JobStatus, JobTry
from interviewprep import metrics
from interviewprep.writes import Writes, writes_into

if TYPE_CHECKING:
    from evaluation.jobs.claim import Claim

logger = logging.getLogger(__name__)

Outcome = JobTry.Outcome


def end_try(claim: Claim, outcome: str, error: str = "", *, writes: Writes | None = None) -> None:
    with writes_into(writes) as step:
        step.update(
            JobTry.objects.filter(pk=claim.try_id),
            outcome=outcome,
            finished_at=timezone.now(),
            duration_ms=round((time.monotonic() - claim.started) * 1000, 2),
            error=error[:4000],
        )


def end_abandoned_tries(job: EvaluationJob | int, error: str, *, writes: Writes | None = None) -> None:
    """A run that went silent (killed, paused): its try is over, and it counted."""
    with writes_into(writes) as step:
        step.update(
            JobTry.objects.filter(job=job, outcome=Outcome.RUNNING),
            outcome=Outcome.ABANDONED,
            finished_at=timezone.now(),
            error=error,
        )


def _finished(kind: str, status: str, created_at, reason: str) -> dict[str, Any]:
    """The fields a finished job gets, and its count once the finish commits."""
    now = timezone.now()
    latency = (now - created_at).total_seconds()
    transaction.on_commit(lambda: _count_finished(kind, status, latency))
    return {"lease_token": None, "finished_at": now, "discard_reason": reason[:200]}


def finish(job: EvaluationJob, status: str, *, reason: str = "", **changes: Any) -> None:
    """A locked job row finishes."""
    job_transition(job, status, **_finished(job.kind, status, job.created_at, reason), **changes)


class _LeaseLost(Exception):
    """Raised inside the outcome's transaction to roll back what the handler wrote."""


def _finish_fenced(claim: Claim, status: str, writes: Writes, *, reason: str = "") -> None:
    """The run's job finishes, sent with the step's other `writes`, if the run still holds its
    lease; if not, _LeaseLost rolls back the caller's transaction and all it wrote."""
    fence = job_transition_queued(
        writes,
        job_id=claim.job_id,
        where=_held(claim),
        from_statuses=(JobStatus.RUNNING,),
        to=status,
        **_finished(claim.kind, status, claim.created_at, reason),
    )
    writes.flush()
    if not fence.count:
        raise _LeaseLost


def _count_finished(kind: str, status: str, latency: float) -> None:
    metrics.incr("interviewprep_jobs_finished_total", {"kind": kind, "status": status})
    metrics.observe("interviewprep_job_latency_seconds", latency, {"kind": kind})


# "Name: message", or that after "Last error: " for a job that ran out of tries.
ERROR_CLASS = re.compile(r"(?:^|Last error: )([A-Za-z_][\w.]*): ")


def error_class_of(error: str) -> str:
    match = ERROR_CLASS.search(error)
    return match.group(1)[:100] if match else "unknown"


def dead_letter(job: EvaluationJob, subject: Any, *, error: str, tb: str = "", error_class: str | None = None) -> None:
    """Inside the caller's transaction (subject and job locked): the job is dead, its subject
    failed, and a dead letter keeps the context for staff to read and replay."""
    handler = handler_for(job.kind)
    tries = list(JobTry.objects.filter(job=job).values_list("started_at", flat=True))
    finish(job, JobStatus.DEAD, last_error=error[:4000])
    DeadLetter.objects.get_or_create(
        job=job,
        defaults={
            "kind": job.kind,
            "subject_id": job.subject_id,
            "context": handler.describe(subject),
            "error": error[:4000],
            "error_class": error_class or error_class_of(error),
            "traceback": tb[-8000:],
            "tries": job.tries,
            "first_try_at": min(tries) if tries else None,
            "last_try_at": max(tries) if tries else None,
        },
    )
    handler.failed(subject, actor=f"job:{job.pk}", reason=error[:200])
    kind = job.kind
    transaction.on_commit(lambda: metrics.incr("interviewprep_dead_letters_total", {"kind": kind}))
    logger.error("job dead-lettered", extra={"job_id": job.pk, "tries": job.tries, "error": error[:300]})


def _held(claim: Claim) -> Q:
    """The fence's one rule: the job is still running under this run's lease token."""
    return Q(pk=claim.job_id, lease_token=claim.token, status=JobStatus.RUNNING)


def _fenced(claim: Claim) -> tuple[Any, EvaluationJob | None]:
    """Inside a transaction: the subject locked by its handler, then the job; the job only if
    this run still holds its lease. For the paths that need the job's row (a retry, a dead letter)."""
    subject = handler_for(claim.kind).lock(claim.subject_id)
    job = EvaluationJob.objects.select_for_update().filter(_held(claim)).first()
    return subject, job


def job_record(claim: Claim, output: Any) -> str:
    """Write the run's outcome through its handler, fenced; refused for a lost lease, and
    discarded when the handler says so or the database already holds one.

    The subject's locks first, as everywhere; then the handler's writes, the try's end and the
    job's compare-and-swap go as one statement. A run that lost its lease only wastes those
    writes: the swap's miss rolls them back."""
    handler = handler_for(claim.kind)
    try:
        with transaction.atomic():
            written: list[Any] = []
            # Queued first, so it runs before the notifications the handler's writes queue: a
            # waiter they wake finds what `recorded` does (the cached copy) done already.
            transaction.on_commit(lambda: written and handler.recorded(written[0]))
            subject = handler.lock(claim.subject_id)
            writes = Writes()
            reason = handler.record(subject, output, actor=claim.actor, writes=writes)
            end_try(claim, Outcome.DISCARDED if reason else Outcome.SUCCEEDED, reason or "", writes=writes)
            _finish_fenced(claim, JobStatus.DISCARDED if reason else JobStatus.SUCCEEDED, writes, reason=reason or "")
            if not reason:
                written.append(subject)
    except _LeaseLost:
        end_try(claim, Outcome.LOST_LEASE, "lease lost before the outcome was written")
        return "lost_lease"
    except IntegrityError:
        # The subject has its one outcome already (a unique constraint said so).
        return _discard_duplicate(claim)
    return "discarded" if reason else "succeeded"


def _discard_duplicate(claim: Claim) -> str:
    reason = "the outcome was already recorded"
    try:
        with transaction.atomic():
            handler_for(claim.kind).lock(claim.subject_id)
            writes = Writes()
            end_try(claim, Outcome.DISCARDED, reason, writes=writes)
            _finish_fenced(claim, JobStatus.DISCARDED, writes, reason=reason)
    except _LeaseLost:
        end_try(claim, Outcome.LOST_LEASE, "lease lost before the outcome was written")
        return "lost_lease"
    return "discarded"


def retry_delay(tries: int, retry_after: float | None = None) -> float:
    """Exponential backoff, jittered over the upper half of each ceiling, never sooner than the
    dependency asked."""
    config = settings.CONFIG
    ceiling = min(config.retry_max_delay, config.retry_base_delay * (2 ** max(0, tries - 1)))
    delay = random.uniform(ceiling / 2, ceiling)
    return max(delay, retry_after or 0)


def job_fail_transient(claim: Claim, error: str, *, retry_after: float | None = None) -> str:
    with transaction.atomic():
        subject, job = _fenced(claim)
        if job is None:
            end_try(claim, Outcome.LOST_LEASE, error)
            return "lost_lease"
        end_try(claim, Outcome.TRANSIENT_ERROR, error)
        if job.tries >= job.max_tries:
            dead_letter(job, subject, error=f"gave up after {job.tries} tries. Last error: {error}")
            return "dead"
        due = timezone.now() + timedelta(seconds=retry_delay(job.tries, retry_after))
        job_transition(job, JobStatus.RETRYING, lease_token=None, last_error=error[:4000], next_retry_at=due)
        outbox_add(job=job, available_at=due)
        kind = claim.kind
        transaction.on_commit(lambda: metrics.incr("interviewprep_jobs_retried_total", {"kind": kind}))
    return "retrying"


def job_fail_permanent(claim: Claim, error: str, tb: str) -> str:
    with transaction.atomic():
        subject, job = _fenced(claim)
        if job is None:
            end_try(claim, Outcome.LOST_LEASE, error)
            return "lost_lease"
        end_try(claim, Outcome.PERMANENT_ERROR, error)
        dead_letter(job, subject, error=error, tb=tb)
    return "dead"


def job_defer_for_lock(claim: Claim, *, within: float) -> str:
    """The subject's lock is held by another run: give the try back and come again soon."""
    metrics.incr("interviewprep_lock_contention_total", {"kind": claim.kind})
    with transaction.atomic():
        _, job = _fenced(claim)
        end_try(claim, Outcome.LOCK_CONTENDED, "the subject's lock is held by another run")
        if job is None:
            return "lost_lease"
        due = timezone.now() + timedelta(seconds=min(within, 0.2 + random.random()))
        # Contention is not the job's failure: the try is given back.
        job_transition(job, JobStatus.RETRYING, lease_token=None, tries=job.tries - 1, next_retry_at=due)
        outbox_add(job=job, available_at=due)
    return "deferred"
