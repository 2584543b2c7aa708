"""Choosing what a user practises next: filters, recency, and the relaxation notes."""

from __future__ import annotations

from datetime import timedelta
from itertools import count

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from attempts.models import Attempt, Question
from attempts.selectors.questions import question_choose_for_practice, question_list

pytestmark = pytest.mark.django_db

_slugs = count()


def make_question(
    kind: str = "coding", difficulty: str = "medium", topics: tuple[str, ...] = ("graphs",), *, is_active: bool = True
) -> Question:
    n = next(_slugs)
    return Question.objects.create(
        slug=f"q-{n}",
        title=f"Question {n}",
        kind=kind,
        difficulty=difficulty,
        topics=list(topics),
        prompt="p",
        evaluator="code" if kind == "coding" else "rubric",
        is_active=is_active,
    )


def make_user(name: str = "ada"):
    return get_user_model().objects.create_user(username=name, password="x")


def practise(user, question: Question, *, days_ago: float) -> Attempt:
    attempt = Attempt.objects.create(user=user, question=question)
    # created_at is auto_now_add; moving it back in time is how a test stands in for the clock.
    Attempt.objects.filter(pk=attempt.pk).update(created_at=timezone.now() - timedelta(days=days_ago))
    return attempt


def choose_many(times: int = 25, **kwargs) -> set[str]:
    return {question_choose_for_practice(**kwargs)[0].slug for _ in range(times)}


def test_question_list_filters_and_hides_inactive() -> None:
    hard_graph = make_question(difficulty="hard", topics=("graphs", "bfs"))
    make_question(difficulty="easy", topics=("strings",))
    make_question(kind="behavioral", difficulty="hard", topics=("conflict",))
    make_question(difficulty="hard", topics=("graphs",), is_active=False)

    assert list(question_list(kind="coding", difficulty="hard", topic="graphs")) == [hard_graph]
    assert list(question_list(topic="bfs")) == [hard_graph]
    assert question_list(kind="coding").count() == 2
    assert question_list().count() == 3
    assert question_list(topic="graph").count() == 0, "topics match exactly, not by substring"


def test_exact_match_comes_with_an_empty_note() -> None:
    user = make_user()
    wanted = make_question(difficulty="hard", topics=("graphs",))
    make_question(difficulty="easy", topics=("graphs",))
    make_question(difficulty="hard", topics=("strings",))

    question, note = question_choose_for_practice(user=user, kind="coding", difficulty="hard", topic="graphs")

    assert question == wanted
    assert note == ""


def test_recently_practised_questions_are_skipped() -> None:
    user = make_user()
    done = make_question()
    fresh = make_question()
    practise(user, done, days_ago=2)

    assert choose_many(user=user, kind="coding") == {fresh.slug}
    assert question_choose_for_practice(user=user, kind="coding")[1] == ""


def test_never_practised_beats_practised_long_ago_and_oldest_beats_newer() -> None:
    user = make_user()
    old = make_question()
    older = make_question()
    never = make_question()
    practise(user, old, days_ago=20)
    practise(user, older, days_ago=40)

    assert choose_many(user=user, kind="coding") == {never.slug}
    practise(user, never, days_ago=30)
    assert choose_many(user=user, kind="coding") == {older.slug}


def test_choice_is_random_among_the_equally_unpractised() -> None:
    user = make_user()
    questions = {make_question().slug for _ in range(3)}
    assert choose_many(times=60, user=user, kind="coding") == questions


def test_other_users_attempts_do_not_count() -> None:
    user, other = make_user("ada"), make_user("bob")
    only = make_question()
    practise(other, only, days_ago=1)

    assert question_choose_for_practice(user=user, kind="coding") == (only, "")


def test_difficulty_is_relaxed_first_to_the_nearest_level() -> None:
    user = make_user()
    hard = make_question(difficulty="hard", topics=("graphs",))
    medium = make_question(difficulty="medium", topics=("graphs",))
    make_question(difficulty="easy", topics=("graphs",))
    make_question(difficulty="hard", topics=("strings",))
    practise(user, hard, days_ago=1)

    question, note = question_choose_for_practice(user=user, kind="coding", difficulty="hard", topic="graphs")

    assert question == medium, "the topic is kept; the nearest difficulty wins"
    assert note == "No unpractised hard graphs coding question left; chose a medium one."


def test_topic_is_relaxed_when_no_difficulty_has_it_left() -> None:
    user = make_user()
    for difficulty in ("easy", "medium", "hard"):
        practise(user, make_question(difficulty=difficulty, topics=("graphs",)), days_ago=3)
    strings = make_question(difficulty="hard", topics=("strings",))
    make_question(difficulty="easy", topics=("arrays",))

    question, note = question_choose_for_practice(user=user, kind="coding", difficulty="hard", topic="graphs")

    assert question == strings, "with the topic relaxed, the requested difficulty is kept"
    assert note == "No unpractised hard graphs coding question left; chose a hard one on strings."


def test_recency_is_relaxed_last_and_prefers_the_original_filters() -> None:
    user = make_user()
    graphs_recent = make_question(difficulty="hard", topics=("graphs",))
    graphs_older = make_question(difficulty="hard", topics=("graphs",))
    other = make_question(difficulty="easy", topics=("strings",))
    practise(user, graphs_recent, days_ago=1)
    practise(user, graphs_older, days_ago=5)
    practise(user, other, days_ago=9)

    question, note = question_choose_for_practice(user=user, kind="coding", difficulty="hard", topic="graphs")

    assert question == graphs_older
    assert note == (
        "You practised every hard graphs coding question in the last 14 days; chose the one you practised longest ago."
    )


def test_recent_days_is_honoured() -> None:
    user = make_user()
    done = make_question()
    fresh = make_question()
    practise(user, done, days_ago=3)
    practise(user, fresh, days_ago=10)

    question, note = question_choose_for_practice(user=user, kind="coding", recent_days=7)
    assert question == fresh and note == ""


def test_a_topic_missing_from_the_bank_says_so() -> None:
    user = make_user()
    arrays = make_question(difficulty="easy", topics=("arrays",))

    question, note = question_choose_for_practice(user=user, kind="coding", topic="tries")

    assert question == arrays
    assert note == "There is no tries coding question in the bank; chose an easy one on arrays."


def test_kind_is_never_relaxed() -> None:
    user = make_user()
    make_question(kind="behavioral", difficulty="easy", topics=("conflict",))

    question, reason = question_choose_for_practice(user=user, kind="coding", difficulty="easy")

    assert question is None
    assert reason == "There is no active coding question in the bank."


def test_inactive_questions_are_never_chosen() -> None:
    user = make_user()
    make_question(is_active=False)

    assert question_choose_for_practice(user=user, kind="coding") == (
        None,
        "There is no active coding question in the bank.",
    )


def test_without_filters_any_kind_can_be_chosen() -> None:
    user = make_user()
    behavioural = make_question(kind="behavioral", topics=("conflict",))

    assert question_choose_for_practice(user=user) == (behavioural, "")
    assert question_choose_for_practice(user=make_user("bob"), kind=None)[0] == behavioural


def test_empty_bank_without_filters_explains_itself() -> None:
    assert question_choose_for_practice(user=make_user()) == (None, "There is no active question in the bank.")
