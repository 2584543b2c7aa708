"""The attempt as the API, the pages and the cache show it."""

from __future__ import annotations

from typing import Any

from attempts.models import Attempt, AttemptStatus, PracticeRequest, Result, Submission


def result_payload(result: Result | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {
        "submission_id": result.submission_id,
        # "scored", or "not_scored" with the reason and a null score (API.md, "Written answers").
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


def attempt_api_payload(attempt: Attempt, result: Result | None) -> dict[str, Any]:
    """The attempt as the API shows it: its state (the cached copy's shape) and its language,
    which is read from the row, never cached (a draft save or a run changes it without a new
    version)."""
    return {**attempt_payload(attempt, result), "language": attempt.language}


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
