"""The catalogue page's read: one page of the bank's questions as filtered, each with the
candidate's record on it, and what the topic filter can suggest."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page, Paginator

from attempts.models import Question
from attempts.selectors.history import QuestionRecord, question_records_for_user
from attempts.selectors.questions import question_list, question_topic_suggestions, question_topics


@dataclass(frozen=True)
class CatalogueRow:
    question: Question
    record: QuestionRecord | None  # None when never scored, or for a visitor


@dataclass(frozen=True)
class Catalogue:
    page: Page
    rows: list[CatalogueRow]
    topics: list[str]  # every topic of the bank, for the filter's suggestions
    # The topic asked for when no question has it in any case, and the nearest ones instead.
    unknown_topic: str | None
    topic_suggestions: list[str]


def question_catalogue(*, user: Any, filters: dict[str, str], page_number: Any, per_page: int) -> Catalogue:
    """The page of questions matching `filters` (question_list's), with the user's best and last
    scores read in one query for the whole page; a visitor's rows carry none."""
    page = Paginator(question_list(**filters), per_page).get_page(page_number)
    questions = list(page.object_list)
    records: dict[int, QuestionRecord] = {}
    if user.is_authenticated and questions:
        records = question_records_for_user(user_id=user.pk, question_ids=[q.pk for q in questions])
    topics = question_topics()
    topic = filters.get("topic")
    suggestions = question_topic_suggestions(topic=topic, topics=topics) if topic else None
    return Catalogue(
        page=page,
        rows=[CatalogueRow(question, records.get(question.pk)) for question in questions],
        topics=topics,
        unknown_topic=topic if suggestions is not None else None,
        topic_suggestions=suggestions or [],
    )
