"""Evaluators behind one registry: `get_evaluator(name)` returns the one a question names."""

from evaluation.evaluators.base import (
    EvaluationOutcome,
    EvaluationRequest,
    Evaluator,
    PermanentEvaluationError,
    TransientEvaluationError,
    get_evaluator,
    register,
)

__all__ = [
    "EvaluationOutcome",
    "EvaluationRequest",
    "Evaluator",
    "PermanentEvaluationError",
    "TransientEvaluationError",
    "get_evaluator",
    "register",
]
