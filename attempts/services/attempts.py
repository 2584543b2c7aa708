"""Writes of attempts and submissions: create, submit, and what the pipeline records."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from attempts.errors import AnswerTooLarge, InvalidInput, NotFound
from attempts.models import (
    Attempt,
    AttemptStatus,
    Question,
    Result,
    StateChange,
    Submission,
    SubmissionStatus,
)
from attempts.selectors.cache import attempt_cache_raise_floor
from attempts.services.idempotency import StoredResponse, idempotency_expires_at, idempotent, idempotent_replay
from attempts.services.transitions import transition
from interviewprep.db import call_prepared

UNFINISHED = (SubmissionStatus.QUEUED, SubmissionStatus.PROCESSING)


def attempt_create(*, user, question_id: int) -> Attempt:
    question = Question.objects.filter(pk=question_id, is_active=True).first()
    if question is None:
        raise NotFound(f"There is no question {question_id}.")
    return Attempt.objects.create(user=user, question=question)


def attempt_create_once(*, user, question_id: int, idempotency_key: str, fingerprint: str) -> StoredResponse:
    """`attempt_create` under an idempotency key: a double click opens one attempt."""
    from attempts.selectors.attempts import attempt_payload

    def work() -> tuple[int, dict[str, Any]]:
        return 201, attempt_payload(attempt_create(user=user, question_id=question_id), None)

    return idempotent(user_id=user.pk, key=idempotency_key, fingerprint=fingerprint, work=work)


def answer_validate(answer: Any) -> str:
    if not isinstance(answer, str):
        raise InvalidInput("answer must be a string.", field="answer")
    if not answer.strip():
        raise InvalidInput("answer must not be empty.", field="answer")
    if len(answer.encode()) > settings.ANSWER_MAX_BYTES:
        raise AnswerTooLarge(
            f"The answer is {len(answer.encode())} bytes; the limit is {settings.ANSWER_MAX_BYTES} bytes (64 KiB).",
            limit=settings.ANSWER_MAX_BYTES,
        )
    return answer


def submission_create(*, user, attempt_id: int, answer: str, idempotency_key: str, fingerprint: str) -> StoredResponse:
    """The one write path of a submit (DESIGN.md step 1), all in one transaction.

    Identical repeats replay the stored answer; the attempt row lock serialises different
    submits on one attempt so exactly one is latest and every older unfinished one superseded.
    A fresh key (and a finished one) takes one call of attempts/sql/submit.sql, any other key
    `_submission_create_any`; tests hold the rows both write equal.
    """
    answer_validate(answer)
    args = {"user": user, "attempt_id": attempt_id, "answer": answer, "idempotency_key": idempotency_key}
    return _submission_create_fresh(**args, fingerprint=fingerprint) or _submission_create_any(
        **args, fingerprint=fingerprint
    )


def _submission_create_any(
    *, user, attempt_id: int, answer: str, idempotency_key: str, fingerprint: str
) -> StoredResponse:
    from evaluation.services.admission import admission_check
    from evaluation.services.jobs import evaluation_job_enqueue

    def work() -> tuple[int, dict[str, Any]]:
        attempt = (
            Attempt.objects.select_for_update(of=("self",))
            .select_related("question")
            .filter(pk=attempt_id, user=user)
            .first()
        )
        if attempt is None:
            raise NotFound(f"There is no attempt {attempt_id}.")
        admission_check(evaluator=attempt.question.evaluator)
        submission = Submission.objects.create(attempt=attempt, answer=answer, idempotency_key=idempotency_key)
        changes: list[StateChange] = []
        older = list(
            Submission.objects.filter(attempt=attempt, status__in=UNFINISHED)
            .exclude(pk=submission.pk)
            .values_list("pk", "status")
        )
        if older:
            Submission.objects.filter(pk__in=[pk for pk, _ in older]).update(status=SubmissionStatus.SUPERSEDED)
            changes.extend(
                StateChange(
                    entity="submission",
                    object_id=pk,
                    from_status=status,
                    to_status=SubmissionStatus.SUPERSEDED,
                    actor=f"user:{user.pk}",
                    reason=f"superseded by submission {submission.pk}",
                )
                for pk, status in older
            )
        transition(
            attempt,
            AttemptStatus.QUEUED,
            actor=f"user:{user.pk}",
            reason=f"submission {submission.pk}",
            changes={"latest_submission": submission},
            record=changes,
        )
        StateChange.objects.bulk_create(changes)
        evaluation_job_enqueue(submission_id=submission.pk, correlation_id=idempotency_key)
        return 202, {
            "attempt_id": attempt.pk,
            "submission_id": submission.pk,
            "status": submission.status,
            "version": attempt.version,
        }

    return idempotent(user_id=user.pk, key=idempotency_key, fingerprint=fingerprint, work=work)


def _submission_create_fresh(
    *, user, attempt_id: int, answer: str, idempotency_key: str, fingerprint: str
) -> StoredResponse | None:
    """A submit with a fresh key, the common case, in one call of attempts/sql/submit.sql, or the
    replay of a finished one; None, with nothing written, for any other key (the general path)."""
    from evaluation.models import JobKind
    from evaluation.services.admission import admission_check
    from evaluation.services.outbox import TASKS, outbox_publish_after_commit

    now = timezone.now()
    task_name, queue_name = TASKS[JobKind.EVALUATE]
    with transaction.atomic():
        row = call_prepared(
            "SELECT * FROM attempts_submission_create_fresh(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [
                user.pk, attempt_id, answer, idempotency_key, fingerprint, now, idempotency_expires_at(now),
                settings.CONFIG.job_max_tries, task_name, queue_name,
            ],
        )  # fmt: skip
        outcome, evaluator, _, _, version, outbox_id, status_code, stored_fingerprint, body = row
        if outcome == "replay":
            return idempotent_replay(fingerprint, stored_fingerprint, status_code, body)
        if outcome == "key_exists":
            return None
        if outcome == "not_found":
            raise NotFound(f"There is no attempt {attempt_id}.")
        # A refusal here rolls the whole submit back: nothing written, as in the general path.
        admission_check(evaluator=evaluator)
        attempt_cache_raise_floor(attempt_id=attempt_id, version=version)
        outbox_publish_after_commit(outbox_id=outbox_id)
    return StoredResponse(202, bytes(body), replayed=False)


def result_record(
    *,
    attempt: Attempt,
    submission: Submission,
    score: float,
    max_score: float,
    feedback: str,
    details: dict,
    actor: str,
) -> Result | None:
    """Record a submission's result inside the caller's fenced transaction.

    The caller holds the attempt's row lock (under which alone a submission's row is written)
    and has checked its lease. Writes only while the submission is still the latest; the
    database refuses a second result for it (IntegrityError). None when it is not the latest.
    """
    if attempt.latest_submission_id != submission.pk:
        return None
    result = Result.objects.create(
        submission=submission, score=score, max_score=max_score, feedback=feedback, details=details
    )
    record: list[StateChange] = []
    transition(submission, SubmissionStatus.COMPLETED, actor=actor, record=record)
    transition(
        attempt,
        AttemptStatus.COMPLETED,
        actor=actor,
        reason=f"result of submission {submission.pk}",
        changes={"scored_submission": submission},
        record=record,
    )
    StateChange.objects.bulk_create(record)
    return result


def submission_start_processing(*, attempt: Attempt, submission: Submission, actor: str) -> None:
    """Inside the caller's transaction, the attempt locked and the submission its latest: both
    move to processing (a retry finds them there already and changes nothing)."""
    record: list[StateChange] = []
    transition(submission, SubmissionStatus.PROCESSING, actor=actor, record=record)
    transition(attempt, AttemptStatus.PROCESSING, actor=actor, record=record)
    if record:
        StateChange.objects.bulk_create(record)


def submission_mark_failed(*, submission_id: int, actor: str, reason: str) -> None:
    """Inside the caller's transaction: a dead-lettered submission fails; its attempt too when
    it is the latest. A superseded or completed submission stays as it is."""
    attempt, submission = _lock_attempt_then_submission(submission_id)
    record: list[StateChange] = []
    if submission.status in UNFINISHED:
        transition(submission, SubmissionStatus.FAILED, actor=actor, reason=reason, record=record)
    if attempt.latest_submission_id == submission.pk and attempt.status in (
        AttemptStatus.QUEUED,
        AttemptStatus.PROCESSING,
    ):
        transition(attempt, AttemptStatus.FAILED, actor=actor, reason=reason, record=record)
    if record:
        StateChange.objects.bulk_create(record)


def submission_requeue(*, submission_id: int, actor: str, reason: str) -> bool:
    """Inside the caller's transaction: a failed submission goes back to queued for a replay.
    False when it is no longer its attempt's latest (the replayed job will be discarded)."""
    attempt, submission = _lock_attempt_then_submission(submission_id)
    if attempt.latest_submission_id != submission.pk:
        return False
    record: list[StateChange] = []
    transition(submission, SubmissionStatus.QUEUED, actor=actor, reason=reason, record=record)
    transition(attempt, AttemptStatus.QUEUED, actor=actor, reason=reason, record=record)
    if record:
        StateChange.objects.bulk_create(record)
    return True


def _lock_attempt_then_submission(submission_id: int) -> tuple[Attempt, Submission]:
    # Every path locks the attempt before its submissions, so two of them never deadlock.
    attempt_id = Submission.objects.values_list("attempt_id", flat=True).get(pk=submission_id)
    attempt = Attempt.objects.select_for_update().get(pk=attempt_id)
    return attempt, Submission.objects.select_for_update().get(pk=submission_id)
