"""The attempt as the API, the pages and the cache show it."""

from __future__ import annotations

from typing import Any

from django.db.models import Case, Exists, F, OuterRef, Q, When

from attempts.models import Attempt, AttemptStatus, PracticeRequest, Result, Submission
from attempts.selectors.history import solving_results


def result_payload(result: Result | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {
        "submission_id": result.submission_id,
        # "scored", or "not_scored" with the reason and a null score (docs/api.md, "Submissions").
        "outcome": result.outcome,
        "reason": result.reason or None,
        "score": result.score,
        "max_score": result.max_score,
        "feedback": result.feedback,
        "details": result.details,
    }


def attempt_payload(attempt: Attempt, result: Result | None) -> dict[str, Any]:
    # The result shown always belongs to the latest submission: an older one's never shows.
    shown = result if result is not None and result.submission_id == attempt.latest_submission_id else None
    return {
        "id": attempt.pk,
        "question_id": attempt.question_id,
        "status": attempt.status,
        "version": attempt.version,
        "latest_submission_id": attempt.latest_submission_id,
        "result": result_payload(shown) if attempt.status == AttemptStatus.COMPLETED else None,
        "created_at": attempt.created_at.isoformat(),
        "updated_at": attempt.updated_at.isoformat(),
    }


def attempt_row_fields(*, attempt_ids: list[int]) -> dict[int, dict[str, Any]]:
    """What the API shows of each attempt beside its cached copy, in one query for any number
    of them: its language, the hints revealed, whether the candidate gave up, and the question's
    reference answer and explanation, only once they are open (a full score on this attempt, or
    "I give up"; the texts are not even read before). Never cached: a draft save, a run, a hint
    or a give-up changes them without a new version. `mock_interview` names the session whose
    deadline holds the attempt's submits, if any."""
    unlocked = Q(gave_up_at__isnull=False) | Q(passed=True)
    rows = (
        Attempt.objects.filter(pk__in=attempt_ids)
        .order_by()
        .annotate(passed=Exists(solving_results().filter(submission__attempt_id=OuterRef("pk"))))
        .annotate(
            reference_answer=Case(When(unlocked, then=F("question__reference_answer"))),
            reference_explanation=Case(When(unlocked, then=F("question__explanation"))),
        )
        .values_list(
            "pk",
            "language",
            "hints_revealed",
            "gave_up_at",
            "passed",
            "reference_answer",
            "reference_explanation",
            "mock_interview_id",
            "mock_interview__deadline",
        )
    )
    return {
        pk: {
            "language": language,
            "hints_revealed": hints_revealed,
            "gave_up": gave_up_at is not None,
            "reference": ({"answer": answer, "explanation": explanation} if passed or gave_up_at is not None else None),
            "mock_interview": {"id": mock_id, "deadline": deadline.isoformat()} if mock_id else None,
        }
        for pk, language, hints_revealed, gave_up_at, passed, answer, explanation, mock_id, deadline in rows
    }


def attempt_api_payload(
    attempt: Attempt, result: Result | None, fields: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The attempt as the API shows it: its state (the cached copy's shape) and the fields read
    from its row (`attempt_row_fields`, read here when not given)."""
    if fields is None:
        fields = attempt_row_fields(attempt_ids=[attempt.pk])[attempt.pk]
    return {**attempt_payload(attempt, result), **fields}


def attempt_payload_from_db(*, attempt_id: int) -> dict[str, Any] | None:
    attempt = Attempt.objects.filter(pk=attempt_id).first()
    if attempt is None:
        return None
    result = None
    if attempt.latest_submission_id is not None:
        result = Result.objects.filter(submission_id=attempt.latest_submission_id).first()
    payload = attempt_payload(attempt, result)
    payload["user_id"] = attempt.user_id
    return payload


def submission_accepted_payload(submission: Submission) -> dict[str, Any]:
    """The answer to a submit: the submission, and the attempt's version once it was queued."""
    return {
        "attempt_id": submission.attempt_id,
        "submission_id": submission.pk,
        "language": submission.language,
        "status": submission.status,
        "version": submission.attempt.version,
    }


def practice_request_payload(request: PracticeRequest) -> dict[str, Any]:
    return {
        "id": request.pk,
        "status": request.status,
        "question_id": request.question_id,
        "attempt_id": request.attempt_id,
        "note": request.note,
    }


def attempt_hints_payload(attempt: Attempt) -> dict[str, Any]:
    """The hints revealed so far, in order, and how many the question has (`question` loaded)."""
    hints = attempt.question.hints
    return {
        "attempt_id": attempt.pk,
        "hints_revealed": attempt.hints_revealed,
        "hints_total": len(hints),
        "hints": hints[: attempt.hints_revealed],
    }
