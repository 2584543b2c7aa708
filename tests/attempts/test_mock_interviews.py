"""Mock interviews: one question per kind, chosen by difficulty, and a deadline the server holds."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from attempts.models import Attempt, IdempotencyRecord, MockInterview, Submission
from attempts.selectors.mock import mock_interview_payload
from attempts.services.attempts import submission_create
from attempts.services.mock import DeadlinePassed, mock_interview_create
from tests.factories import AttemptFactory, QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db

START = datetime(2030, 3, 4, 9, 0, tzinfo=UTC)


@pytest.fixture
def bank():
    return {
        "coding_easy": QuestionFactory(kind="coding", difficulty="easy", title="Easy code"),
        "coding_hard": QuestionFactory(kind="coding", difficulty="hard", title="Hard code"),
        "coding_hard_2": QuestionFactory(kind="coding", difficulty="hard", title="Hard code 2"),
        "story": QuestionFactory(kind="behavioral", difficulty="hard", title="A conflict"),
    }


def test_a_session_opens_one_attempt_per_kind_at_the_difficulty_asked(api_client_for, bank):
    user = UserFactory()
    response = api_client_for(user).post(
        "/api/v1/mock-interviews/", {"difficulty": "hard"}, format="json", HTTP_IDEMPOTENCY_KEY="mock-1"
    )
    assert response.status_code == 201
    body = response.json()
    interview = MockInterview.objects.get(pk=body["id"])
    assert interview.duration_minutes == 45
    assert interview.deadline - interview.started_at == timedelta(minutes=45)
    attempts = list(Attempt.objects.filter(mock_interview=interview).order_by("id"))
    assert body["attempt_ids"] == [a.pk for a in attempts]
    assert [a.question.kind for a in attempts] == ["coding", "behavioral"]
    assert attempts[0].question.difficulty == "hard"
    assert attempts[1].question == bank["story"]
    assert all(a.user == user and a.status == "draft" for a in attempts)


def test_the_question_not_practised_yet_is_preferred(bank):
    user = UserFactory()
    AttemptFactory(user=user, question=bank["coding_hard"])
    interview = mock_interview_create(user=user, kinds=["coding"], difficulty="hard")
    assert interview.attempts.get().question == bank["coding_hard_2"]


def test_two_questions_of_one_kind_are_two_different_questions(bank):
    interview = mock_interview_create(user=UserFactory(), kinds=["coding", "coding"], difficulty="hard")
    titles = sorted(interview.attempts.values_list("question__title", flat=True))
    assert titles == ["Hard code", "Hard code 2"]


def test_the_same_key_replays_the_first_session(api_client_for, bank):
    client = api_client_for(UserFactory())
    first = client.post("/api/v1/mock-interviews/", {"duration_minutes": 30}, format="json", HTTP_IDEMPOTENCY_KEY="k")
    again = client.post("/api/v1/mock-interviews/", {"duration_minutes": 30}, format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert again.status_code == 201
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true"
    assert MockInterview.objects.count() == 1
    other = client.post("/api/v1/mock-interviews/", {"duration_minutes": 20}, format="json", HTTP_IDEMPOTENCY_KEY="k")
    assert other.status_code == 422


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"duration_minutes": 0}, "duration_minutes"),
        ({"duration_minutes": 181}, "duration_minutes"),
        ({"duration_minutes": "long"}, "duration_minutes"),
        ({"kinds": []}, "kinds"),
        ({"kinds": ["cooking"]}, "kinds"),
        ({"difficulty": "brutal"}, "difficulty"),
    ],
)
def test_a_bad_request_is_refused_and_writes_nothing(api_client_for, bank, body, field):
    response = api_client_for(UserFactory()).post(
        "/api/v1/mock-interviews/", body, format="json", HTTP_IDEMPOTENCY_KEY="bad"
    )
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert field in response.json()["errors"]
    assert not MockInterview.objects.exists()
    assert not IdempotencyRecord.objects.exists()


def test_a_session_needs_an_idempotency_key(api_client_for, bank):
    response = api_client_for(UserFactory()).post("/api/v1/mock-interviews/", {}, format="json")
    assert response.status_code == 400
    assert not MockInterview.objects.exists()


def test_a_kind_with_no_question_refuses_the_whole_session(api_client_for):
    QuestionFactory(kind="coding")
    response = api_client_for(UserFactory()).post(
        "/api/v1/mock-interviews/", {}, format="json", HTTP_IDEMPOTENCY_KEY="none"
    )
    assert response.status_code == 409
    assert response.json()["type"].endswith("no-question")
    assert "no active behavioural question" in response.json()["detail"]
    assert not MockInterview.objects.exists()
    assert not Attempt.objects.exists()


def test_a_submit_before_the_deadline_is_accepted(bank):
    interview = mock_interview_create(user=UserFactory(), duration_minutes=45, now=START)
    attempt = interview.attempts.order_by("id").first()
    submission = submission_create(
        user=interview.user, attempt_id=attempt.pk, answer="Mine.", now=START + timedelta(minutes=44, seconds=59)
    )
    assert submission.attempt.status == "queued"


def test_a_submit_at_or_after_the_deadline_is_refused_and_writes_nothing(bank):
    interview = mock_interview_create(user=UserFactory(), duration_minutes=45, now=START)
    attempt = interview.attempts.order_by("id").first()
    with pytest.raises(DeadlinePassed) as refused:
        submission_create(user=interview.user, attempt_id=attempt.pk, answer="Late.", now=START + timedelta(minutes=45))
    assert refused.value.detail.startswith("Time is up: this mock interview ended at 09:45 UTC")
    after = Attempt.objects.get(pk=attempt.pk)
    assert (after.status, after.version, after.latest_submission_id) == ("draft", 1, None)
    assert not Submission.objects.exists()


def test_the_api_answers_a_late_submit_with_409_deadline_passed(api_client_for, bank):
    # Started two minutes ago by the server's clock, which the API reads: a minute past its deadline.
    interview = mock_interview_create(user=UserFactory(), duration_minutes=1, now=timezone.now() - timedelta(minutes=2))
    attempt = interview.attempts.order_by("id").first()
    client = api_client_for(interview.user)
    response = client.post(
        f"/api/v1/attempts/{attempt.pk}/submissions/", {"answer": "Late."}, format="json", HTTP_IDEMPOTENCY_KEY="late"
    )
    assert response.status_code == 409
    body = response.json()
    assert body["type"].endswith("deadline-passed")
    assert body["mock_interview_id"] == interview.pk
    assert "Your answer is kept" in body["detail"]
    assert not Submission.objects.exists()
    assert Attempt.objects.get(pk=attempt.pk).version == 1
    assert not IdempotencyRecord.objects.exists()


def test_an_attempt_outside_any_mock_interview_has_no_deadline(bank):
    attempt = AttemptFactory()
    submission = submission_create(user=attempt.user, attempt_id=attempt.pk, answer="Any time.", now=START)
    assert submission.pk is not None


def test_the_session_shows_its_attempts_and_a_summary_only_after_the_deadline(api_client_for, bank):
    interview = mock_interview_create(user=UserFactory(), duration_minutes=30, now=START)
    coding, story = interview.attempts.order_by("id")
    submission_create(user=interview.user, attempt_id=coding.pk, answer="Mine.", now=START + timedelta(minutes=12))
    Submission.objects.filter(attempt=coding).update(created_at=START + timedelta(minutes=12))

    during = mock_interview_payload(interview, now=START + timedelta(minutes=20))
    assert (during["finished"], during["seconds_left"], during["summary"]) == (False, 600, None)
    assert [(a["id"], a["status"]) for a in during["attempts"]] == [(coding.pk, "queued"), (story.pk, "draft")]

    after = mock_interview_payload(interview, now=START + timedelta(minutes=30))
    assert (after["finished"], after["seconds_left"]) == (True, 0)
    assert [(row["attempt_id"], row["submitted"], row["time_used_seconds"]) for row in after["summary"]] == [
        (coding.pk, True, 720),
        (story.pk, False, None),
    ]
    # The API reads the server's clock, for which a session starting in 2030 has not even begun.
    assert api_client_for(interview.user).get(f"/api/v1/mock-interviews/{interview.pk}/").json()["summary"] is None


def test_another_users_session_is_not_found(api_client_for, bank):
    interview = mock_interview_create(user=UserFactory())
    assert api_client_for(UserFactory()).get(f"/api/v1/mock-interviews/{interview.pk}/").status_code == 404


def test_the_pages_start_a_session_show_its_timer_and_then_its_summary(client, bank):
    user = UserFactory()
    client.force_login(user)
    assert "Start the clock" in client.get("/mock/").content.decode()
    form = {"duration_minutes": "30", "kinds": ["coding", "behavioral"], "difficulty": "hard", "idempotency_key": "f1"}
    response = client.post("/mock/", form)
    interview = MockInterview.objects.get(user=user)
    assert response["Location"] == f"/mock/{interview.pk}/"
    assert client.post("/mock/", form)["Location"] == f"/mock/{interview.pk}/"  # a double click: one session
    running = client.get(f"/mock/{interview.pk}/").content.decode()
    assert 'data-seconds-left="' in running and "Hard code" in running and "Time is up" not in running

    MockInterview.objects.filter(pk=interview.pk).update(
        started_at=timezone.now() - timedelta(minutes=31), deadline=timezone.now() - timedelta(minutes=1)
    )
    ended = client.get(f"/mock/{interview.pk}/").content.decode()
    assert "Time is up" in ended
    assert ended.count("not submitted") == 2
    assert f"/mock/{interview.pk}/" in client.get("/mock/").content.decode()


def test_a_late_form_submit_says_time_is_up_and_keeps_the_answer(client, bank):
    interview = mock_interview_create(user=UserFactory(), duration_minutes=1, now=timezone.now() - timedelta(minutes=2))
    attempt = interview.attempts.order_by("id").first()
    client.force_login(interview.user)
    response = client.post(f"/attempts/{attempt.pk}/", {"answer": "My late answer.", "idempotency_key": "late-form"})
    body = response.content.decode()
    assert response.status_code == 400
    assert "Time is up: this mock interview ended at" in body
    assert "My late answer." in body
    assert not Submission.objects.exists()


def _queries(call) -> int:
    with CaptureQueriesContext(connection) as ctx:
        call()
    return len(ctx.captured_queries)


def test_the_session_lists_read_every_sessions_attempts_in_one_query(api_client_for, client, bank):
    user = UserFactory()
    client.force_login(user)
    api = api_client_for(user)
    mock_interview_create(user=user)
    api.get("/api/v1/mock-interviews/")  # the token's and session's first reads are not the list's
    client.get("/mock/")
    one = (_queries(lambda: api.get("/api/v1/mock-interviews/")), _queries(lambda: client.get("/mock/")))
    for _ in range(4):
        mock_interview_create(user=user)
    listed = api.get("/api/v1/mock-interviews/").json()["results"]
    assert len(listed) == 5 and all(len(session["attempts"]) == 2 for session in listed)
    assert (_queries(lambda: api.get("/api/v1/mock-interviews/")), _queries(lambda: client.get("/mock/"))) == one
