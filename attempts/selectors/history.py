"""A candidate's history of scores: the one place that says what a score counts for.

Every page and API that shows a best score, a solved mark, a progress chart or a review
schedule reads its scores here, so "solved" and "best" mean the same thing everywhere. The
history is the scored results themselves; nothing derived is stored, so a regrade or a new
rule shows at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from attempts.models import Attempt, Result, ResultOutcome

# A full score, once, makes a question solved.
SOLVED_PERCENT = 100.0


def percent_of(score: float, max_score: float) -> float:
    """A score as a share of its maximum, 0 to 100."""
    return max(0.0, min(100.0, score / max_score * 100))


def solves(percent: float) -> bool:
    """Whether a scored answer of `percent` solves its question."""
    return percent >= SOLVED_PERCENT


@dataclass(frozen=True)
class ScoredAnswer:
    """One scored submission of the candidate's, oldest first in every list of them."""

    question_id: int
    attempt_id: int
    submission_id: int
    percent: float  # 0 to 100
    scored_at: datetime


@dataclass(frozen=True)
class QuestionRecord:
    question_id: int
    best_percent: float
    last_percent: float
    scored_count: int
    last_scored_at: datetime

    @property
    def solved(self) -> bool:
        return solves(self.best_percent)


def scored_answers(*, user_id: int, question_ids: Iterable[int] | None = None) -> list[ScoredAnswer]:
    """Every scored result of the user's, oldest first. Not-scored results (blank, off-topic...)
    are evaluations, never scores, and do not appear."""
    results = Result.objects.filter(submission__attempt__user_id=user_id, outcome=ResultOutcome.SCORED)
    if question_ids is not None:
        results = results.filter(submission__attempt__question_id__in=list(question_ids))
    return [answer for _user_id, answer in _answers(results)]


def scored_answers_by_user(*, user_ids: Iterable[int]) -> dict[int, list[ScoredAnswer]]:
    """`scored_answers` of many users in one query, for work done in batches of users."""
    results = Result.objects.filter(submission__attempt__user_id__in=list(user_ids), outcome=ResultOutcome.SCORED)
    by_user: dict[int, list[ScoredAnswer]] = {}
    for user_id, answer in _answers(results):
        by_user.setdefault(user_id, []).append(answer)
    return by_user


def _answers(results: QuerySet[Result]) -> list[tuple[int, ScoredAnswer]]:
    rows = results.order_by("created_at", "id").values_list(
        "submission__attempt__user_id",
        "submission__attempt__question_id",
        "submission__attempt_id",
        "submission_id",
        "score",
        "max_score",
        "created_at",
    )
    return [
        (
            user_id,
            ScoredAnswer(
                question_id=question_id,
                attempt_id=attempt_id,
                submission_id=submission_id,
                percent=percent_of(score, max_score),
                scored_at=created_at,
            ),
        )
        for user_id, question_id, attempt_id, submission_id, score, max_score, created_at in rows
    ]


def question_records(answers: Iterable[ScoredAnswer]) -> dict[int, QuestionRecord]:
    """Best and last score per question, from answers oldest first. The best never goes down:
    a later, worse answer changes only the last."""
    records: dict[int, QuestionRecord] = {}
    for answer in answers:
        before = records.get(answer.question_id)
        records[answer.question_id] = QuestionRecord(
            question_id=answer.question_id,
            best_percent=max(answer.percent, before.best_percent if before else 0.0),
            last_percent=answer.percent,
            scored_count=(before.scored_count if before else 0) + 1,
            last_scored_at=answer.scored_at,
        )
    return records


def question_records_for_user(*, user_id: int, question_ids: Iterable[int] | None = None) -> dict[int, QuestionRecord]:
    return question_records(scored_answers(user_id=user_id, question_ids=question_ids))


def attempt_latest_for_question(*, user, question_id: int) -> Attempt | None:
    """The attempt that practising the question again continues: the user's most recent one on
    it. A mock interview's attempt never is: its deadline belongs to that session."""
    return (
        Attempt.objects.filter(user=user, question_id=question_id, mock_interview__isnull=True)
        .order_by("-created_at", "-id")
        .first()
    )
