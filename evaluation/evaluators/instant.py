"""The instant evaluator: answers at once, for drills, benchmarks and pipeline tests.

It scores what the answer asks for (`score=NN` anywhere in it, 0-100; otherwise 100), so a
drill can tell which submission a result came from. Questions of the bank never name it.
"""

from __future__ import annotations

import re

from evaluation.evaluators.base import EvaluationOutcome, EvaluationRequest

_SCORE = re.compile(r"score=(\d{1,3})")


class InstantEvaluator:
    name = "instant"

    def evaluate(self, request: EvaluationRequest) -> EvaluationOutcome:
        match = _SCORE.search(request.answer)
        score = min(100, int(match.group(1))) if match else 100
        return EvaluationOutcome(
            score=score,
            max_score=100,
            feedback=f"instant evaluation of submission {request.submission_id}",
            details={"submission_id": request.submission_id},
        )
