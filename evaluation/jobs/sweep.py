"""The sweeper (stuck jobs sent again) and the replay of dead letters."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Collection
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from evaluation.jobs.enqueue import job_enqueue
from evaluation.jobs.liveness import beats_forget_gone, sweeper_beat_record
from evaluation.jobs.lost_messages import lost_messages_per_queue
from evaluation.jobs.outbox import outbox_add
from evaluation.jobs.outcomes import end_abandoned_tries
from evaluation.jobs.registry import handler_for, queues
from evaluation.jobs.transitions import job_transition
from evaluation.models import DeadLetter, DeadLetterReplay, EvaluationJob, JobStatus
from interviewprep import metrics

logger = logging.getLogger(__name__)

Outcome = DeadLetterReplay.Outcome


@dataclass(frozen=True)
class Swept:
    job_id: int
    kind: str
    was: str  # the status it was found stuck in


def sweep_one_stale_job(*, now=None, queued_kinds: Collection[str] = ()) -> Swept | None:
    """Send one stuck job through the normal path again; None when there is none.

    Stuck: running with a silent heartbeat, retrying past its time, or queued too long and of
    one of `queued_kinds` (whose queue lost messages: a queued job is otherwise only waiting).
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
                | Q(status=JobStatus.QUEUED, updated_at__lt=stale, kind__in=list(queued_kinds))
                | Q(status=JobStatus.RETRYING, next_retry_at__lt=stale)
            )
            .order_by("id")
            .first()
        )
        if job is None:
            return None
        if job.status == JobStatus.RUNNING:
            end_abandoned_tries(job, "found stale by the sweeper")
        was = job.status
        job_transition(job, JobStatus.QUEUED, lease_token=None, next_retry_at=None)
        outbox_add(job=job)
    logger.warning("stale job sent again", extra={"job_id": job.pk, "was": was})
    return Swept(job.pk, job.kind, was)


def jobs_sweep(*, limit: int = 10_000) -> int:
    """One pass of the sweeper: every stuck job sent again (queued ones, oldest first, only as
    many per queue as its lost messages), then the pass recorded (read by /healthz and
    /metrics, so a sweeper that stopped shows)."""
    stale = timezone.now() - timedelta(seconds=settings.CONFIG.stale_job_after)
    lost: dict[str, int] = {}
    # The broker is asked only when a queued job has waited long enough to be a suspect.
    if EvaluationJob.objects.filter(status=JobStatus.QUEUED, updated_at__lt=stale).exists():
        lost = lost_messages_per_queue()
    kinds = queues()
    swept = 0
    while swept < limit:
        suspects = [kind for kind, queue in kinds.items() if lost.get(queue, 0) > 0]
        swept_job = sweep_one_stale_job(queued_kinds=suspects)
        if swept_job is None:
            break
        if swept_job.was == JobStatus.QUEUED:
            lost[kinds[swept_job.kind]] -= 1
        swept += 1
    if swept:
        metrics.incr("interviewprep_jobs_swept_total", amount=swept)
    beats_forget_gone()
    sweeper_beat_record()
    return swept


class ReplayAction:
    REQUEUE = "requeue"
    SKIP = "skip"


@dataclass(frozen=True)
class ReplayResult:
    dead_letter_id: int
    # The job the replay made (or an earlier replay made); None for a dry run's requeue.
    job_id: int | None
    action: str  # ReplayAction
    detail: str
    # Whether what the letter was about is still wanted (for an evaluation: its submission is
    # still the attempt's latest); False when it is not, or the letter was replayed already.
    current: bool
    dry_run: bool = False

    @property
    def replayed(self) -> bool:
        return self.action == ReplayAction.REQUEUE and not self.dry_run


def dead_letter_replay(*, dead_letter_id: int, user, dry_run: bool = False) -> ReplayResult:
    """Send a dead-lettered job through the normal path again, once, and audit it: a second
    replay of the same dead letter answers with the job the first one made. A letter whose
    subject its handler no longer wants (`discard_reason`: a newer submission, say) is skipped
    and settled, as its job would be discarded.

    With dry_run, the same decisions under the same locks, and nothing written."""
    with transaction.atomic():
        letter = DeadLetter.objects.select_for_update().get(pk=dead_letter_id)
        result, subject = _replay_decision(letter, dry_run=dry_run)
        if dry_run:
            return result
        if letter.replayed_at is None:
            job_id = result.job_id
            if result.action == ReplayAction.REQUEUE:
                job_id = _requeue(letter, subject, user)
            letter.replayed_at = timezone.now()
            letter.replayed_by = user
            letter.save(update_fields=["replayed_at", "replayed_by"])
            result = dataclasses.replace(result, job_id=job_id)
        DeadLetterReplay.objects.create(
            dead_letter=letter,
            user=user,
            outcome=Outcome.REQUEUED if result.replayed else Outcome.SKIPPED,
            reason="" if result.replayed else result.detail[:200],
            job_id=result.job_id,
        )
    logger.info(
        "dead letter replayed",
        extra={"dead_letter_id": letter.pk, "job_id": result.job_id, "action": result.action, "detail": result.detail},
    )
    return result


def _replay_decision(letter: DeadLetter, *, dry_run: bool) -> tuple[ReplayResult, Any]:
    """Inside the replay's transaction, the letter locked: what replaying it does, and the
    subject its handler locked to decide (None for a letter replayed already)."""
    if letter.replayed_at is not None:
        existing = EvaluationJob.objects.filter(replay_of=letter).values_list("pk", flat=True).first()
        return ReplayResult(letter.pk, existing, ReplayAction.SKIP, "already replayed", False, dry_run), None
    handler = handler_for(letter.kind)
    subject = handler.lock(letter.subject_id)
    reason = handler.discard_reason(subject)
    if reason:
        return ReplayResult(letter.pk, None, ReplayAction.SKIP, reason, False, dry_run), subject
    detail = f"a new {letter.kind} job runs it again"
    return ReplayResult(letter.pk, None, ReplayAction.REQUEUE, detail, True, dry_run), subject


def _requeue(letter: DeadLetter, subject: Any, user) -> int:
    """The subject waits again, and a new job carries it through the normal path."""
    handler = handler_for(letter.kind)
    actor = f"staff:{user.pk}" if user is not None else "staff"
    handler.requeue(subject, actor=actor, reason=f"replay of dead letter {letter.pk}")
    old = EvaluationJob.objects.get(pk=letter.job_id)
    job = job_enqueue(
        kind=letter.kind,
        subject_id=letter.subject_id,
        share_key=old.share_key,
        correlation_id=old.correlation_id,
        replay_of=letter,
    )
    return job.pk


def dead_letters_replay(*, ids: list[int], user, dry_run: bool = False) -> list[ReplayResult]:
    """Each letter in a transaction of its own, in id order, so two bulk replays never deadlock."""
    return [dead_letter_replay(dead_letter_id=pk, user=user, dry_run=dry_run) for pk in sorted(set(ids))]
