"""Evaluation jobs: enqueue, claim, run, retry, dead-letter, replay, sweep (DESIGN.md steps 2-5).

Delivery is at least once, so every step is safe to repeat:
- a run claims its job with a fresh lease token under the job's row lock, and only a claimable
  job can be claimed (queued, due for retry, or running with a dead heartbeat);
- every outcome is written in one transaction that locks the attempt, then the job, and checks
  that the lease token is still the run's own (the fence): a run that lost its lease changes
  nothing;
- the one result per submission is a unique constraint.
Every path that locks an attempt locks it first (then its job, then its submissions), so no
two paths deadlock.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import IntegrityError, InterfaceError, OperationalError, connection, transaction
from django.db.models import Q
from django.utils import timezone
from psycopg.types.json import Jsonb

from attempts.models import Attempt, AttemptStatus, Question, Result, Submission, SubmissionStatus
from attempts.selectors.cache import attempt_cache_raise_floor
from evaluation import faults
from evaluation.evaluators import (
    EvaluationRequest,
    PermanentEvaluationError,
    TransientEvaluationError,
    get_evaluator,
)
from evaluation.locks import AttemptLock
from evaluation.models import (
    FINAL_JOB_STATUSES,
    DeadLetter,
    EvaluationJob,
    JobKind,
    JobStatus,
    JobTry,
    Outbox,
)
from evaluation.services.outbox import outbox_add
from interviewprep import metrics
from interviewprep.background import PerProcess, run_later, run_soon
from interviewprep.db import call_prepared

logger = logging.getLogger(__name__)

Outcome = JobTry.Outcome

# The one-statement claim leaves the cache's queued copy in place for this long before raising
# its floor to the processing version: a job that is done by then (an instant or a quick coding
# one) never needs it, as its result raises the floor higher.
PROCESSING_FLOOR_DELAY = 0.1


def lease_timeout() -> float:
    """A running job whose heartbeat is older than this has lost its run (killed, paused)."""
    return max(2.0, settings.CONFIG.heartbeat_interval * 5)


def evaluation_job_enqueue(
    *,
    submission_id: int | None = None,
    practice_request_id: int | None = None,
    correlation_id: str = "",
    replay_of: DeadLetter | None = None,
) -> EvaluationJob:
    """The one entry point `attempts` calls: inside the caller's transaction, a job and its
    outbox row; the message is published after commit."""
    job = EvaluationJob.objects.create(
        kind=JobKind.EVALUATE if submission_id else JobKind.GENERATE,
        submission_id=submission_id,
        practice_request_id=practice_request_id,
        status=JobStatus.PENDING,
        max_tries=settings.CONFIG.job_max_tries,
        correlation_id=correlation_id[:64],
        replay_of=replay_of,
    )
    outbox_add(job=job)
    return job


@dataclass
class Claim:
    job_id: int
    kind: str
    token: uuid.UUID
    try_id: int
    tries: int
    max_tries: int
    worker: str
    submission_id: int | None
    attempt_id: int | None
    practice_request_id: int | None
    created_at: object
    # What the run needs, read under the claim's locks (evaluate jobs only).
    submission: Submission | None = None
    started: float = field(default_factory=time.monotonic)
    # Set when the run is over; then `after` (steps due after its commit) is handed over.
    done: bool = False
    after: list[Callable[[], None]] = field(default_factory=list)

    @property
    def actor(self) -> str:
        return f"job:{self.job_id}:try:{self.tries}"

    @property
    def lock_key(self) -> str:
        if self.attempt_id is not None:
            return f"attempt:{self.attempt_id}"
        return f"practice-request:{self.practice_request_id}"


def _is_claimable(job: EvaluationJob, now) -> bool:
    if job.status in (JobStatus.PENDING, JobStatus.QUEUED):
        return True
    if job.status == JobStatus.RETRYING:
        return job.next_retry_at is None or job.next_retry_at <= now
    if job.status == JobStatus.RUNNING:
        return job.heartbeat_at is None or job.heartbeat_at < now - timedelta(seconds=lease_timeout())
    return False


def job_claim(*, job_id: int, worker: str) -> Claim | None:
    """Claim the job for this run, or return None when there is nothing to do now.

    The common case (a queued job's first try) in one statement, any other in `_claim_any`.
    """
    now = timezone.now()
    return _claim_queued(job_id=job_id, worker=worker, now=now) or _claim_any(job_id=job_id, worker=worker, now=now)


def _claim_any(*, job_id: int, worker: str, now) -> Claim | None:
    """One transaction: lock the attempt, then the job; decide on the locked row; take a fresh
    lease token; and for an evaluate job, check its submission is still the latest and move it
    and its attempt to processing. (A submission's row is only ever written under its attempt's
    lock, so holding that lock is enough to read and move it.)
    """
    from attempts.services.attempts import submission_start_processing
    from attempts.services.practice import practice_request_mark_processing

    attempt_id = EvaluationJob.objects.filter(pk=job_id).values_list("submission__attempt_id", flat=True).first()
    with transaction.atomic():
        # A claim lost in a database crash is harmless: the job is claimable again, and the
        # run's result write, which stays durable, is refused by the fence. So the claim does
        # not wait for its commit to reach the disk (one fsync less per job).
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
        attempt = Attempt.objects.select_for_update().get(pk=attempt_id) if attempt_id is not None else None
        job = (
            EvaluationJob.objects.select_for_update(of=("self",))
            .select_related("submission__attempt__question")
            .filter(pk=job_id)
            .first()
        )
        if job is None or job.status in FINAL_JOB_STATUSES:
            return None
        if not _is_claimable(job, now):
            if job.status == JobStatus.RUNNING:
                _recheck_later(job)
            return None
        if job.status == JobStatus.RUNNING:
            # Its run went silent (killed, paused): that try is over and counted.
            JobTry.objects.filter(job=job, outcome=Outcome.RUNNING).update(
                outcome=Outcome.ABANDONED, finished_at=now, error="heartbeat stopped (worker died or hung)"
            )
        if attempt is not None and attempt.latest_submission_id != job.submission_id:
            _finish(job, JobStatus.DISCARDED, reason="superseded by a newer submission")
            return None
        if job.tries >= job.max_tries:
            _dead_letter(
                job,
                error=f"gave up after {job.tries} tries; the last one never finished "
                f"(its worker died or was killed). Last error: {job.last_error or 'none'}",
                tb="",
            )
            return None
        token = uuid.uuid4()
        job.status = JobStatus.RUNNING
        job.tries += 1
        job.lease_token = token
        job.heartbeat_at = now
        job.next_retry_at = None
        job.started_at = job.started_at or now
        job.save(
            update_fields=[
                "status",
                "tries",
                "lease_token",
                "heartbeat_at",
                "next_retry_at",
                "started_at",
                "updated_at",
            ]
        )
        job_try = JobTry.objects.create(
            job=job, number=job.tries, lease_token=token, worker=worker[:200], started_at=now
        )
        actor = f"job:{job.pk}:try:{job.tries}"
        if attempt is not None:
            attempt.question = job.submission.attempt.question
            job.submission.attempt = attempt
            submission_start_processing(attempt=attempt, submission=job.submission, actor=actor)
        else:
            practice_request_mark_processing(practice_request_id=job.practice_request_id, actor=actor)
    return Claim(
        job_id=job.pk,
        kind=job.kind,
        token=token,
        try_id=job_try.pk,
        tries=job.tries,
        max_tries=job.max_tries,
        worker=worker,
        submission_id=job.submission_id,
        attempt_id=attempt_id,
        practice_request_id=job.practice_request_id,
        created_at=job.created_at,
        submission=job.submission,
    )


def _claim_queued(*, job_id: int, worker: str, now) -> Claim | None:
    """The common claim (a queued job's first try, its submission the latest) as one statement,
    so one transaction, of evaluation/sql/hot_path.sql. None, with nothing changed, for every
    other case."""
    token = uuid.uuid4()
    row = call_prepared("SELECT * FROM evaluation_job_claim_queued(%s, %s, %s, %s)", [job_id, token, worker, now])
    if row is None or row[0] != "claimed":
        return None
    (_, try_id, tries, max_tries, created_at, submission_id, answer, attempt_id, user_id, version,
     attempt_created_at, question_id, slug, kind, prompt, spec, evaluator) = row  # fmt: skip
    question = Question(
        id=question_id, slug=slug, kind=kind, prompt=prompt, evaluator=evaluator,
        evaluation_spec=json.loads(spec) if isinstance(spec, str) else spec,
    )  # fmt: skip
    attempt = Attempt(
        id=attempt_id, user_id=user_id, question=question, status=AttemptStatus.PROCESSING, version=version,
        latest_submission_id=submission_id, created_at=attempt_created_at, updated_at=now,
    )  # fmt: skip
    submission = Submission(id=submission_id, attempt=attempt, answer=answer, status=SubmissionStatus.PROCESSING)
    claim = Claim(
        job_id=job_id,
        kind=JobKind.EVALUATE,
        token=token,
        try_id=try_id,
        tries=tries,
        max_tries=max_tries,
        worker=worker,
        submission_id=submission_id,
        attempt_id=attempt_id,
        practice_request_id=None,
        created_at=created_at,
        submission=submission,
    )
    # Unlike transition(), which raises the floor before its commit, this raises it after, off
    # the job's path, and only if the run is still going (PROCESSING_FLOOR_DELAY): until then a
    # reader may still be served the queued copy (lag, and `min_version` still refuses it to
    # whoever saw this version). The result write, which changes what a candidate sees, raises
    # it before its commit.
    run_later(partial(_raise_processing_floor, claim, version), PROCESSING_FLOOR_DELAY)
    return claim


def _raise_processing_floor(claim: Claim, version: int) -> None:
    if not claim.done:
        attempt_cache_raise_floor(attempt_id=claim.attempt_id, version=version)


def _record_result_running(claim: Claim, outcome) -> bool:
    """The common result write (lease held, submission still the latest, no result yet) as one
    call of evaluation/sql/hot_path.sql, so one statement and one transaction: no BEGIN and
    COMMIT round trips (measured at about a twentieth of an instant job's CPU). False, with
    nothing changed, for every other case.

    The cache floor goes up first, to the version the statement will write, so it is up before
    the commit as transition() orders it. That version is known: while this run holds its lease
    with the attempt processing and this submission its latest (which the statement checks), no
    other move of the attempt is legal. A floor raised for a write that is then refused costs
    cache misses on that attempt until the write that does happen, or until it lapses."""
    attempt = claim.submission.attempt
    attempt_cache_raise_floor(attempt_id=claim.attempt_id, version=attempt.version + 1)
    now = timezone.now()
    row = call_prepared(
        "SELECT * FROM evaluation_job_record_result(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        [
            claim.job_id, claim.attempt_id, claim.submission_id, claim.token, claim.try_id,
            float(outcome.score), float(outcome.max_score), outcome.feedback, Jsonb(outcome.details),
            claim.actor, now, round((time.monotonic() - claim.started) * 1000, 2),
        ],
    )  # fmt: skip
    if row is None or row[0] != "recorded":
        return False
    _, version, updated_at = row
    if version != attempt.version + 1:  # not expected (see above): the floor must not stay below
        logger.error("result wrote an unexpected attempt version", extra={"job_id": claim.job_id})
        attempt_cache_raise_floor(attempt_id=claim.attempt_id, version=version)
    attempt.status, attempt.version, attempt.updated_at = AttemptStatus.COMPLETED, version, updated_at
    attempt.scored_submission_id = claim.submission_id
    result = Result(
        submission_id=claim.submission_id, score=outcome.score, max_score=outcome.max_score,
        feedback=outcome.feedback, details=outcome.details,
    )  # fmt: skip
    latency = (now - claim.created_at).total_seconds()
    counted = partial(_count_finished, claim.kind, JobStatus.SUCCEEDED, latency)
    transaction.on_commit(partial(claim.after.extend, (counted, partial(_after_result, attempt, result))))
    return True


def _recheck_later(job: EvaluationJob) -> None:
    """A delivery found its job running with a live heartbeat: the run is alive, or its worker
    was just killed and the message came back. Look again once the lease would have run out,
    unless a message for that is already waiting."""
    if Outbox.objects.filter(job=job, published_at__isnull=True).exists():
        return
    outbox_add(job=job, available_at=job.heartbeat_at + timedelta(seconds=lease_timeout() + 0.5))


def _fenced(claim: Claim) -> tuple[Attempt | None, EvaluationJob | None]:
    """Inside a transaction: lock the attempt (if any), then the job; the job only if this run
    still holds its lease."""
    attempt = Attempt.objects.select_for_update().get(pk=claim.attempt_id) if claim.attempt_id is not None else None
    job = EvaluationJob.objects.select_for_update().get(pk=claim.job_id)
    if job.lease_token != claim.token or job.status != JobStatus.RUNNING:
        return attempt, None
    return attempt, job


def _end_try(claim: Claim, outcome: str, error: str = "") -> None:
    JobTry.objects.filter(pk=claim.try_id).update(
        outcome=outcome,
        finished_at=timezone.now(),
        duration_ms=round((time.monotonic() - claim.started) * 1000, 2),
        error=error[:4000],
    )


def _finish(job: EvaluationJob, status: str, *, reason: str = "") -> None:
    now = timezone.now()
    job.status = status
    job.lease_token = None
    job.finished_at = now
    job.discard_reason = reason[:200]
    job.save(update_fields=["status", "lease_token", "finished_at", "discard_reason", "updated_at"])
    latency = (now - job.created_at).total_seconds()
    transaction.on_commit(lambda: _count_finished(job.kind, status, latency))


def _count_finished(kind: str, status: str, latency: float) -> None:
    metrics.incr_buffered("interviewprep_jobs_finished_total", {"kind": kind, "status": status})
    metrics.observe("interviewprep_job_latency_seconds", latency, {"kind": kind})


def _dead_letter(job: EvaluationJob, *, error: str, tb: str) -> None:
    """Inside the caller's transaction (attempt and job locked): the job is dead, its subject
    failed, and a dead letter keeps the context for staff to read and replay."""
    from attempts.services.attempts import submission_mark_failed
    from attempts.services.practice import practice_request_mark_failed

    tries = list(JobTry.objects.filter(job=job).values_list("started_at", flat=True))
    job.last_error = error[:4000]
    job.save(update_fields=["last_error", "updated_at"])
    _finish(job, JobStatus.DEAD)
    DeadLetter.objects.get_or_create(
        job=job,
        defaults={
            "kind": job.kind,
            "attempt_id": job.submission.attempt_id if job.submission_id else None,
            "submission_id": job.submission_id,
            "practice_request_id": job.practice_request_id,
            "error": error[:4000],
            "traceback": tb[-8000:],
            "tries": job.tries,
            "first_try_at": min(tries) if tries else None,
            "last_try_at": max(tries) if tries else None,
        },
    )
    actor = f"job:{job.pk}"
    if job.submission_id:
        submission_mark_failed(submission_id=job.submission_id, actor=actor, reason=error[:200])
    else:
        practice_request_mark_failed(practice_request_id=job.practice_request_id, actor=actor, reason=error[:200])
    transaction.on_commit(lambda: metrics.incr("interviewprep_dead_letters_total", {"kind": job.kind}))
    logger.error("job dead-lettered", extra={"job_id": job.pk, "tries": job.tries, "error": error[:300]})


def retry_delay(tries: int, retry_after: float | None = None) -> float:
    """Exponential backoff with full jitter, never sooner than the dependency asked."""
    config = settings.CONFIG
    ceiling = min(config.retry_max_delay, config.retry_base_delay * (2 ** max(0, tries - 1)))
    delay = random.uniform(ceiling / 2, ceiling)
    return max(delay, retry_after or 0)


def job_fail_transient(claim: Claim, error: str, *, retry_after: float | None = None) -> str:
    with transaction.atomic():
        _, job = _fenced(claim)
        if job is None:
            _end_try(claim, Outcome.LOST_LEASE, error)
            return "lost_lease"
        _end_try(claim, Outcome.TRANSIENT_ERROR, error)
        if job.tries >= job.max_tries:
            _dead_letter(job, error=f"gave up after {job.tries} tries. Last error: {error}", tb="")
            return "dead"
        delay = retry_delay(job.tries, retry_after)
        job.status = JobStatus.RETRYING
        job.lease_token = None
        job.last_error = error[:4000]
        job.next_retry_at = timezone.now() + timedelta(seconds=delay)
        job.save(update_fields=["status", "lease_token", "last_error", "next_retry_at", "updated_at"])
        outbox_add(job=job, available_at=job.next_retry_at)
        transaction.on_commit(lambda: metrics.incr("interviewprep_jobs_retried_total", {"kind": claim.kind}))
    return "retrying"


def job_fail_permanent(claim: Claim, error: str, tb: str) -> str:
    with transaction.atomic():
        _, job = _fenced(claim)
        if job is None:
            _end_try(claim, Outcome.LOST_LEASE, error)
            return "lost_lease"
        _end_try(claim, Outcome.PERMANENT_ERROR, error)
        _dead_letter(job, error=error, tb=tb)
    return "dead"


def job_defer_for_lock(claim: Claim) -> str:
    """The per-attempt lock is held by another run: give the try back and come again soon."""
    metrics.incr("interviewprep_lock_contention_total", {"kind": claim.kind})
    with transaction.atomic():
        _, job = _fenced(claim)
        _end_try(claim, Outcome.LOCK_CONTENDED, "per-attempt lock held by another run")
        if job is None:
            return "lost_lease"
        job.status = JobStatus.RETRYING
        job.lease_token = None
        job.tries -= 1  # contention is not the job's failure
        job.next_retry_at = timezone.now() + timedelta(seconds=min(lease_timeout(), 0.2 + random.random()))
        job.save(update_fields=["status", "lease_token", "tries", "next_retry_at", "updated_at"])
        outbox_add(job=job, available_at=job.next_retry_at)
    return "deferred"


def job_heartbeat(claim: Claim) -> bool:
    return bool(
        EvaluationJob.objects.filter(pk=claim.job_id, lease_token=claim.token, status=JobStatus.RUNNING).update(
            heartbeat_at=timezone.now()
        )
    )


class Heartbeat:
    """Keeps the lease and the lock alive while the evaluator works; notices a lost lease.

    One beating thread per process serves every run in it: a thread started and joined per job
    was measured at about 6 % of an instant job's time."""

    def __init__(self, claim: Claim, lock: AttemptLock):
        self.claim = claim
        self.lock = lock
        self.lost = False

    def __enter__(self) -> Heartbeat:
        _beater.get().add(self)
        return self

    def __exit__(self, *exc) -> None:
        _beater.get().discard(self)

    def beat(self) -> None:
        if not job_heartbeat(self.claim):
            self.lost = True
            return
        self.lock.extend()


class _Beater:
    def __init__(self) -> None:
        self.runs: set[Heartbeat] = set()
        self._guard = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="heartbeat", daemon=True)
        self._thread.start()

    def add(self, beat: Heartbeat) -> None:
        with self._guard:
            self.runs.add(beat)

    def discard(self, beat: Heartbeat) -> None:
        with self._guard:
            self.runs.discard(beat)

    def _loop(self) -> None:
        interval = settings.CONFIG.heartbeat_interval
        while True:
            time.sleep(interval)
            with self._guard:
                runs = [beat for beat in self.runs if not beat.lost]
            if not runs:
                # Nothing running: give the connection back rather than hold it idle.
                connection.close()
                continue
            for beat in runs:
                try:
                    beat.beat()
                except Exception:  # noqa: BLE001 - a failed beat only risks the lease, never the result
                    logger.exception("heartbeat failed", extra={"job_id": beat.claim.job_id})
                    connection.close()


_beater = PerProcess(_Beater)


# --- running ---------------------------------------------------------------------------------


def _evaluate(claim: Claim, beat: Heartbeat) -> str:

    submission = claim.submission
    question = submission.attempt.question
    request = EvaluationRequest(
        question_slug=question.slug,
        question_kind=question.kind,
        prompt=question.prompt,
        spec=question.evaluation_spec,
        answer=submission.answer,
        submission_id=submission.pk,
        try_number=claim.tries,
    )
    faults.before_evaluate()
    outcome = get_evaluator(question.evaluator).evaluate(request)
    if beat.lost:
        _end_try(claim, Outcome.LOST_LEASE, "lease lost while evaluating")
        return "lost_lease"
    faults.before_result_commit()
    if _record_result_running(claim, outcome):
        return "succeeded"
    return _record_result_any(claim, outcome)


def _record_result_any(claim: Claim, outcome) -> str:
    """The result write in every case: fenced, and refused for a superseded submission or a
    second result."""
    from attempts.services.attempts import result_record

    submission = claim.submission
    try:
        with transaction.atomic():
            attempt, job = _fenced(claim)
            if job is None:
                _end_try(claim, Outcome.LOST_LEASE, "lease lost before the result was written")
                return "lost_lease"
            result = result_record(
                attempt=attempt,
                submission=submission,
                score=outcome.score,
                max_score=outcome.max_score,
                feedback=outcome.feedback,
                details=outcome.details,
                actor=claim.actor,
            )
            if result is None:
                _end_try(claim, Outcome.DISCARDED, "superseded by a newer submission")
                _finish(job, JobStatus.DISCARDED, reason="superseded by a newer submission")
                return "discarded"
            _end_try(claim, Outcome.SUCCEEDED)
            _finish(job, JobStatus.SUCCEEDED)
            transaction.on_commit(partial(claim.after.append, partial(_after_result, attempt, result)))
    except IntegrityError:
        # The one result per submission exists already (the unique constraint said so).
        with transaction.atomic():
            _, job = _fenced(claim)
            if job is None:
                return "lost_lease"
            _end_try(claim, Outcome.DISCARDED, "the submission already has its result")
            _finish(job, JobStatus.DISCARDED, reason="the submission already has its result")
        return "discarded"
    return "succeeded"


def _after_run(claim: Claim, lock: AttemptLock | None = None) -> None:
    """The run is over: hand its after-commit steps, then the lock's release, to the background
    thread in one go (DESIGN.md step 5 orders the cache write before the release)."""
    claim.done = True
    run_soon(*claim.after, *([lock.release] if lock is not None else []))


def _after_result(attempt: Attempt, result) -> None:
    """After the result commit, on the background thread: put the new copy in the cache. A
    failure costs a cache miss."""
    from attempts.selectors.attempts import attempt_payload
    from attempts.selectors.cache import attempt_cache_store

    try:
        attempt_cache_store(payload={**attempt_payload(attempt, result), "user_id": attempt.user_id})
    except Exception:  # noqa: BLE001 - the cache may lag, never lie; the next read recomputes
        logger.warning("cache write after result failed", exc_info=True)


def _generate(claim: Claim, beat: Heartbeat) -> str:
    from attempts.services.practice import practice_request_fulfil

    faults.before_evaluate()
    faults.before_result_commit()
    with transaction.atomic():
        _, job = _fenced(claim)
        if job is None:
            _end_try(claim, Outcome.LOST_LEASE, "lease lost before the choice was written")
            return "lost_lease"
        practice_request_fulfil(practice_request_id=claim.practice_request_id, actor=claim.actor)
        _end_try(claim, Outcome.SUCCEEDED)
        _finish(job, JobStatus.SUCCEEDED)
    return "succeeded"


RUNNERS = {JobKind.EVALUATE: _evaluate, JobKind.GENERATE: _generate}


def evaluation_job_run(*, job_id: int, worker: str) -> str:
    """Everything one delivery of a job does. Returns what happened, for logs and tests."""
    try:
        claim = job_claim(job_id=job_id, worker=worker)
    except (OperationalError, InterfaceError):
        if connection.in_atomic_block:
            raise
        # Workers keep their connection between jobs (interviewprep/celery.py), so one the
        # database dropped since the last job fails here, at this job's first query. Nothing
        # was claimed (a claim whose answer was lost is seen as running and left alone): one
        # more try on a new connection.
        logger.warning("database connection lost before the claim; reconnecting", extra={"job_id": job_id})
        connection.close()
        claim = job_claim(job_id=job_id, worker=worker)
    if claim is None:
        return "skipped"
    lock = AttemptLock(claim.lock_key, str(claim.token), ttl_seconds=lease_timeout())
    if not lock.acquire():
        return job_defer_for_lock(claim)
    try:
        with Heartbeat(claim, lock) as beat:
            return RUNNERS[JobKind(claim.kind)](claim, beat)
    except (TransientEvaluationError, SoftTimeLimitExceeded) as exc:
        if isinstance(exc, SoftTimeLimitExceeded):
            # The time limit may have cut a query short: never reuse that connection.
            connection.close()
        message = str(exc) or "the evaluation took longer than its time limit"
        return job_fail_transient(
            claim, f"{type(exc).__name__}: {message}", retry_after=getattr(exc, "retry_after", None)
        )
    except PermanentEvaluationError as exc:
        return job_fail_permanent(claim, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=8))
    except Exception as exc:  # noqa: BLE001 - an unknown error is a bug or bad data: no blind retries
        logger.exception("job failed permanently", extra={"job_id": job_id})
        return job_fail_permanent(claim, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=8))
    finally:
        _after_run(claim, lock)


# --- sweeping and replaying ----------------------------------------------------------------


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
            JobTry.objects.filter(job=job, outcome=Outcome.RUNNING).update(
                outcome=Outcome.ABANDONED, finished_at=now, error="found stale by the sweeper"
            )
        job.status = JobStatus.QUEUED
        job.lease_token = None
        job.next_retry_at = None
        job.save(update_fields=["status", "lease_token", "next_retry_at", "updated_at"])
        outbox_add(job=job)
    logger.warning("stale job sent again", extra={"job_id": job.pk})
    return job.pk


def jobs_sweep(*, limit: int = 10_000) -> int:
    swept = 0
    while swept < limit and sweep_one_stale_job() is not None:
        swept += 1
    if swept:
        metrics.incr("interviewprep_jobs_swept_total", amount=swept)
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
    from attempts.services.attempts import submission_requeue
    from attempts.services.practice import practice_request_requeue

    with transaction.atomic():
        letter = DeadLetter.objects.select_for_update().select_related("job").get(pk=dead_letter_id)
        if letter.replayed_at is not None:
            existing = EvaluationJob.objects.filter(replay_of=letter).values_list("pk", flat=True).first()
            return ReplayResult(letter.pk, existing, False, "already replayed")
        old = letter.job
        actor = f"staff:{user.pk}" if user is not None else "staff"
        reason = f"replay of dead letter {letter.pk}"
        if old.submission_id:
            submission_requeue(submission_id=old.submission_id, actor=actor, reason=reason)
        else:
            practice_request_requeue(practice_request_id=old.practice_request_id, actor=actor, reason=reason)
        job = evaluation_job_enqueue(
            submission_id=old.submission_id,
            practice_request_id=old.practice_request_id,
            correlation_id=old.correlation_id,
            replay_of=letter,
        )
        letter.replayed_at = timezone.now()
        letter.replayed_by = user
        letter.save(update_fields=["replayed_at", "replayed_by"])
    return ReplayResult(letter.pk, job.pk, True, "replayed")
