"""Hints, "I give up" and the reference answer: revealed in order, recorded, and the model
answer never shown before a full score or a give-up."""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from attempts.models import Attempt, StateChange, Submission
from attempts.services.attempts import (
    result_record,
    submission_create,
    submission_lock,
    submission_start_processing,
)
from attempts.services.hints import attempt_give_up, attempt_hint_reveal
from tests.factories import AttemptFactory, QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db

HINTS = ["Start from the read path.", "Where would you cache?", "Think about invalidation."]
REFERENCE = {"answer": "Put a cache in front of the database.", "explanation": "Reads outnumber writes."}


@pytest.fixture
def attempt():
    question = QuestionFactory(hints=HINTS, reference_answer=REFERENCE["answer"], explanation=REFERENCE["explanation"])
    return AttemptFactory(question=question)


def graded(attempt, score: float, max_score: float = 10) -> Submission:
    """A submit, then its result recorded as the evaluation job records it."""
    submission = submission_create(user=attempt.user, attempt_id=attempt.pk, answer="An answer of mine.")
    with transaction.atomic():
        locked = submission_lock(submission_id=submission.pk)
        submission_start_processing(attempt=locked.attempt, submission=locked, actor="test")
        result_record(
            attempt=locked.attempt,
            submission=locked,
            score=score,
            max_score=max_score,
            feedback="",
            details={},
            actor="test",
        )
    return submission


def hints_url(attempt) -> str:
    return f"/api/v1/attempts/{attempt.pk}/hints/"


def test_hints_are_revealed_one_at_a_time_in_order(api_client_for, attempt):
    client = api_client_for(attempt.user)
    first = client.post(hints_url(attempt), {}, format="json")
    assert first.status_code == 200
    assert first.json() == {"attempt_id": attempt.pk, "hints_revealed": 1, "hints_total": 3, "hints": HINTS[:1]}
    second = client.post(hints_url(attempt), {}, format="json")
    assert second.json()["hints"] == ["Start from the read path.", "Where would you cache?"]
    assert client.get(f"/api/v1/attempts/{attempt.pk}/").json()["hints_revealed"] == 2


def test_asking_for_a_hint_already_revealed_reveals_nothing_more(api_client_for, attempt):
    client = api_client_for(attempt.user)
    for _ in range(3):  # a double click on "Show a hint (2 of 3)" sends count=2 each time
        response = client.post(hints_url(attempt), {"count": 2}, format="json")
    assert response.json()["hints_revealed"] == 2
    reasons = list(StateChange.objects.filter(entity="attempt", object_id=attempt.pk).values_list("reason", flat=True))
    assert reasons == ["hint 2 of 3 revealed"]


def test_revealing_past_the_last_hint_keeps_them_all(attempt):
    for _ in range(5):
        attempt_hint_reveal(user=attempt.user, attempt_id=attempt.pk)
    assert Attempt.objects.get(pk=attempt.pk).hints_revealed == 3


def test_a_count_beyond_the_hints_or_a_question_without_hints_is_a_conflict(api_client_for, attempt):
    client = api_client_for(attempt.user)
    too_far = client.post(hints_url(attempt), {"count": 4}, format="json")
    assert too_far.status_code == 409
    assert too_far.json()["detail"] == "This question has 3 hints."
    bare = AttemptFactory(user=attempt.user)
    assert client.post(hints_url(bare), {}, format="json").json()["detail"] == "This question has no hints."
    assert Attempt.objects.get(pk=attempt.pk).hints_revealed == 0


def test_another_users_attempt_has_no_hints_to_show(api_client_for, attempt):
    response = api_client_for(UserFactory()).post(hints_url(attempt), {}, format="json")
    assert response.status_code == 404
    assert Attempt.objects.get(pk=attempt.pk).hints_revealed == 0


def test_a_submission_keeps_the_hints_used_when_it_was_sent(attempt):
    attempt_hint_reveal(user=attempt.user, attempt_id=attempt.pk)
    first = submission_create(user=attempt.user, attempt_id=attempt.pk, answer="First answer.")
    attempt_hint_reveal(user=attempt.user, attempt_id=attempt.pk)
    second = submission_create(user=attempt.user, attempt_id=attempt.pk, answer="Second answer.")
    assert Submission.objects.get(pk=first.pk).hints_used == 1
    assert Submission.objects.get(pk=second.pk).hints_used == 2


def test_the_reference_stays_closed_before_a_full_score(api_client_for, attempt):
    client = api_client_for(attempt.user)
    fresh = client.get(f"/api/v1/attempts/{attempt.pk}/").json()
    assert (fresh["reference"], fresh["gave_up"], fresh["hints_revealed"]) == (None, False, 0)
    graded(attempt, 9.5)
    after = client.get(f"/api/v1/attempts/{attempt.pk}/").json()
    assert after["status"] == "completed"
    assert after["result"]["score"] == 9.5
    assert after["reference"] is None
    # Nor does the list, or the question, show it.
    assert client.get("/api/v1/attempts/").json()["results"][0]["reference"] is None
    assert REFERENCE["answer"] not in client.get(f"/api/v1/questions/{attempt.question_id}/").content.decode()


def test_a_full_score_opens_the_reference_and_a_later_worse_answer_keeps_it_open(api_client_for, attempt):
    client = api_client_for(attempt.user)
    graded(attempt, 10)
    assert client.get(f"/api/v1/attempts/{attempt.pk}/").json()["reference"] == REFERENCE
    graded(attempt, 2)
    later = client.get(f"/api/v1/attempts/{attempt.pk}/").json()
    assert later["result"]["score"] == 2
    assert later["reference"] == REFERENCE
    assert client.get("/api/v1/attempts/").json()["results"][0]["reference"] == REFERENCE


def test_a_full_score_on_another_attempt_of_the_question_opens_nothing_here(api_client_for, attempt):
    graded(AttemptFactory(user=attempt.user, question=attempt.question), 10)
    assert api_client_for(attempt.user).get(f"/api/v1/attempts/{attempt.pk}/").json()["reference"] is None


def test_giving_up_opens_the_reference_once_and_is_recorded(api_client_for, attempt):
    client = api_client_for(attempt.user)
    response = client.post(f"/api/v1/attempts/{attempt.pk}/give-up/")
    assert response.status_code == 200
    body = response.json()
    assert (body["gave_up"], body["reference"]) == (True, REFERENCE)
    first_at = Attempt.objects.get(pk=attempt.pk).gave_up_at
    assert first_at is not None
    client.post(f"/api/v1/attempts/{attempt.pk}/give-up/")
    assert Attempt.objects.get(pk=attempt.pk).gave_up_at == first_at
    reasons = list(StateChange.objects.filter(entity="attempt", object_id=attempt.pk).values_list("reason", flat=True))
    assert reasons == ["gave up: the reference answer opened"]
    # Giving up is not a state change of the attempt: its status and version stay.
    assert (body["status"], body["version"]) == ("draft", 1)


def test_another_user_cannot_give_up_for_the_candidate(api_client_for, attempt):
    assert api_client_for(UserFactory()).post(f"/api/v1/attempts/{attempt.pk}/give-up/").status_code == 404
    assert Attempt.objects.get(pk=attempt.pk).gave_up_at is None


def test_the_cached_read_costs_no_more_queries_with_the_new_fields(api_client_for, attempt):
    client = api_client_for(attempt.user)
    attempt_give_up(user=attempt.user, attempt_id=attempt.pk)
    client.get(f"/api/v1/attempts/{attempt.pk}/")  # fills the cache
    with CaptureQueriesContext(connection) as queries:
        assert client.get(f"/api/v1/attempts/{attempt.pk}/").json()["reference"] == REFERENCE
    # One read: the question's texts, which the give-up opened; the rest is the cached copy's.
    assert len(queries) == 1, [q["sql"] for q in queries]


def test_the_attempt_page_reveals_hints_and_opens_the_reference_without_javascript(client, attempt):
    client.force_login(attempt.user)
    page = f"/attempts/{attempt.pk}/"
    before = client.get(page).content.decode()
    assert "Show a hint (1 of 3)" in before
    assert "Start from the read path." not in before
    assert REFERENCE["answer"] not in before
    assert client.post(f"/attempts/{attempt.pk}/hints/", {"count": "1"})["Location"] == page
    client.post(f"/attempts/{attempt.pk}/hints/", {"count": "2"})
    shown = client.get(page).content.decode()
    assert "Start from the read path." in shown and "Where would you cache?" in shown
    assert "Think about invalidation." not in shown
    assert "Show a hint (3 of 3)" in shown and "2 hints used" in shown
    assert client.post(f"/attempts/{attempt.pk}/give-up/").status_code == 302
    opened = client.get(page).content.decode()
    assert REFERENCE["answer"] in opened and REFERENCE["explanation"] in opened
    assert "Opened because you gave up." in opened
