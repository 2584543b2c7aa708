"""The local grader of written answers: the rubric (written/spec.py) scored by the sentence-embedding
model in this process (minilm.py). A worker without the model refuses the job as a permanent error
saying "prose grader unavailable": it never scores with anything else."""

from __future__ import annotations

from typing import Any, ClassVar

from evaluation.evaluators import minilm
from evaluation.evaluators.base import EvaluationOutcome, EvaluationRequest
from evaluation.evaluators.written.grader import prose_grade
from evaluation.evaluators.written.spec import validate_rubric_spec

__all__ = ["RubricEvaluator", "grader_identity", "local_grade", "validate_rubric_spec"]


def grader_identity(**extra: Any) -> dict[str, Any]:
    return {"id": RubricEvaluator.name, "model": minilm.MODEL_ID, "version": minilm.VERSION, **extra}


def local_grade(request: EvaluationRequest, *, grader: dict[str, Any] | None = None) -> EvaluationOutcome:
    # The spec is checked before the model is asked for, so a broken rubric says so even on a
    # worker without the model.
    validate_rubric_spec(request.spec)
    return prose_grade(
        spec=request.spec,
        prompt=request.prompt,
        answer=request.answer,
        model=minilm.embedder(),
        thresholds=minilm.THRESHOLDS,
        grader=grader or grader_identity(),
    )


class RubricEvaluator:
    name: ClassVar[str] = "rubric"

    def evaluate(self, request: EvaluationRequest) -> EvaluationOutcome:
        return local_grade(request)
