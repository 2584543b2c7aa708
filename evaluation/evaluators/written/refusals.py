"""Answers the grader evaluates but does not score, each with the reason in words: blank, too
short, off-topic, not English. They end `completed` and stay in the history, never as a score."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evaluation.evaluators.base import EvaluationOutcome
from evaluation.evaluators.written.text import Insights, looks_not_english, words


@dataclass(frozen=True)
class Refusal:
    reason: str  # one of base.NOT_SCORED_REASONS
    feedback: str


def refusal_by_text(text: str, *, min_scored_words: int, min_words: int, max_words: int) -> Refusal | None:
    """The refusals that need no model, in the order a person would name them."""
    count = len(words(text))
    if count == 0:
        return Refusal("blank", "The answer is blank, so there is nothing to score. Write your answer and submit it.")
    if looks_not_english(text):
        return Refusal(
            "not_english",
            "The answer does not read as English, and the grader reads only English. Answer in English to be scored.",
        )
    if count < min_scored_words:
        return Refusal(
            "too_short",
            f"The answer has {count} words; it needs at least {min_scored_words} to be scored. "
            f"A full answer takes {min_words} to {max_words} words.",
        )
    return None


def off_topic_message() -> str:
    return (
        "The answer does not seem to be about this question, so it was not scored. "
        "Read the question again and answer what it asks."
    )


def not_scored(refusal: Refusal, *, max_score: float, grader: dict[str, Any], insights: Insights) -> EvaluationOutcome:
    return EvaluationOutcome.not_scored(
        reason=refusal.reason,
        feedback=refusal.feedback,
        max_score=max_score,
        details={"grader": grader, "criteria": [], "insights": insights.as_dict()},
    )
