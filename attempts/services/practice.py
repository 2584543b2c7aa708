"""Practice requests: the candidate asks for a question; a `generate` job chooses one and opens
a draft attempt for it, or continues the candidate's attempt on it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from attempts.models import (
    Difficulty,
    PracticeRequest,
    PracticeRequestStatus,
    Question,
    QuestionKind,
)
from attempts.selectors.questions import question_choose_for_practice, question_list
from attempts.selectors.reviews import review_list_for_user, review_next_upcoming
from attempts.services.admission import fair_share
from attempts.services.attempts import attempt_continue_or_create
from attempts.services.transitions import transition
from evaluation.jobs import job_enqueue
from interviewprep.errors import InvalidInput
from interviewprep.writes import Writes

# The job kind that chooses a question for a practice request (its handler: attempts/jobs.py).
GENERATE = "generate"


def practice_filters_validate(*, kind: Any, difficulty: Any, topic: Any) -> dict[str, str]:
    filters = {"kind": kind or "", "difficulty": difficulty or "", "topic": topic or ""}
    if not all(isinstance(v, str) for v in filters.values()):
        raise InvalidInput("kind, difficulty and topic must be strings when given.")
    if filters["kind"] and filters["kind"] not in QuestionKind.values:
        raise InvalidInput(f"kind must be one of {', '.join(QuestionKind.values)}.", field="kind")
    if filters["difficulty"] and filters["difficulty"] not in Difficulty.values:
        raise InvalidInput(f"difficulty must be one of {', '.join(Difficulty.values)}.", field="difficulty")
    if len(filters["topic"]) > 60:
        raise InvalidInput("topic must be at most 60 characters.", field="topic")
    return filters


def practice_due_validate(*, due: Any) -> bool:
    if due is None:
        return False
    if not isinstance(due, bool):
        raise InvalidInput("due must be true or false.", field="due")
    return due


def practice_request_create(
    *,
    user,
    kind: Any = None,
    difficulty: Any = None,
    topic: Any = None,
    due: Any = False,
    correlation_id: str = "",
) -> PracticeRequest:
    """A practice request and the job that will choose its question, in one transaction."""
    filters = practice_filters_validate(kind=kind, difficulty=difficulty, topic=topic)
    due = practice_due_validate(due=due)
    with transaction.atomic():
        request = PracticeRequest.objects.create(user=user, due=due, **filters)
        job_enqueue(kind=GENERATE, subject_id=request.pk, share_key=fair_share(user), correlation_id=correlation_id)
    return request


def practice_request_lock(*, practice_request_id: int) -> PracticeRequest:
    return PracticeRequest.objects.select_for_update().get(pk=practice_request_id)


def practice_request_mark_processing(*, request: PracticeRequest, actor: str, writes: Writes | None = None) -> None:
    transition(request, PracticeRequestStatus.PROCESSING, actor=actor, writes=writes)


def practice_request_fulfil(*, request: PracticeRequest, actor: str) -> PracticeRequest:
    """Inside the caller's fenced transaction, the request locked: choose the question and open
    its attempt: the candidate's most recent one on it when there is one (no stray draft), else
    a new draft. A request that already has its attempt keeps it (a redelivered job changes
    nothing)."""
    if request.attempt_id is not None:
        return request
    if request.due:
        question, note = practice_due_choose(
            user_id=request.user_id,
            kind=request.kind or None,
            difficulty=request.difficulty or None,
            topic=request.topic or None,
        )
    else:
        question, note = question_choose_for_practice(
            user=request.user,
            kind=request.kind or None,
            difficulty=request.difficulty or None,
            topic=request.topic or None,
        )
    if question is None:
        transition(request, PracticeRequestStatus.FAILED, actor=actor, reason=note, changes={"note": note[:300]})
        return request
    attempt = attempt_continue_or_create(user=request.user, question_id=question.pk)
    transition(
        request,
        PracticeRequestStatus.COMPLETED,
        actor=actor,
        changes={"question": question, "attempt": attempt, "note": note[:300]},
    )
    return request


def practice_due_choose(
    *,
    user_id: int,
    kind: str | None = None,
    difficulty: str | None = None,
    topic: str | None = None,
    now: datetime | None = None,
) -> tuple[Question | None, str]:
    """The most overdue question of the user's review schedule (among those the filters match,
    when given), or none and why: nothing due fails the request with a note saying when the next
    review is due."""
    now = now or timezone.now()
    schedule = review_list_for_user(user_id=user_id)
    if kind or difficulty or topic:
        matching = set(question_list(kind=kind, difficulty=difficulty, topic=topic).values_list("pk", flat=True))
        schedule = [review for review in schedule if review.question_id in matching]
    due = [review for review in schedule if review.is_due(now)]
    if due:
        return Question.objects.get(pk=due[0].question_id), "The most overdue question of your review schedule."
    upcoming = review_next_upcoming(schedule, now=now)
    if upcoming is None:
        return None, "Nothing is due for review: answer a question first, and it will come back when it is due."
    return None, f"Nothing is due for review yet; the next review is due {upcoming.due_at:%d %B %Y, %H:%M} UTC."


def practice_request_mark_failed(*, request: PracticeRequest, actor: str, reason: str) -> None:
    if request.status in (PracticeRequestStatus.QUEUED, PracticeRequestStatus.PROCESSING):
        transition(request, PracticeRequestStatus.FAILED, actor=actor, reason=reason)


def practice_request_requeue(*, request: PracticeRequest, actor: str, reason: str) -> None:
    if request.status == PracticeRequestStatus.FAILED:
        transition(request, PracticeRequestStatus.QUEUED, actor=actor, reason=reason)
