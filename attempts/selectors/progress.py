"""A candidate's progress: solved counts and best scores by kind, difficulty and topic, and
scores day by day. Read from the history (history.py), which alone says what best and solved
mean; nothing here is stored."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date

from django.db.models import Q

from attempts.models import Difficulty, Question, QuestionKind
from attempts.selectors.history import QuestionRecord, ScoredAnswer, question_records, scored_answers


@dataclass(frozen=True)
class ProgressGroup:
    """One kind, difficulty or topic: its questions, how many were practised and solved, and
    the mean of their best scores (null when none was practised)."""

    key: str
    label: str
    questions: int
    practised: int
    solved: int
    average_best_score: float | None


@dataclass(frozen=True)
class ProgressDay:
    """The scored answers of one day (UTC)."""

    day: date
    answers: int
    average_score: float
    best_score: float


@dataclass(frozen=True)
class Progress:
    questions: int
    practised: int
    solved: int
    scored_answers: int
    by_kind: list[ProgressGroup]
    by_difficulty: list[ProgressGroup]
    by_topic: list[ProgressGroup]
    over_time: list[ProgressDay]


def progress_for_user(*, user_id: int) -> Progress:
    answers = scored_answers(user_id=user_id)
    records = question_records(answers)
    # The bank as it is, plus any retired question the candidate practised: what they did counts.
    questions = list(
        Question.objects.filter(Q(is_active=True) | Q(pk__in=list(records))).only("kind", "difficulty", "topics")
    )
    return Progress(
        questions=len(questions),
        practised=len(records),
        solved=sum(1 for record in records.values() if record.solved),
        scored_answers=len(answers),
        by_kind=_groups(questions, records, key=lambda q: [q.kind], labels=dict(QuestionKind.choices)),
        by_difficulty=_groups(questions, records, key=lambda q: [q.difficulty], labels=dict(Difficulty.choices)),
        by_topic=_groups(questions, records, key=_topics, labels={}),
        over_time=_days(answers),
    )


def _topics(question: Question) -> list[str]:
    # Topics match in any case (`topic=`), so "Graphs" and "graphs" are one topic here too.
    return sorted({str(topic).lower() for topic in question.topics or [] if str(topic).strip()})


def _groups(
    questions: Iterable[Question],
    records: dict[int, QuestionRecord],
    *,
    key: Callable[[Question], list[str]],
    labels: dict[str, str],
) -> list[ProgressGroup]:
    """Groups in the order of `labels` (the choices' order), then any other key by name."""
    members: dict[str, list[Question]] = {name: [] for name in labels}
    for question in questions:
        for name in key(question):
            members.setdefault(name, []).append(question)
    groups = []
    for name in [*labels, *sorted(set(members) - set(labels))]:
        practised = [records[q.pk] for q in members[name] if q.pk in records]
        groups.append(
            ProgressGroup(
                key=name,
                label=str(labels.get(name, name)),
                questions=len(members[name]),
                practised=len(practised),
                solved=sum(1 for record in practised if record.solved),
                average_best_score=(
                    round(sum(record.best_percent for record in practised) / len(practised), 1) if practised else None
                ),
            )
        )
    return groups


def _days(answers: Iterable[ScoredAnswer]) -> list[ProgressDay]:
    days: dict[date, list[float]] = {}
    for answer in answers:
        days.setdefault(answer.scored_at.astimezone(UTC).date(), []).append(answer.percent)
    return [
        ProgressDay(
            day=day, answers=len(scores), average_score=round(sum(scores) / len(scores), 1), best_score=max(scores)
        )
        for day, scores in sorted(days.items())
    ]
