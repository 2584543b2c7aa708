"""The review schedule (FSRS), replayed from the history with an injected clock; its API, its
page, the due count of the beat task, and a practice request for what is due.

Expected intervals come from FSRS 6's published default parameters: a first review's stability
is w0..w3 = 0.212 (Again), 1.2931 (Hard), 2.3065 (Good), 8.2956 (Easy) days, and at a desired
retention of 0.9 the interval is the stability rounded to whole days, at least one: 1, 1, 2, 8.
"""

from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings
from django.db import transaction

from attempts.models import PracticeRequest, Result, ResultOutcome, ReviewDueCount, Submission, SubmissionStatus
from attempts.selectors import reviews
from attempts.selectors.reviews import review_due_list_for_user, review_list_for_user, review_rating
from attempts.services.practice import (
    practice_due_choose,
    practice_request_create,
    practice_request_fulfil,
    practice_request_mark_processing,
)
from attempts.services.reviews import review_due_counts_refresh
from attempts.tasks import refresh_review_due_counts
from tests.factories import AttemptFactory, CodingQuestionFactory, QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


def scored(attempt, percent, at, *, outcome=ResultOutcome.SCORED, answer="my answer", language="python"):
    submission = Submission.objects.create(
        attempt=attempt, answer=answer, language=language, status=SubmissionStatus.COMPLETED
    )
    reason = "" if outcome == ResultOutcome.SCORED else "off_topic"
    score = percent if outcome == ResultOutcome.SCORED else None
    result = Result.objects.create(submission=submission, score=score, max_score=100, outcome=outcome, reason=reason)
    Result.objects.filter(pk=result.pk).update(created_at=at)
    type(attempt).objects.filter(pk=attempt.pk).update(latest_submission=submission, status="completed")
    return result


@pytest.mark.parametrize(
    ("percent", "rating"),
    [
        (0, "Again"),
        (39.9, "Again"),
        (40, "Hard"),
        (69.9, "Hard"),
        (70, "Good"),
        (89.9, "Good"),
        (90, "Easy"),
        (100, "Easy"),
    ],
)
def test_a_score_becomes_a_rating_by_its_band(percent, rating):
    assert review_rating(percent).name == rating


def test_a_first_answer_is_due_again_after_the_interval_its_score_earns():
    user = UserFactory()
    easy, good, hard, again = (AttemptFactory(user=user) for _ in range(4))
    scored(easy, 100, T0)
    scored(good, 80, T0)
    scored(hard, 50, T0)
    scored(again, 10, T0)
    due = {review.question_id: review.due_at for review in review_list_for_user(user_id=user.pk)}
    assert due == {
        easy.question_id: T0 + timedelta(days=8),
        good.question_id: T0 + timedelta(days=2),
        hard.question_id: T0 + timedelta(days=1),
        again.question_id: T0 + timedelta(days=1),
    }


def test_every_scored_answer_is_a_review_and_a_strong_one_on_time_pushes_the_next_further():
    user = UserFactory()
    attempt = AttemptFactory(user=user)
    scored(attempt, 100, T0)
    scored(attempt, 100, T0 + timedelta(days=8))
    [review] = review_list_for_user(user_id=user.pk)
    assert review.reviews == 2
    assert review.due_at > T0 + timedelta(days=16)  # the second interval is longer than the first


def test_every_kind_of_question_gets_a_due_date_soonest_first():
    user = UserFactory()
    behavioural = AttemptFactory(user=user, question=QuestionFactory(kind="behavioral"))
    coding = AttemptFactory(user=user, question=CodingQuestionFactory())
    design = AttemptFactory(user=user, question=QuestionFactory(kind="system_design"))
    scored(behavioural, 95, T0)
    scored(coding, 75, T0)
    scored(design, 20, T0)
    assert [r.question_id for r in review_list_for_user(user_id=user.pk)] == [
        design.question_id,
        coding.question_id,
        behavioural.question_id,
    ]


def test_best_and_last_scores_come_from_the_history_and_only_the_users_own():
    user, other = UserFactory(), UserFactory()
    question = QuestionFactory()
    scored(AttemptFactory(user=user, question=question), 90, T0)
    scored(AttemptFactory(user=user, question=question), 30, T0 + timedelta(days=1))
    scored(AttemptFactory(user=other, question=question), 100, T0)
    [review] = review_list_for_user(user_id=user.pk)
    assert (review.best_score, review.last_score, review.reviews) == (90.0, 30.0, 2)


def test_a_not_scored_answer_is_no_review_and_a_retired_question_leaves_the_schedule():
    user = UserFactory()
    kept, retired = AttemptFactory(user=user), AttemptFactory(user=user)
    scored(kept, 100, T0)
    scored(kept, None, T0 + timedelta(days=1), outcome=ResultOutcome.NOT_SCORED)
    scored(retired, 100, T0)
    retired.question.is_active = False
    retired.question.save()
    [review] = review_list_for_user(user_id=user.pk)
    assert (review.question_id, review.reviews, review.due_at) == (kept.question_id, 1, T0 + timedelta(days=8))


def test_a_regrade_reschedules_at_the_next_read():
    user = UserFactory()
    result = scored(AttemptFactory(user=user), 100, T0)
    assert review_list_for_user(user_id=user.pk)[0].due_at == T0 + timedelta(days=8)
    Result.objects.filter(pk=result.pk).update(score=10)
    assert review_list_for_user(user_id=user.pk)[0].due_at == T0 + timedelta(days=1)


def test_changing_the_schedulers_parameters_rebuilds_every_due_date(monkeypatch):
    user = UserFactory()
    scored(AttemptFactory(user=user), 100, T0)
    # At a higher desired retention a card comes back sooner than its stability.
    monkeypatch.setitem(reviews.SCHEDULER_PARAMETERS, "desired_retention", 0.97)
    reviews.review_scheduler.cache_clear()
    try:
        assert review_list_for_user(user_id=user.pk)[0].due_at < T0 + timedelta(days=8)
    finally:
        monkeypatch.undo()
        reviews.review_scheduler.cache_clear()
    assert review_list_for_user(user_id=user.pk)[0].due_at == T0 + timedelta(days=8)


def test_due_now_follows_the_injected_clock():
    user = UserFactory()
    soon, later = AttemptFactory(user=user), AttemptFactory(user=user)
    scored(soon, 10, T0)
    scored(later, 100, T0)
    assert review_due_list_for_user(user_id=user.pk, now=T0 + timedelta(hours=23)) == []
    assert [r.question_id for r in review_due_list_for_user(user_id=user.pk, now=T0 + timedelta(days=1))] == [
        soon.question_id
    ]
    assert len(review_due_list_for_user(user_id=user.pk, now=T0 + timedelta(days=8))) == 2


# --- the API --------------------------------------------------------------------------------


def test_reviews_api_lists_every_practised_question_soonest_first_paginated(api_client_for):
    user = UserFactory()
    first, second = AttemptFactory(user=user), AttemptFactory(user=user)
    scored(second, 100, T0)
    scored(first, 50, T0)
    scored(AttemptFactory(), 50, T0)  # someone else's
    client = api_client_for(user)
    body = client.get("/api/v1/reviews/?page_size=1").json()
    assert body["count"] == 2
    assert body["results"] == [
        {
            "question_id": first.question_id,
            "due_at": "2025-03-04T09:00:00Z",
            "best_score": 50.0,
            "last_score": 50.0,
            "reviews": 1,
        }
    ]
    assert client.get("/api/v1/reviews/?page=2&page_size=1").json()["results"][0]["question_id"] == second.question_id
    assert client.get("/api/v1/reviews/?page_size=0").status_code == 400


def test_reviews_due_api_lists_only_what_is_due_now(api_client_for):
    user = UserFactory()
    now = datetime.now(UTC)
    overdue, fresh = AttemptFactory(user=user), AttemptFactory(user=user)
    scored(overdue, 10, now - timedelta(days=3))
    scored(fresh, 100, now - timedelta(hours=1))
    body = api_client_for(user).get("/api/v1/reviews/due/").json()
    assert [row["question_id"] for row in body["results"]] == [overdue.question_id]


def test_reviews_api_needs_a_token(client):
    response = client.get("/api/v1/reviews/due/")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"


# --- the due count the beat task keeps ------------------------------------------------------


def test_due_counts_are_recomputed_for_every_user_with_history_in_batches():
    alice, bob, carol = UserFactory(), UserFactory(), UserFactory()
    scored(AttemptFactory(user=alice), 10, T0)
    scored(AttemptFactory(user=alice), 20, T0)
    scored(AttemptFactory(user=alice), 100, T0)
    scored(AttemptFactory(user=bob), 100, T0)
    now = T0 + timedelta(days=2)
    assert review_due_counts_refresh(now=now, batch_size=1) == 2
    counts = {row.user_id: (row.due, row.next_due_at, row.computed_at) for row in ReviewDueCount.objects.all()}
    assert counts == {alice.pk: (2, T0 + timedelta(days=8), now), bob.pk: (0, T0 + timedelta(days=8), now)}
    assert carol.pk not in counts
    # Run again later: the same rows, updated.
    assert review_due_counts_refresh(now=T0 + timedelta(days=9)) == 2
    assert ReviewDueCount.objects.get(user=bob).due == 1
    assert ReviewDueCount.objects.count() == 2


def test_a_users_count_drops_to_zero_when_a_regrade_takes_the_last_score():
    user = UserFactory()
    result = scored(AttemptFactory(user=user), 10, T0)
    review_due_counts_refresh(now=T0 + timedelta(days=2))
    assert ReviewDueCount.objects.get(user=user).due == 1
    Result.objects.filter(pk=result.pk).update(outcome=ResultOutcome.NOT_SCORED, score=None, reason="off_topic")
    review_due_counts_refresh(now=T0 + timedelta(days=3))
    row = ReviewDueCount.objects.get(user=user)
    assert (row.due, row.next_due_at) == (0, None)


def test_the_due_count_task_is_registered_and_scheduled_by_beat():
    entry = settings.CELERY_BEAT_SCHEDULE["refresh-review-due-counts"]
    assert entry["task"] == refresh_review_due_counts.name == "attempts.tasks.refresh_review_due_counts"
    assert entry["options"]["queue"] == "ops"
    user = UserFactory()
    scored(AttemptFactory(user=user), 10, T0)
    assert refresh_review_due_counts() == 1
    assert ReviewDueCount.objects.get(user=user).due == 1


def test_home_page_shows_the_due_count_linking_to_the_review_list(client):
    user = UserFactory()
    client.force_login(user)
    assert "due for review" not in client.get("/").content.decode()
    ReviewDueCount.objects.create(user=user, due=2, computed_at=T0)
    page = client.get("/").content.decode()
    assert '<a href="/review/">2 due for review</a>' in page


# --- practising what is due -----------------------------------------------------------------


@pytest.mark.parametrize("payload", [{"due": "yes"}, {"due": 1}])
def test_due_not_a_boolean_is_400(api_client_for, payload):
    response = api_client_for(UserFactory()).post(
        "/api/v1/practice-requests/", payload, format="json", HTTP_IDEMPOTENCY_KEY="k"
    )
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert not PracticeRequest.objects.exists()


def test_a_due_practice_request_is_accepted_and_filters_still_work(api_client_for):
    client = api_client_for(UserFactory())
    response = client.post("/api/v1/practice-requests/", {"due": True}, format="json", HTTP_IDEMPOTENCY_KEY="a")
    assert response.status_code == 202
    assert PracticeRequest.objects.get(pk=response.json()["id"]).due is True
    response = client.post(
        "/api/v1/practice-requests/", {"due": False, "kind": "coding"}, format="json", HTTP_IDEMPOTENCY_KEY="b"
    )
    assert response.status_code == 202
    assert PracticeRequest.objects.get(pk=response.json()["id"]).kind == "coding"


def test_the_due_choice_is_the_most_overdue_question():
    user = UserFactory()
    a_little, a_lot = AttemptFactory(user=user), AttemptFactory(user=user)
    scored(a_little, 100, T0)  # due T0 + 8 days
    scored(a_lot, 10, T0)  # due T0 + 1 day
    question, note = practice_due_choose(user_id=user.pk, now=T0 + timedelta(days=9))
    assert question.pk == a_lot.question_id
    assert note == "The most overdue question of your review schedule."


def test_nothing_due_says_when_the_next_review_is():
    user = UserFactory()
    scored(AttemptFactory(user=user), 100, T0)
    assert practice_due_choose(user_id=user.pk, now=T0) == (
        None,
        "Nothing is due for review yet; the next review is due 11 March 2025, 09:00 UTC.",
    )
    question, note = practice_due_choose(user_id=UserFactory().pk, now=T0)
    assert question is None and note.startswith("Nothing is due for review: answer a question first")


def _fulfil(request: PracticeRequest) -> PracticeRequest:
    # What the generate job's handler does, in its order (attempts/jobs.py).
    with transaction.atomic():
        practice_request_mark_processing(request=request, actor="test")
        return practice_request_fulfil(request=request, actor="test")


def test_a_due_request_opens_the_overdue_question_or_fails_with_its_note():
    user = UserFactory()
    overdue = AttemptFactory(user=user)
    scored(overdue, 10, datetime.now(UTC) - timedelta(days=2))
    request = _fulfil(practice_request_create(user=user, due=True))
    assert (request.status, request.question_id) == ("completed", overdue.question_id)
    # The review continues the question's history: its attempt, not a new draft beside it.
    assert request.attempt_id == overdue.pk

    nobody = UserFactory()
    request = _fulfil(practice_request_create(user=nobody, due=True))
    assert request.status == "failed"
    assert request.note.startswith("Nothing is due for review")


def test_due_with_a_filter_picks_the_most_overdue_among_the_questions_it_matches():
    user = UserFactory()
    coding, behavioural = AttemptFactory(user=user, question=CodingQuestionFactory()), AttemptFactory(user=user)
    scored(coding, 100, T0)  # due T0 + 8 days
    scored(behavioural, 10, T0)  # due T0 + 1 day: the most overdue of all
    question, _note = practice_due_choose(user_id=user.pk, kind="coding", now=T0 + timedelta(days=9))
    assert question.pk == coding.question_id
    question, note = practice_due_choose(user_id=user.pk, kind="coding", now=T0 + timedelta(days=2))
    assert question is None and "11 March 2025" in note


# --- the review page and an attempt opened from it -------------------------------------------


def test_review_page_lists_due_and_upcoming_with_links_that_open_from_review(client):
    user = UserFactory()
    now = datetime.now(UTC)
    due, upcoming = AttemptFactory(user=user), AttemptFactory(user=user)
    scored(due, 10, now - timedelta(days=3))
    scored(upcoming, 100, now)
    client.force_login(user)
    page = client.get("/review/").content.decode()
    due_table, upcoming_table = page.split('id="review-due"')[1].split('id="review-upcoming"')
    assert f'href="/attempts/{due.pk}/?from=review"' in due_table
    assert f'href="/attempts/{upcoming.pk}/?from=review"' in upcoming_table
    assert "Practise what is due" in page


def test_review_page_without_history_says_so(client):
    client.force_login(UserFactory())
    page = client.get("/review/").content.decode()
    assert "Nothing to review yet" in page


def test_practise_what_is_due_posts_a_due_request_once(client):
    user = UserFactory()
    client.force_login(user)
    first = client.post("/review/practise/", {"idempotency_key": "k" * 32})
    again = client.post("/review/practise/", {"idempotency_key": "k" * 32})
    request = PracticeRequest.objects.get()
    assert request.due is True
    assert first.status_code == again.status_code == 302
    assert first["Location"] == again["Location"] == f"/practice/{request.pk}/"


def test_an_attempt_opened_from_review_starts_from_the_starter_with_the_last_answer_one_click_away(client):
    user = UserFactory()
    attempt = AttemptFactory(user=user, question=CodingQuestionFactory())
    scored(attempt, 50, T0, answer="def add(a, b):\n    return 41\n")
    client.force_login(user)
    plain = client.get(f"/attempts/{attempt.pk}/").content.decode()
    assert "return 41" in plain.split("</textarea>")[0]
    fresh = client.get(f"/attempts/{attempt.pk}/?from=review").content.decode()
    editor = fresh.split("</textarea>")[0].split("<textarea")[-1]
    assert "return 41" not in editor and "def add(a: int, b: int) -&gt; int:" in editor
    assert 'href="?from=review&amp;answer=last"' in fresh
    loaded = client.get(f"/attempts/{attempt.pk}/?from=review&answer=last").content.decode()
    assert "return 41" in loaded.split("</textarea>")[0]
