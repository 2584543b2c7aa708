"""The attempt as the API, the pages and the cache show it."""

from __future__ import annotations

from typing import Any

from attempts.models import Attempt, AttemptStatus, MockInterview, PracticeRequest, Question, Result, Submission
from attempts.selectors.regrades import score_change_payload


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
        # Set when a regrade after a question change replaced the score (docs/api.md, "Submissions").
        "score_change": score_change_payload(result),
    }


# What the cached copy holds beyond what the API shows: whose it is, its stamp, and what says
# which other rows a read needs (`attempt_shown`).
_INTERNAL = ("user_id", "stamp", "reference_open", "mock_interview_id")


def attempt_payload(attempt: Attempt, result: Result | None) -> dict[str, Any]:
    """The attempt's cached copy: its row and its latest result, all a read of it needs but the
    texts of other rows (`attempt_shown` adds them)."""
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
        "language": attempt.language,
        "hints_revealed": attempt.hints_revealed,
        "gave_up": attempt.gave_up_at is not None,
        "user_id": attempt.user_id,
        "stamp": attempt.stamp,
        # A full score on this attempt, or "I give up": its question's reference answer opens.
        "reference_open": attempt.solved_at is not None or attempt.gave_up_at is not None,
        "mock_interview_id": attempt.mock_interview_id,
    }


def attempt_shown(payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Cached copies as the API shows them: with the question's reference answer and
    explanation once open, and the mock interview's deadline for its attempts, read in one query
    each for any number of copies, and none when no copy needs them (the texts are not even read
    before they open). Read beside the copies, never in them: they are other rows."""
    questions = {p["question_id"] for p in payloads if p["reference_open"]}
    references = {
        pk: {"answer": answer, "explanation": explanation}
        for pk, answer, explanation in (
            Question.objects.filter(pk__in=questions).values_list("pk", "reference_answer", "explanation")
            if questions
            else ()
        )
    }
    interviews = {p["mock_interview_id"] for p in payloads if p["mock_interview_id"]}
    deadlines = dict(
        MockInterview.objects.filter(pk__in=interviews).values_list("pk", "deadline") if interviews else ()
    )
    shown = []
    for payload in payloads:
        row = {k: v for k, v in payload.items() if k not in _INTERNAL}
        row["reference"] = references.get(payload["question_id"]) if payload["reference_open"] else None
        mock_id = payload["mock_interview_id"]
        row["mock_interview"] = {"id": mock_id, "deadline": deadlines[mock_id].isoformat()} if mock_id else None
        shown.append(row)
    return shown


def attempt_api_payload(attempt: Attempt, result: Result | None) -> dict[str, Any]:
    """One attempt as the API shows it, from its row and its latest result in hand."""
    return attempt_shown([attempt_payload(attempt, result)])[0]


def attempt_payload_from_db(*, attempt_id: int) -> dict[str, Any] | None:
    attempt = Attempt.objects.filter(pk=attempt_id).first()
    if attempt is None:
        return None
    result = None
    if attempt.latest_submission_id is not None:
        result = Result.objects.filter(submission_id=attempt.latest_submission_id).first()
    return attempt_payload(attempt, result)


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
