"""The one interface every evaluator implements, and the registry that finds them.

An evaluator is pure with respect to the database: it gets an `EvaluationRequest` built from
plain data and returns an `EvaluationOutcome`, or raises `TransientEvaluationError` (the job is
retried with backoff) or `PermanentEvaluationError` (the job goes to the dead letters at once).
Any other exception is treated as permanent. The pipeline, not the evaluator, writes results.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from evaluation.jobs.errors import PermanentJobError, TransientJobError


class TransientEvaluationError(TransientJobError):
    """Worth retrying: a timeout, a dependency down, a rate limit."""


class PermanentEvaluationError(PermanentJobError):
    """Retrying cannot help: bad payload, missing data, the sandbox unavailable."""


@dataclass(frozen=True)
class EvaluationRequest:
    question_slug: str
    question_kind: str  # coding, system_design, behavioral
    prompt: str
    spec: dict[str, Any]  # the question's evaluation_spec: hidden tests or rubric
    answer: str
    submission_id: int | None = None
    language: str = "python"  # an id of evaluation.languages.LANGUAGES
    try_number: int = 1


SCORED = "scored"
NOT_SCORED = "not_scored"
# Why an answer was evaluated but given no score (docs/written-answers.md, "How an answer is graded").
NOT_SCORED_REASONS = ("blank", "too_short", "off_topic", "not_english")


@dataclass
class EvaluationOutcome:
    """A score out of `max_score`, or (outcome "not_scored") no score and the reason why."""

    score: float | None
    max_score: float
    feedback: str
    details: dict[str, Any] = field(default_factory=dict)
    outcome: str = SCORED
    reason: str = ""

    def __post_init__(self) -> None:
        if self.max_score <= 0:
            raise PermanentEvaluationError(f"evaluator returned max_score {self.max_score}")
        if self.outcome == SCORED:
            if self.score is None or not 0 <= self.score <= self.max_score or self.reason:
                raise PermanentEvaluationError(
                    f"evaluator returned score {self.score} outside 0..{self.max_score} (or a reason with a score)"
                )
        elif self.outcome == NOT_SCORED:
            if self.score is not None or self.reason not in NOT_SCORED_REASONS:
                raise PermanentEvaluationError(
                    f"a not-scored outcome has no score and a reason in {NOT_SCORED_REASONS}, not {self.reason!r}"
                )
        else:
            raise PermanentEvaluationError(f"evaluator returned an unknown outcome {self.outcome!r}")

    @classmethod
    def not_scored(
        cls, *, reason: str, feedback: str, max_score: float, details: dict[str, Any] | None = None
    ) -> EvaluationOutcome:
        return cls(
            score=None, max_score=max_score, feedback=feedback, details=details or {}, outcome=NOT_SCORED, reason=reason
        )


class Evaluator(Protocol):
    name: ClassVar[str]

    def evaluate(self, request: EvaluationRequest) -> EvaluationOutcome: ...


# name -> "module:Class". Modules import lazily so a worker loads only what it uses.
_REGISTRY: dict[str, str] = {
    "code": "evaluation.evaluators.code:CodeRunnerEvaluator",
    "rubric": "evaluation.evaluators.rubric:RubricEvaluator",
    "remote": "evaluation.evaluators.remote:RemoteModelEvaluator",
    "instant": "evaluation.evaluators.instant:InstantEvaluator",
}
_INSTANCES: dict[str, Evaluator] = {}


def register(name: str, target: str) -> None:
    _REGISTRY[name] = target
    _INSTANCES.pop(name, None)


def get_evaluator(name: str) -> Evaluator:
    if name in _INSTANCES:
        return _INSTANCES[name]
    try:
        target = _REGISTRY[name]
    except KeyError:
        raise PermanentEvaluationError(f"no evaluator named {name!r}") from None
    module_name, _, class_name = target.partition(":")
    evaluator = getattr(importlib.import_module(module_name), class_name)()
    _INSTANCES[name] = evaluator
    return evaluator
