"""The review schedule: when each question the candidate practised is due again (FSRS).

Nothing of it is stored. Each question's scored answers (the history, oldest first) are replayed
through an FSRS scheduler, one review per scored answer, so a regrade or a change of the
parameters below reschedules everything at the next read. Only the due count is kept (a beat
task's `ReviewDueCount`, for the home page), and it is rebuilt from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

from django.utils import timezone
from fsrs import Card, Rating, Scheduler

from attempts.models import Attempt, Question, ReviewDueCount
from attempts.selectors.attempts import EditorTexts, attempt_editor_texts_for_user
from attempts.selectors.history import ScoredAnswer, question_records, scored_answers

# The scheduler's parameters, the one place they are set: changing them reschedules every
# question, since every due date is replayed from the history.
SCHEDULER_PARAMETERS = {
    "desired_retention": 0.9,
    # An interview question is not a flash card: the shortest wait worth scheduling is a day,
    # so no minute-long learning steps; an answer rated Again comes back the next day.
    "learning_steps": (),
    "relearning_steps": (),
    "maximum_interval": 365,
    # Fuzz is random: a schedule rebuilt on every read must come out the same every time.
    "enable_fuzzing": False,
}

# `?from=review` on an attempt's page: opened from the review list (review_editor_texts).
REVIEW_OPENING = "review"
REVIEW_QUERY = f"?from={REVIEW_OPENING}"

# Score (percent) -> rating, highest floor first. Below 40 the answer missed the point (Again);
# 40-69 got there with gaps (Hard); 70-89 is a sound answer (Good); 90 and up was easy.
RATING_FLOORS: tuple[tuple[float, Rating], ...] = (
    (90.0, Rating.Easy),
    (70.0, Rating.Good),
    (40.0, Rating.Hard),
    (0.0, Rating.Again),
)


@dataclass(frozen=True)
class Review:
    """One question of the schedule: when it is due, and the scores it was scheduled from."""

    question_id: int
    due_at: datetime
    best_score: float
    last_score: float
    reviews: int
    last_attempt_id: int

    def is_due(self, now: datetime) -> bool:
        return self.due_at <= now


@cache
def review_scheduler() -> Scheduler:
    return Scheduler(**SCHEDULER_PARAMETERS)


def review_rating(percent: float) -> Rating:
    return next(rating for floor, rating in RATING_FLOORS if percent >= floor)


def review_schedule(answers: Iterable[ScoredAnswer], *, active_question_ids: set[int]) -> list[Review]:
    """Each active question's review, from one user's scored answers oldest first; soonest due
    first (then by question, so pages and the API list them in one stable order). A retired
    question leaves the schedule: it can no longer be practised."""
    answers = [answer for answer in answers if answer.question_id in active_question_ids]
    scheduler = review_scheduler()
    cards: dict[int, Card] = {}
    last_attempts: dict[int, int] = {}
    for answer in answers:
        # card_id given: fsrs would otherwise stamp one from the clock, sleeping a millisecond.
        card = cards.get(answer.question_id) or Card(card_id=answer.question_id, due=answer.scored_at)
        cards[answer.question_id], _log = scheduler.review_card(
            card, review_rating(answer.percent), review_datetime=answer.scored_at.astimezone(UTC)
        )
        last_attempts[answer.question_id] = answer.attempt_id
    records = question_records(answers)
    reviews = [
        Review(
            question_id=question_id,
            due_at=card.due,
            best_score=records[question_id].best_percent,
            last_score=records[question_id].last_percent,
            reviews=records[question_id].scored_count,
            last_attempt_id=last_attempts[question_id],
        )
        for question_id, card in cards.items()
    ]
    return sorted(reviews, key=lambda review: (review.due_at, review.question_id))


def review_list_for_user(*, user_id: int) -> list[Review]:
    return review_schedule(scored_answers(user_id=user_id), active_question_ids=active_question_ids())


def review_due_list_for_user(*, user_id: int, now: datetime | None = None) -> list[Review]:
    """The reviews due at `now`, most overdue first."""
    now = now or timezone.now()
    return [review for review in review_list_for_user(user_id=user_id) if review.is_due(now)]


def review_next_upcoming(reviews: Iterable[Review], *, now: datetime) -> Review | None:
    return next((review for review in reviews if not review.is_due(now)), None)


def active_question_ids() -> set[int]:
    return set(Question.objects.filter(is_active=True).values_list("id", flat=True))


def review_questions(reviews: Iterable[Review]) -> dict[int, Question]:
    """The questions of some reviews, for the pages' titles and badges."""
    ids = [review.question_id for review in reviews]
    return {
        question.pk: question for question in Question.objects.filter(pk__in=ids).only("title", "kind", "difficulty")
    }


def review_due_count_for_user(*, user_id: int) -> int:
    """The home page's count: the beat task's last one (0 until it has counted this user)."""
    return ReviewDueCount.objects.filter(user_id=user_id).values_list("due", flat=True).first() or 0


def review_opening(query: Mapping[str, str]) -> dict[str, Any] | None:
    """How an attempt's page was opened, from its query: from the review list (`?from=review`),
    with the last answer loaded (`&answer=last`) or not; None otherwise."""
    if query.get("from") != REVIEW_OPENING:
        return None
    return {
        "loaded": query.get("answer") == "last",
        "starter_query": REVIEW_QUERY,
        "last_answer_query": f"{REVIEW_QUERY}&answer=last",
    }


def review_editor_texts(*, user, attempt_id: int, starters: dict[str, str], last_answer: bool) -> EditorTexts:
    """What the editor opens with when the attempt is opened from the review list: every
    language on its starter, so the question is answered afresh; with `last_answer`, the
    attempt's latest answer instead, in its language."""
    opened = attempt_editor_texts_for_user(user=user, attempt_id=attempt_id, starters=starters)
    latest = (
        Attempt.objects.filter(pk=attempt_id, user=user, latest_submission__isnull=False)
        .values_list("latest_submission__answer", "latest_submission__language")
        .first()
    )
    if not last_answer or latest is None:
        return EditorTexts(opened.language, {}, None)
    answer, language = latest
    language = language if not starters or language in starters else opened.language
    return EditorTexts(language, {language: answer}, None)
