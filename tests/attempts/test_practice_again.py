"""Practising a question again continues its history: "Start practising" opens the most recent
attempt, a labelled button opens a fresh one, and a practice request reuses what exists."""

import re
import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from attempts.models import Attempt, AttemptStatus, MockInterview, PracticeRequest, PracticeRequestStatus
from attempts.services.attempts import attempt_continue_or_create
from attempts.services.practice import (
    practice_request_fulfil,
    practice_request_lock,
    practice_request_mark_processing,
)
from tests.factories import AttemptFactory, QuestionFactory, UserFactory

KEY = re.compile(
    r'action="([^"]+)"[^>]*>\s*<input type="hidden" name="csrfmiddlewaretoken" value="[^"]+">\s*'
    r'<input type="hidden" name="idempotency_key" value="([^"]+)"'
)


@pytest.fixture
def candidate(client, db):
    user = UserFactory()
    client.force_login(user)
    return user


def _start_forms(client, question) -> dict[str, str]:
    """The question page's start buttons: form action -> its key."""
    html = client.get(f"/questions/{question.pk}/").content.decode()
    return dict(KEY.findall(html))


def test_start_practising_without_an_attempt_opens_a_new_one(client, candidate):
    question = QuestionFactory()
    html = client.get(f"/questions/{question.pk}/").content.decode()
    assert "Start practising</button>" in html
    assert "Start a fresh attempt" not in html and "continues" not in html
    response = client.post(f"/questions/{question.pk}/start/", {"idempotency_key": "k-first"})
    attempt = Attempt.objects.get(user=candidate, question=question)
    assert response["Location"] == f"/attempts/{attempt.pk}/"


def test_start_practising_continues_the_most_recent_attempt(client, candidate):
    question = QuestionFactory()
    AttemptFactory(user=candidate, question=question)
    recent = AttemptFactory(user=candidate, question=question, status=AttemptStatus.COMPLETED)
    AttemptFactory(question=question)  # somebody else's, newer
    forms = _start_forms(client, question)
    key = forms[f"/questions/{question.pk}/start/"]
    response = client.post(f"/questions/{question.pk}/start/", {"idempotency_key": key})
    assert response["Location"] == f"/attempts/{recent.pk}/"
    assert Attempt.objects.filter(user=candidate, question=question).count() == 2


def test_the_question_page_offers_a_clearly_labelled_fresh_attempt(client, candidate):
    question = QuestionFactory()
    AttemptFactory(user=candidate, question=question)
    AttemptFactory(user=candidate, question=question)
    latest = Attempt.objects.filter(user=candidate, question=question).latest("created_at", "id")
    html = client.get(f"/questions/{question.pk}/").content.decode()
    assert "Start practising</button>" in html
    assert "“Start practising” continues" in html and f'href="/attempts/{latest.pk}/"' in html
    assert "Start a fresh attempt</button>" in html
    forms = _start_forms(client, question)
    assert set(forms) == {f"/questions/{question.pk}/start/", f"/questions/{question.pk}/fresh/"}
    assert len(set(forms.values())) == 2  # one key per button: neither replays the other


def test_a_fresh_attempt_is_new_and_one_per_click(client, candidate):
    question = QuestionFactory()
    old = AttemptFactory(user=candidate, question=question)
    key = _start_forms(client, question)[f"/questions/{question.pk}/fresh/"]
    first = client.post(f"/questions/{question.pk}/fresh/", {"idempotency_key": key})
    again = client.post(f"/questions/{question.pk}/fresh/", {"idempotency_key": key})
    fresh = Attempt.objects.filter(user=candidate, question=question).exclude(pk=old.pk).get()
    assert first["Location"] == again["Location"] == f"/attempts/{fresh.pk}/"
    assert fresh.status == AttemptStatus.DRAFT


def test_a_fresh_attempt_of_a_retired_question_is_404(client, candidate):
    retired = QuestionFactory(is_active=False)
    assert client.post(f"/questions/{retired.pk}/fresh/", {"idempotency_key": "k"}).status_code == 404
    assert client.post(f"/questions/{retired.pk}/start/", {"idempotency_key": "k2"}).status_code == 404


def test_a_mock_interviews_attempt_is_never_continued(db):
    user, question = UserFactory(), QuestionFactory()
    now = timezone.now()
    mock = MockInterview.objects.create(
        user=user, duration_minutes=30, started_at=now - timedelta(hours=2), deadline=now - timedelta(hours=1)
    )
    AttemptFactory(user=user, question=question, mock_interview=mock)
    attempt = attempt_continue_or_create(user=user, question_id=question.pk)
    assert attempt.mock_interview is None
    assert Attempt.objects.filter(user=user, question=question).count() == 2


def test_the_api_create_keeps_creating(api_client_for, db):
    user, question = UserFactory(), QuestionFactory()
    client = api_client_for(user)
    ids = {client.post("/api/v1/attempts/", {"question_id": question.pk}, format="json").json()["id"] for _ in "ab"}
    assert len(ids) == 2


def _fulfil(request: PracticeRequest) -> PracticeRequest:
    """What the `generate` job does with the request, in its order."""
    with transaction.atomic():
        locked = practice_request_lock(practice_request_id=request.pk)
        practice_request_mark_processing(request=locked, actor="test")
        return practice_request_fulfil(request=locked, actor="test")


def test_a_practice_request_for_a_practised_question_completes_with_its_attempt(db):
    user = UserFactory()
    question = QuestionFactory(kind="coding")
    existing = AttemptFactory(user=user, question=question, status=AttemptStatus.COMPLETED)
    first = _fulfil(PracticeRequest.objects.create(user=user, kind="coding"))
    second = _fulfil(PracticeRequest.objects.create(user=user, kind="coding"))
    assert first.status == second.status == PracticeRequestStatus.COMPLETED
    assert first.attempt_id == second.attempt_id == existing.pk
    assert Attempt.objects.filter(user=user).count() == 1


def test_a_practice_request_for_a_new_question_opens_one_draft_that_start_then_continues(client, candidate):
    question = QuestionFactory(kind="behavioral")
    practice = _fulfil(PracticeRequest.objects.create(user=candidate, kind="behavioral"))
    assert practice.attempt.status == AttemptStatus.DRAFT
    response = client.post(f"/questions/{question.pk}/start/", {"idempotency_key": "k-after-practice"})
    assert response["Location"] == f"/attempts/{practice.attempt_id}/"
    assert Attempt.objects.filter(user=candidate, question=question).count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_starts_at_the_same_moment_open_one_attempt():
    user, question = UserFactory(), QuestionFactory()
    barrier = threading.Barrier(2)
    opened: list[int] = []

    def start() -> None:
        try:
            barrier.wait(timeout=10)
            opened.append(attempt_continue_or_create(user=user, question_id=question.pk).pk)
        finally:
            connection.close()

    threads = [threading.Thread(target=start) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(opened) == 2 and opened[0] == opened[1]
    assert Attempt.objects.filter(user=user, question=question).count() == 1
