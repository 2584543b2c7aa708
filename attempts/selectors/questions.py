"""Reads of the question bank: listing with filters, and choosing what a user practises next.

How `question_choose_for_practice` relaxes a request it cannot meet exactly:

1. The kind is never relaxed. It decides the evaluator and what the candidate must produce
   (code or prose); a behavioural question is no answer to a request for coding practice.
2. Difficulty goes first, nearest level first (hard -> medium -> easy). The topic is what the
   user came to study; a medium graphs question serves "hard graphs" better than a hard
   question on strings.
3. Then the topic, keeping the requested difficulty if possible.
4. Recency last: only when every question of the kind was practised in the last
   `recent_days` does a recent one come back, the one practised longest ago first, again with
   the original filters preferred.
"""

from __future__ import annotations

import difflib
import random
from datetime import datetime, timedelta
from typing import Any

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db.models import F, JSONField, Max, Q, QuerySet, TextField
from django.db.models.functions import Cast, Lower
from django.utils import timezone

from attempts.models import Difficulty, Question, QuestionKind
from evaluation.evaluators.written import length_rule
from evaluation.languages import DEFAULT_LANGUAGE, starter_codes
from interviewprep.errors import NotFound

# Nearest level first; between two equally near, the easier one, so a relaxed choice errs
# towards a question the user can finish.
_NEAREST_DIFFICULTIES: dict[str, tuple[str, ...]] = {
    Difficulty.EASY: (Difficulty.MEDIUM, Difficulty.HARD),
    Difficulty.MEDIUM: (Difficulty.EASY, Difficulty.HARD),
    Difficulty.HARD: (Difficulty.MEDIUM, Difficulty.EASY),
}


# The search config of the `question_search` index: a query with another config cannot use it.
SEARCH_CONFIG = "english"
# A title word weighs more than a prompt word when ranking matches.
_RANKED = SearchVector("title", weight="A", config=SEARCH_CONFIG) + SearchVector(
    "prompt", weight="B", config=SEARCH_CONFIG
)
# How many near topics a topic that matches nothing is answered with.
TOPIC_SUGGESTIONS = 3


def _topics_lower_cased() -> Cast:
    # The topic list as jsonb again after lower-casing its text, so containment (`@>`) still
    # matches whole topics: "Graphs" finds ["graphs"], "graph" does not.
    return Cast(Lower(Cast("topics", output_field=TextField())), output_field=JSONField())


def question_list(
    *, kind: str | None = None, difficulty: str | None = None, topic: str | None = None, q: str | None = None
) -> QuerySet[Question]:
    """Active questions by kind, difficulty and topic (any case), and with `q` those whose title or
    prompt match its words (any case, any form of a word: "island" finds "islands"), best first."""
    questions = Question.objects.filter(is_active=True)
    if kind:
        questions = questions.filter(kind=kind)
    if difficulty:
        questions = questions.filter(difficulty=difficulty)
    if topic:
        questions = questions.alias(topics_lower=_topics_lower_cased()).filter(topics_lower__contains=[topic.lower()])
    if not q:
        return questions.order_by("id")
    # The very expression of the `question_search` index, so PostgreSQL can answer from it;
    # websearch syntax takes any text a person types without a syntax error.
    query = SearchQuery(q, config=SEARCH_CONFIG, search_type="websearch")
    matched = questions.annotate(search=SearchVector("title", "prompt", config=SEARCH_CONFIG)).filter(search=query)
    return matched.annotate(rank=SearchRank(_RANKED, query)).order_by(F("rank").desc(), "id")


def question_topics() -> list[str]:
    """The active questions' topics, each once (the first spelling met, in any case), sorted."""
    rows = Question.objects.filter(is_active=True).values_list("topics", flat=True)
    topics: dict[str, str] = {}
    for row in rows:
        for topic in row if isinstance(row, list) else []:
            if isinstance(topic, str):
                topics.setdefault(topic.casefold(), topic)
    return sorted(topics.values(), key=str.casefold)


def question_topic_suggestions(*, topic: str, topics: list[str] | None = None) -> list[str] | None:
    """None when some active question has the topic (in any case); otherwise the bank's topics
    nearest to it, perhaps none ("graph" -> ["graphs"]). `topics`: question_topics(), if read."""
    by_key = {t.casefold(): t for t in (question_topics() if topics is None else topics)}
    wanted = topic.casefold()
    if wanted in by_key:
        return None
    close = difflib.get_close_matches(wanted, list(by_key), n=TOPIC_SUGGESTIONS, cutoff=0.6)
    containing = [key for key in by_key if wanted in key]
    return [by_key[key] for key in list(dict.fromkeys([*close, *containing]))[:TOPIC_SUGGESTIONS]]


def _describe(*, kind: str | None, difficulty: str | None, topic: str | None) -> str:
    kind_label = str(QuestionKind(kind).label).lower() if kind else None
    words = [w for w in (difficulty, topic, kind_label) if w]
    return " ".join([*words, "question"])


def _pick_least_recently_practised(
    questions: QuerySet[Question], *, user: Any, recent_since: datetime | None
) -> Question | None:
    """Among `questions`, the ones this user practised longest ago (never comes first), one at
    random. With `recent_since`, questions practised since then are excluded."""
    annotated = questions.annotate(last_practised=Max("attempts__created_at", filter=Q(attempts__user=user)))
    if recent_since is not None:
        annotated = annotated.filter(Q(last_practised__isnull=True) | Q(last_practised__lt=recent_since))
    rows = list(annotated.values_list("id", "last_practised"))
    if not rows:
        return None
    never = [pk for pk, last in rows if last is None]
    if never:
        pool = never
    else:
        oldest = min(last for _, last in rows)
        pool = [pk for pk, last in rows if last == oldest]
    return Question.objects.get(pk=random.choice(pool))


def question_choose_for_practice(
    *,
    user: Any,
    kind: str | None = None,
    difficulty: str | None = None,
    topic: str | None = None,
    recent_days: int = 14,
) -> tuple[Question | None, str]:
    """Choose a question for `user`; returns (question, note). The note is empty when the
    request was met as asked, and otherwise says what was relaxed. (None, reason) only when no
    active question of the kind exists at all."""
    if not question_list(kind=kind).exists():
        what = _describe(kind=kind, difficulty=None, topic=None)
        return None, f"There is no active {what} in the bank."

    difficulties: list[str | None] = [difficulty]
    if difficulty:
        difficulties.extend(_NEAREST_DIFFICULTIES.get(difficulty, ()))
    # (difficulty, topic) pairs in the order the relaxation tries them.
    steps: list[tuple[str | None, str | None]] = [(d, topic) for d in difficulties]
    if topic:
        steps.extend((d, None) for d in difficulties)

    recent_since = timezone.now() - timedelta(days=recent_days)
    asked = _describe(kind=kind, difficulty=difficulty, topic=topic)
    asked_exists = question_list(kind=kind, difficulty=difficulty, topic=topic).exists()

    for since in (recent_since, None):
        for step_difficulty, step_topic in steps:
            candidates = question_list(kind=kind, difficulty=step_difficulty, topic=step_topic)
            question = _pick_least_recently_practised(candidates, user=user, recent_since=since)
            if question is None:
                continue
            note = _relaxation_note(
                question=question,
                asked=asked,
                asked_exists=asked_exists,
                difficulty_relaxed=step_difficulty != difficulty,
                topic_relaxed=step_topic != topic,
                recency_relaxed=since is None,
                recent_days=recent_days,
            )
            return question, note
    # Unreachable while the kind has an active question: the last step filters by kind only.
    return None, f"There is no active {_describe(kind=kind, difficulty=None, topic=None)} in the bank."


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _relaxation_note(
    *,
    question: Question,
    asked: str,
    asked_exists: bool,
    difficulty_relaxed: bool,
    topic_relaxed: bool,
    recency_relaxed: bool,
    recent_days: int,
) -> str:
    if not (difficulty_relaxed or topic_relaxed or recency_relaxed):
        return ""
    if not asked_exists:
        opening = f"There is no {asked} in the bank"
    elif difficulty_relaxed or topic_relaxed:
        opening = f"No unpractised {asked} left"
    else:
        opening = f"You practised every {asked} in the last {recent_days} days"
    if topic_relaxed:
        topics = ", ".join(question.topics) or "another topic"
        chose = f"chose {_article(question.difficulty)} {question.difficulty} one on {topics}"
    elif difficulty_relaxed:
        chose = f"chose {_article(question.difficulty)} {question.difficulty} one"
    else:
        chose = "chose the one you practised longest ago"
    if recency_relaxed and (difficulty_relaxed or topic_relaxed):
        chose += f" (everything else was practised in the last {recent_days} days)"
    return f"{opening}; {chose}."


def question_get(*, question_id: int) -> Question:
    """One active question, as the candidate may see it; a retired or missing one is not found."""
    question = Question.objects.filter(pk=question_id, is_active=True).first()
    if question is None:
        raise NotFound(f"There is no question {question_id}.")
    return question


def question_evaluator(*, question_id: int) -> str | None:
    """Which evaluator grades answers to the question (retired ones included)."""
    return Question.objects.filter(pk=question_id).values_list("evaluator", flat=True).first()


def question_starter_codes(*, question: Question) -> dict[str, str]:
    """What the editor starts with, per language: every language's starter, generated from a
    coding question's signature; none for a prose question. A coding question stored before
    signatures (its spec names only a `function`) has the Python starter it was loaded with."""
    if question.kind != QuestionKind.CODING:
        return {}
    if "signature" not in question.evaluation_spec:
        return {DEFAULT_LANGUAGE: question.starter_code} if question.starter_code else {}
    return starter_codes(question.evaluation_spec)


def question_expected_words(*, question: Question) -> dict[str, int] | None:
    """A written answer's expected length, `{"min", "max", "min_scored"}` in words, from the
    grader's own length rule (under `min_scored` an answer is not scored); None for coding."""
    if question.kind == QuestionKind.CODING:
        return None
    min_scored, low, high = length_rule(question.evaluation_spec)
    return {"min": low, "max": high, "min_scored": min_scored}
