"""The instant evaluator: answers at once, for drills, benchmarks and pipeline tests.

It scores what the answer asks for (`score=NN` anywhere in it, 0-100; otherwise 100), so a
drill can tell which submission a result came from; `transient=N` makes its first N tries fail
with a transient error and `permanent` makes every try fail for good. Questions of the bank
never name it.
"""

from __future__ import annotations

import re

from evaluation.evaluators.base import (
    EvaluationOutcome,
    EvaluationRequest,
    PermanentEvaluationError,
    TransientEvaluationError,
)

_SCORE = re.compile(r"score=(\d{1,3})")
_TRANSIENT = re.compile(r"transient=(\d{1,2})")


class InstantEvaluator:
    name = "instant"

    def evaluate(self, request: EvaluationRequest) -> EvaluationOutcome:
        failing = _TRANSIENT.search(request.answer)
        if failing and request.try_number <= int(failing.group(1)):
            raise TransientEvaluationError(f"asked to fail try {request.try_number} of {failing.group(1)}")
        if "permanent" in request.answer:
            raise PermanentEvaluationError("asked to fail for good")
        match = _SCORE.search(request.answer)
        score = min(100, int(match.group(1))) if match else 100
        return EvaluationOutcome(
            score=score,
            max_score=100,
            feedback=f"instant evaluation of submission {request.submission_id}",
            details={"submission_id": request.submission_id},
        )
