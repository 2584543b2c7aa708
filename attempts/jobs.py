"""The three kinds of work attempts hands to the job machinery, as its handlers: evaluating a
submission, choosing a question for a practice request, and running an answer without
submitting it. Importing this module registers them; apps.py does once the app registry is
ready."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from attempts.cache import attempt_cache_store
from attempts.models import PracticeRequest, Result, Run, Submission
from attempts.selectors.payloads import attempt_payload
from attempts.services.attempts import (
    EVALUATE,
    result_record,
    submission_lock,
    submission_mark_failed,
    submission_requeue,
    submission_start_processing,
)
from attempts.services.practice import (
    GENERATE,
    practice_request_fulfil,
    practice_request_lock,
    practice_request_mark_failed,
    practice_request_mark_processing,
    practice_request_requeue,
)
from attempts.services.runs import (
    RUN,
    run_complete,
    run_lock,
    run_mark_failed,
    run_requeue,
    run_start_processing,
)
from evaluation.evaluators import EvaluationOutcome, EvaluationRequest, get_evaluator
from evaluation.evaluators.code import code_run
from evaluation.jobs import register_handler
from interviewprep.errors import InvalidInput
from interviewprep.writes import Writes

logger = logging.getLogger(__name__)


@dataclass
class Evaluation:
    evaluator: str
    request: EvaluationRequest


def evaluation_work(submission: Submission, *, try_number: int) -> Evaluation:
    """What evaluating a stored answer needs, read now: its question's current tests or rubric.
    The evaluate and the regrade handlers both evaluate through this and `evaluation_run`."""
    question = submission.attempt.question
    return Evaluation(
        evaluator=question.evaluator,
        request=EvaluationRequest(
            question_slug=question.slug,
            question_kind=question.kind,
            prompt=question.prompt,
            spec=question.evaluation_spec,
            answer=submission.answer,
            language=submission.language,
            submission_id=submission.pk,
            try_number=try_number,
        ),
    )


def evaluation_run(work: Evaluation) -> EvaluationOutcome:
    return get_evaluator(work.evaluator).evaluate(work.request)


class SubmissionEvaluation:
    """Evaluate a submission with the evaluator its question names; the latest one wins."""

    queue = "evaluate"

    def lock(self, subject_id: int) -> Submission:
        submission = submission_lock(submission_id=subject_id)
        submission.recorded_result = None
        return submission

    def lock_key(self, submission: Submission) -> str:
        return f"attempt:{submission.attempt_id}"

    def describe(self, submission: Submission) -> dict[str, Any]:
        return {
            "attempt_id": submission.attempt_id,
            "submission_id": submission.pk,
            "question": submission.attempt.question.slug,
        }

    def discard_reason(self, submission: Submission) -> str | None:
        if submission.attempt.latest_submission_id != submission.pk:
            return "superseded by a newer submission"
        return None

    def start(self, submission: Submission, *, actor: str, try_number: int, writes: Writes) -> Evaluation:
        submission_start_processing(attempt=submission.attempt, submission=submission, actor=actor, writes=writes)
        return evaluation_work(submission, try_number=try_number)

    def run(self, work: Evaluation) -> EvaluationOutcome:
        return evaluation_run(work)

    def record(self, submission: Submission, outcome: EvaluationOutcome, *, actor: str, writes: Writes) -> str | None:
        result = result_record(
            attempt=submission.attempt,
            submission=submission,
            score=outcome.score,
            max_score=outcome.max_score,
            feedback=outcome.feedback,
            details=outcome.details,
            actor=actor,
            outcome=outcome.outcome,
            reason=outcome.reason,
            writes=writes,
        )
        if result is None:
            return "superseded by a newer submission"
        submission.recorded_result = result
        return None

    def recorded(self, submission: Submission) -> None:
        # The committed copy into the cache; a failure costs a miss, the next read recomputes.
        result: Result = submission.recorded_result
        attempt = submission.attempt
        try:
            attempt_cache_store(payload=attempt_payload(attempt, result))
        except Exception:  # noqa: BLE001 - the cache may lag, never lie
            logger.warning("cache write after result failed", exc_info=True)

    def failed(self, submission: Submission, *, actor: str, reason: str) -> None:
        submission_mark_failed(attempt=submission.attempt, submission=submission, actor=actor, reason=reason)

    def requeue(self, submission: Submission, *, actor: str, reason: str) -> None:
        submission_requeue(attempt=submission.attempt, submission=submission, actor=actor, reason=reason)


class PracticeQuestionChoice:
    """Choose a question for a practice request and open its draft attempt."""

    queue = "generate"

    def lock(self, subject_id: int) -> PracticeRequest:
        return practice_request_lock(practice_request_id=subject_id)

    def lock_key(self, request: PracticeRequest) -> str:
        return f"practice-request:{request.pk}"

    def describe(self, request: PracticeRequest) -> dict[str, Any]:
        return {"practice_request_id": request.pk, "question": request.question.slug if request.question else None}

    def discard_reason(self, request: PracticeRequest) -> str | None:
        return None

    def start(self, request: PracticeRequest, *, actor: str, try_number: int, writes: Writes) -> None:
        practice_request_mark_processing(request=request, actor=actor, writes=writes)

    def run(self, work: None) -> None:
        # The choice is made under the request's lock, when the outcome is recorded.
        return None

    def record(self, request: PracticeRequest, output: None, *, actor: str, writes: Writes) -> str | None:
        practice_request_fulfil(request=request, actor=actor)
        return None

    def recorded(self, request: PracticeRequest) -> None:
        return None

    def failed(self, request: PracticeRequest, *, actor: str, reason: str) -> None:
        practice_request_mark_failed(request=request, actor=actor, reason=reason)

    def requeue(self, request: PracticeRequest, *, actor: str, reason: str) -> None:
        practice_request_requeue(request=request, actor=actor, reason=reason)


@dataclass
class _Run:
    spec: dict[str, Any]
    answer: str
    language: str
    inputs: list[list] | None
    # The question's Python reference answer: custom inputs' expected values come from it.
    reference: str


@dataclass
class _RunOutput:
    result: dict[str, Any] | None = None
    # Why the runner would not run the inputs: the candidate's mistake, so the run fails with
    # it, and the job succeeds rather than dead-lettering for staff.
    refused: str | None = None


class RunExecution:
    """Run an answer against its question's visible examples or custom inputs; its attempt
    never hears of it."""

    queue = "run"

    def lock(self, subject_id: int) -> Run:
        return run_lock(run_id=subject_id)

    def lock_key(self, run: Run) -> str:
        return f"run:{run.pk}"

    def describe(self, run: Run) -> dict[str, Any]:
        return {"run_id": run.pk, "attempt_id": run.attempt_id, "question": run.attempt.question.slug}

    def discard_reason(self, run: Run) -> str | None:
        return None

    def start(self, run: Run, *, actor: str, try_number: int, writes: Writes) -> _Run:
        run_start_processing(run=run, actor=actor, writes=writes)
        question = run.attempt.question
        return _Run(
            spec=question.evaluation_spec,
            answer=run.answer,
            language=run.language,
            inputs=run.inputs,
            reference=question.reference_answer,
        )

    def run(self, work: _Run) -> _RunOutput:
        try:
            return _RunOutput(
                result=code_run(
                    spec=work.spec,
                    answer=work.answer,
                    inputs=work.inputs,
                    language=work.language,
                    reference=work.reference,
                )
            )
        except InvalidInput as exc:
            return _RunOutput(refused=exc.detail)

    def record(self, run: Run, output: _RunOutput, *, actor: str, writes: Writes) -> str | None:
        if output.refused is not None:
            run_mark_failed(run=run, actor=actor, reason=output.refused, writes=writes)
            return None
        return run_complete(run=run, result=output.result, actor=actor, writes=writes)

    def recorded(self, run: Run) -> None:
        return None

    def failed(self, run: Run, *, actor: str, reason: str) -> None:
        run_mark_failed(run=run, actor=actor, reason=reason)

    def requeue(self, run: Run, *, actor: str, reason: str) -> None:
        run_requeue(run=run, actor=actor, reason=reason)


register_handler(EVALUATE, SubmissionEvaluation())
register_handler(GENERATE, PracticeQuestionChoice())
register_handler(RUN, RunExecution())
