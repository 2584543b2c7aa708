"""Practice requests: the candidate asks for a question; a `generate` job chooses one and opens
a draft attempt for it."""

from __future__ import annotations

from typing import Any

from attempts.errors import InvalidInput
from attempts.models import (
    Attempt,
    Difficulty,
    PracticeRequest,
    PracticeRequestStatus,
    QuestionKind,
)
from attempts.services.idempotency import StoredResponse, idempotent
from attempts.services.transitions import transition


def practice_request_payload(request: PracticeRequest) -> dict[str, Any]:
    return {
        "id": request.pk,
        "status": request.status,
        "question_id": request.question_id,
        "attempt_id": request.attempt_id,
        "note": request.note,
    }


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


def practice_request_create(
    *, user, kind: Any = None, difficulty: Any = None, topic: Any = None, idempotency_key: str, fingerprint: str
) -> StoredResponse:
    from evaluation.services.jobs import evaluation_job_enqueue

    filters = practice_filters_validate(kind=kind, difficulty=difficulty, topic=topic)

    def work() -> tuple[int, dict[str, Any]]:
        request = PracticeRequest.objects.create(user=user, **filters)
        evaluation_job_enqueue(practice_request_id=request.pk, correlation_id=idempotency_key)
        return 202, {"id": request.pk, "status": request.status}

    return idempotent(user_id=user.pk, key=idempotency_key, fingerprint=fingerprint, work=work)


def _locked(practice_request_id: int) -> PracticeRequest:
    return PracticeRequest.objects.select_for_update().get(pk=practice_request_id)


def practice_request_mark_processing(*, practice_request_id: int, actor: str) -> None:
    transition(_locked(practice_request_id), PracticeRequestStatus.PROCESSING, actor=actor)


def practice_request_fulfil(*, practice_request_id: int, actor: str) -> PracticeRequest:
    """Inside the caller's fenced transaction: choose the question and open its draft attempt.
    A practice request that already has its attempt keeps it (a redelivered job changes nothing)."""
    from attempts.selectors.questions import question_choose_for_practice

    request = _locked(practice_request_id)
    if request.attempt_id is not None:
        return request
    question, note = question_choose_for_practice(
        user=request.user,
        kind=request.kind or None,
        difficulty=request.difficulty or None,
        topic=request.topic or None,
    )
    if question is None:
        transition(request, PracticeRequestStatus.FAILED, actor=actor, reason=note, changes={"note": note[:300]})
        return request
    attempt = Attempt.objects.create(user=request.user, question=question)
    transition(
        request,
        PracticeRequestStatus.COMPLETED,
        actor=actor,
        changes={"question": question, "attempt": attempt, "note": note[:300]},
    )
    return request


def practice_request_mark_failed(*, practice_request_id: int, actor: str, reason: str) -> None:
    request = _locked(practice_request_id)
    if request.status in (PracticeRequestStatus.QUEUED, PracticeRequestStatus.PROCESSING):
        transition(request, PracticeRequestStatus.FAILED, actor=actor, reason=reason)


def practice_request_requeue(*, practice_request_id: int, actor: str, reason: str) -> None:
    request = _locked(practice_request_id)
    if request.status == PracticeRequestStatus.FAILED:
        transition(request, PracticeRequestStatus.QUEUED, actor=actor, reason=reason)
