"""Reads of mock interviews: a session with its attempts' states and, once its time is up, its
summary (each question, its score or "not submitted", and the time used)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from attempts.models import Attempt, AttemptStatus, MockInterview, Result
from interviewprep.errors import NotFound


def mock_interview_get_for_user(*, user, mock_interview_id: int) -> MockInterview:
    """One session of this user's; another user's is 'not found', like a missing one."""
    interview = MockInterview.objects.filter(pk=mock_interview_id, user=user).first()
    if interview is None:
        raise NotFound(f"There is no mock interview {mock_interview_id}.")
    return interview


def mock_interview_list_for_user(*, user) -> QuerySet[MockInterview]:
    return MockInterview.objects.filter(user=user).order_by("-started_at", "-id")


def mock_interview_created_payload(interview: MockInterview) -> dict[str, Any]:
    """The answer to a session's creation."""
    return {
        "id": interview.pk,
        "started_at": interview.started_at.isoformat(),
        "deadline": interview.deadline.isoformat(),
        "attempt_ids": list(interview.attempts.order_by("id").values_list("id", flat=True)),
    }


def _shown_result(attempt: Attempt) -> Result | None:
    # As on the attempt: only a completed attempt shows a result, its latest submission's.
    if attempt.status != AttemptStatus.COMPLETED or attempt.latest_submission is None:
        return None
    return getattr(attempt.latest_submission, "result", None)


def _summary_row(interview: MockInterview, attempt: Attempt) -> dict[str, Any]:
    latest = attempt.latest_submission
    result = _shown_result(attempt)
    return {
        "attempt_id": attempt.pk,
        "question_id": attempt.question_id,
        "title": attempt.question.title,
        "kind": attempt.question.kind,
        "submitted": latest is not None,
        "status": attempt.status,
        "outcome": result.outcome if result else None,
        "score": result.score if result else None,
        "max_score": result.max_score if result else None,
        # From the start to the last answer in time (a later one was refused).
        "time_used_seconds": round((latest.created_at - interview.started_at).total_seconds()) if latest else None,
        "hints_used": latest.hints_used if latest else 0,
        "gave_up": attempt.gave_up_at is not None,
    }


def mock_interview_payload(interview: MockInterview, *, now: datetime | None = None) -> dict[str, Any]:
    """The session as the API and its page show it, its attempts in the order they were asked.
    `summary` is None until the deadline; after it, nothing can change the answers it lists."""
    return mock_interview_payloads([interview], now=now)[0]


def mock_interview_payloads(interviews: list[MockInterview], *, now: datetime | None = None) -> list[dict[str, Any]]:
    """`mock_interview_payload` of each session, their attempts read in one query for all."""
    now = now or timezone.now()
    by_interview: dict[int, list[Attempt]] = {interview.pk: [] for interview in interviews}
    for attempt in (
        Attempt.objects.filter(mock_interview__in=list(by_interview))
        .select_related("question", "latest_submission__result")
        .order_by("id")
    ):
        by_interview[attempt.mock_interview_id].append(attempt)
    return [_payload(interview, by_interview[interview.pk], now) for interview in interviews]


def _payload(interview: MockInterview, attempts: list[Attempt], now: datetime) -> dict[str, Any]:
    finished = now >= interview.deadline
    return {
        "id": interview.pk,
        "started_at": interview.started_at.isoformat(),
        "deadline": interview.deadline.isoformat(),
        "duration_minutes": interview.duration_minutes,
        "kinds": interview.kinds,
        "difficulty": interview.difficulty or None,
        "finished": finished,
        "seconds_left": 0 if finished else int((interview.deadline - now).total_seconds()),
        "attempts": [
            {
                "id": attempt.pk,
                "question_id": attempt.question_id,
                "title": attempt.question.title,
                "kind": attempt.question.kind,
                "status": attempt.status,
                "version": attempt.version,
            }
            for attempt in attempts
        ],
        "summary": [_summary_row(interview, attempt) for attempt in attempts] if finished else None,
    }
