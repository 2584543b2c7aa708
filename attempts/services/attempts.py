"""Writes of attempts and submissions: create, submit, what the evaluation records, and the
draft being typed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from attempts.cache import attempt_cache_restamp
from attempts.models import (
    Attempt,
    AttemptStatus,
    Question,
    Result,
    ResultOutcome,
    StateChange,
    Submission,
    SubmissionStatus,
)
from attempts.selectors.history import attempt_latest_for_question, percent_of, solves
from attempts.services.admission import admission_check, fair_share
from attempts.services.languages import answer_language_validate
from attempts.services.mock import mock_deadline_check
from attempts.services.transitions import transition
from evaluation.jobs import job_enqueue
from interviewprep.errors import AnswerTooLarge, InvalidInput, NotFound
from interviewprep.writes import Writes, writes_into

UNFINISHED = (SubmissionStatus.QUEUED, SubmissionStatus.PROCESSING)
# The job kind that evaluates a submission (its handler is in attempts/jobs.py).
EVALUATE = "evaluate"


def _active_question(question_id: int) -> Question:
    question = Question.objects.filter(pk=question_id, is_active=True).first()
    if question is None:
        raise NotFound(f"There is no question {question_id}.")
    return question


def attempt_create(*, user, question_id: int) -> Attempt:
    """A new attempt, always: the API's explicit create and the page's "fresh attempt"."""
    return Attempt.objects.create(user=user, question=_active_question(question_id))


def attempt_continue_or_create(*, user, question_id: int) -> Attempt:
    """The attempt practising the question again continues (attempt_latest_for_question), so
    its history goes on; a new draft only when there is none. The user's row is locked (FOR NO
    KEY UPDATE, which leaves inserts referencing the user free) so two starts at once, or a
    start racing a practice request, open one attempt and never two drafts."""
    question = _active_question(question_id)
    with transaction.atomic():
        get_user_model().objects.select_for_update(no_key=True).filter(pk=user.pk).values_list("pk").first()
        attempt = attempt_latest_for_question(user=user, question_id=question.pk)
        return attempt or Attempt.objects.create(user=user, question=question)


def answer_size_check(answer: Any) -> str:
    """A string within the answer limit (64 KiB of UTF-8), empty or not."""
    if not isinstance(answer, str):
        raise InvalidInput("answer must be a string.", field="answer")
    if len(answer.encode()) > settings.ANSWER_MAX_BYTES:
        raise AnswerTooLarge(
            f"The answer is {len(answer.encode())} bytes; the limit is {settings.ANSWER_MAX_BYTES} bytes (64 KiB).",
            limit=settings.ANSWER_MAX_BYTES,
        )
    return answer


def answer_validate(answer: Any) -> str:
    answer_size_check(answer)
    if not answer.strip():
        raise InvalidInput("answer must not be empty.", field="answer")
    return answer


def attempt_draft_save(*, user, attempt_id: int, answer: str, language: str | None = None) -> Attempt:
    """Keep the answer being typed in `language` (else the attempt's), which becomes the
    attempt's language; an empty answer clears that language's draft. Not a state change: the
    version and status stay as they are, and only the draft's and the language's columns (and the
    cached copy's stamp, when the language changes) are written, so a save racing a submit or an
    evaluation overwrites nothing of theirs. The row is locked for the read-modify-write, so two
    saves in different languages keep both."""
    answer_size_check(answer)
    with transaction.atomic():
        attempt = (
            Attempt.objects.select_for_update(of=("self",))
            .filter(pk=attempt_id, user=user)
            .select_related("question")
            .only("language", "stamp", "drafts", "draft_saved_at", "question__kind")
            .first()
        )
        if attempt is None:
            raise NotFound(f"There is no attempt {attempt_id}.")
        language = answer_language_validate(
            language=attempt.language if language is None else language,
            question_kind=attempt.question.kind,
            runnable=False,
        )
        drafts = {key: text for key, text in attempt.drafts.items() if key != language}
        if answer:
            drafts[language] = answer
        fields = ["drafts", "draft_saved_at"]
        if language != attempt.language:
            attempt.language = language
            fields += ["language", attempt_cache_restamp(attempt)]
        attempt.drafts = drafts
        attempt.draft_saved_at = timezone.now() if drafts else None
        attempt.save(update_fields=fields)
    return attempt


def submission_create(
    *,
    user,
    attempt_id: int,
    answer: str,
    language: str | None = None,
    correlation_id: str = "",
    now: datetime | None = None,
) -> Submission:
    """A submit, in one transaction (the caller's, when it has one open).

    The attempt's row lock serialises submits on one attempt, so exactly one is the latest and
    every older unfinished one is superseded. Without a language, the attempt's (read under that
    lock); the submission's becomes the attempt's. A refusal (not found, a mock interview's
    deadline come at `now`, bad language, overload) writes nothing. The returned submission's
    `attempt` is the attempt as this submit left it.
    """
    answer_validate(answer)
    actor = f"user:{user.pk}"
    with transaction.atomic():
        attempt = (
            Attempt.objects.select_for_update(of=("self",))
            .select_related("question")
            .filter(pk=attempt_id, user=user)
            .first()
        )
        if attempt is None:
            raise NotFound(f"There is no attempt {attempt_id}.")
        mock_deadline_check(attempt=attempt, now=now)
        language = answer_language_validate(
            language=attempt.language if language is None else language, question_kind=attempt.question.kind
        )
        admission_check(kind=EVALUATE, evaluator=attempt.question.evaluator)
        submission = Submission.objects.create(
            attempt=attempt,
            answer=answer,
            language=language,
            idempotency_key=correlation_id[:255],
            hints_used=attempt.hints_revealed,
        )
        older = list(
            Submission.objects.filter(attempt=attempt, status__in=UNFINISHED)
            .exclude(pk=submission.pk)
            .values_list("pk", "status")
        )
        writes = Writes()
        if older:
            writes.update(Submission.objects.filter(pk__in=[pk for pk, _ in older]), status=SubmissionStatus.SUPERSEDED)
            writes.insert(
                StateChange(
                    entity="submission",
                    object_id=pk,
                    from_status=status,
                    to_status=SubmissionStatus.SUPERSEDED,
                    actor=actor,
                    reason=f"superseded by submission {submission.pk}",
                )
                for pk, status in older
            )
        transition(
            attempt,
            AttemptStatus.QUEUED,
            actor=actor,
            reason=f"submission {submission.pk}",
            changes={"latest_submission": submission, "language": language},
            writes=writes,
        )
        writes.flush()
        job_enqueue(kind=EVALUATE, subject_id=submission.pk, share_key=fair_share(user), correlation_id=correlation_id)
    return submission


def result_record(
    *,
    attempt: Attempt,
    submission: Submission,
    score: float | None,
    max_score: float,
    feedback: str,
    details: dict,
    actor: str,
    outcome: str = ResultOutcome.SCORED,
    reason: str = "",
    writes: Writes | None = None,
) -> Result | None:
    """Record a submission's result inside the caller's fenced transaction, its writes joining
    the caller's `writes` (the result's id is set once they are sent).

    The caller holds the attempt's row lock (under which alone a submission's row is written)
    and has checked its lease. Writes only while the submission is still the latest; the
    database refuses a second result for it (IntegrityError). None when it is not the latest.
    """
    if attempt.latest_submission_id != submission.pk:
        return None
    # A not-scored result (no score, a reason) completes the attempt like any other: it is kept
    # in the history, and the history's selectors never count it as a score.
    result = Result(
        submission=submission,
        outcome=outcome,
        reason=reason,
        score=score,
        max_score=max_score,
        feedback=feedback,
        details=details,
    )
    with writes_into(writes) as step:
        step.insert([result])  # stamps its created_at
        changes: dict[str, Any] = {"scored_submission": submission}
        if attempt.solved_at is None and outcome == ResultOutcome.SCORED and solves(percent_of(score, max_score)):
            changes["solved_at"] = result.created_at  # the reference answer opens
        transition(submission, SubmissionStatus.COMPLETED, actor=actor, writes=step)
        transition(
            attempt,
            AttemptStatus.COMPLETED,
            actor=actor,
            reason=f"result of submission {submission.pk}",
            changes=changes,
            writes=step,
        )
    return result


def submission_start_processing(
    *, attempt: Attempt, submission: Submission, actor: str, writes: Writes | None = None
) -> None:
    """Inside the caller's transaction, the attempt locked and the submission its latest: both
    move to processing (a retry finds them there already and changes nothing)."""
    with writes_into(writes) as step:
        transition(submission, SubmissionStatus.PROCESSING, actor=actor, writes=step)
        transition(attempt, AttemptStatus.PROCESSING, actor=actor, writes=step)


def submission_mark_failed(*, attempt: Attempt, submission: Submission, actor: str, reason: str) -> None:
    """Inside the caller's transaction, the attempt locked: a dead-lettered submission fails;
    its attempt too when it is the latest. A superseded or completed submission stays as it is."""
    writes = Writes()
    if submission.status in UNFINISHED:
        transition(submission, SubmissionStatus.FAILED, actor=actor, reason=reason, writes=writes)
    if attempt.latest_submission_id == submission.pk and attempt.status in (
        AttemptStatus.QUEUED,
        AttemptStatus.PROCESSING,
    ):
        transition(attempt, AttemptStatus.FAILED, actor=actor, reason=reason, writes=writes)
    writes.flush()


def submission_requeue(*, attempt: Attempt, submission: Submission, actor: str, reason: str) -> bool:
    """Inside the caller's transaction, the attempt locked: a failed submission goes back to
    queued for a replay. False when it is no longer its attempt's latest (the replayed job
    will be discarded)."""
    if attempt.latest_submission_id != submission.pk:
        return False
    writes = Writes()
    transition(submission, SubmissionStatus.QUEUED, actor=actor, reason=reason, writes=writes)
    transition(attempt, AttemptStatus.QUEUED, actor=actor, reason=reason, writes=writes)
    writes.flush()
    return True


def submission_lock(*, submission_id: int) -> Submission:
    """Inside the caller's transaction: the submission with its attempt (and question), the
    attempt's row locked. Every path locks the attempt before its submissions, so two of them
    never deadlock; a submission's row is only written under its attempt's lock."""
    return (
        Submission.objects.select_related("attempt__question").select_for_update(of=("attempt",)).get(pk=submission_id)
    )
