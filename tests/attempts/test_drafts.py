"""Drafts: the answer being typed, kept server-side, outside the attempt's state."""

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.conf import settings
from django.db import connection
from django.utils.dateparse import parse_datetime
from rest_framework.test import APIClient

from attempts.cache import attempt_cache_key
from attempts.models import Attempt, AttemptStatus, StateChange, Submission
from interviewprep.redis_state import cache_redis
from tests.factories import AttemptFactory, CodingQuestionFactory, QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db


def url(attempt_id: int) -> str:
    return f"/api/v1/attempts/{attempt_id}/draft/"


def save(client, attempt_id, answer, language=None):
    body = {"answer": answer} if language is None else {"answer": answer, "language": language}
    return client.put(url(attempt_id), body, format="json")


def test_no_draft_reads_as_empty(api_client_for):
    attempt = AttemptFactory()
    response = api_client_for(attempt.user).get(url(attempt.pk))
    assert response.status_code == 200
    assert response.json() == {"language": "python", "answer": "", "answers": {}, "saved_at": None}


def test_a_draft_is_saved_overwritten_and_cleared(api_client_for):
    attempt = AttemptFactory()
    client = api_client_for(attempt.user)
    first = save(client, attempt.pk, "def f():\n    pass\n")
    assert first.status_code == 200
    first_at = parse_datetime(first.json()["saved_at"])
    assert first_at is not None
    assert client.get(url(attempt.pk)).json() == {
        "language": "python",
        "answer": "def f():\n    pass\n",
        "answers": {"python": "def f():\n    pass\n"},
        "saved_at": first.json()["saved_at"],
    }

    second = save(client, attempt.pk, "  def f():\n    return 1  \n")
    assert parse_datetime(second.json()["saved_at"]) >= first_at
    # Kept as typed, whitespace and all.
    assert client.get(url(attempt.pk)).json()["answer"] == "  def f():\n    return 1  \n"

    cleared = save(client, attempt.pk, "")
    assert cleared.status_code == 200
    assert cleared.json() == {"language": "python", "saved_at": None}
    assert client.get(url(attempt.pk)).json() == {"language": "python", "answer": "", "answers": {}, "saved_at": None}


def test_saving_a_draft_is_not_a_state_change(api_client_for):
    attempt = AttemptFactory()
    client = api_client_for(attempt.user)
    assert client.get(f"/api/v1/attempts/{attempt.pk}/").status_code == 200  # cached now
    cached = cache_redis().hgetall(attempt_cache_key(attempt.pk))
    before = Attempt.objects.filter(pk=attempt.pk).values().get()

    assert save(client, attempt.pk, "print('draft')").status_code == 200

    after = Attempt.objects.filter(pk=attempt.pk).values().get()
    changed = {field for field in before if before[field] != after[field]}
    assert changed == {"drafts", "draft_saved_at"}
    assert (after["version"], after["status"], after["updated_at"]) == (1, AttemptStatus.DRAFT, before["updated_at"])
    assert cache_redis().hgetall(attempt_cache_key(attempt.pk)) == cached
    assert not StateChange.objects.exists()
    assert not Submission.objects.exists()


def test_a_draft_over_64_kib_is_413_and_keeps_the_last_one(api_client_for):
    attempt = AttemptFactory()
    client = api_client_for(attempt.user)
    save(client, attempt.pk, "kept")
    assert save(client, attempt.pk, "x" * settings.ANSWER_MAX_BYTES).status_code == 200
    save(client, attempt.pk, "kept")
    response = save(client, attempt.pk, "é" * (settings.ANSWER_MAX_BYTES // 2 + 1))
    assert response.status_code == 413
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["limit"] == settings.ANSWER_MAX_BYTES
    assert client.get(url(attempt.pk)).json()["answer"] == "kept"


@pytest.mark.parametrize(
    "body",
    [{}, {"answer": 5}, {"answer": None}, ["x"], {"answer": "x", "language": 3}, {"answer": "x", "language": None}],
)
def test_a_malformed_draft_is_400(api_client_for, body):
    attempt = AttemptFactory()
    client = api_client_for(attempt.user)
    response = client.put(url(attempt.pk), body, format="json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert Attempt.objects.get(pk=attempt.pk).draft_saved_at is None


def test_another_users_draft_is_indistinguishable_from_a_missing_one(api_client_for):
    attempt = AttemptFactory()
    save(api_client_for(attempt.user), attempt.pk, "mine")
    stranger = api_client_for(UserFactory())
    for response in (save(stranger, attempt.pk, "theirs"), stranger.get(url(attempt.pk))):
        missing = stranger.get(url(999_999))
        assert response.status_code == missing.status_code == 404
        assert response.json()["title"] == missing.json()["title"]
    assert Attempt.objects.get(pk=attempt.pk).drafts == {"python": "mine"}
    assert APIClient().get(url(attempt.pk)).status_code == 401


def _save_then_submit(attempt_id: int, token: str, barrier: threading.Barrier, what: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    try:
        barrier.wait()
        if what == "draft":
            return save(client, attempt_id, "typed while submitting").status_code
        return client.post(
            f"/api/v1/attempts/{attempt_id}/submissions/",
            {"answer": "submitted"},
            format="json",
            HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex,
        ).status_code
    finally:
        connection.close()


@pytest.mark.django_db(transaction=True)
def test_a_draft_saved_while_a_submit_commits_loses_neither():
    from rest_framework.authtoken.models import Token

    for _ in range(10):
        attempt = AttemptFactory()
        token = Token.objects.create(user=attempt.user).key
        barrier = threading.Barrier(2)
        with ThreadPoolExecutor(2) as pool:
            statuses = list(
                pool.map(lambda what: _save_then_submit(attempt.pk, token, barrier, what), ["draft", "submit"])
            )
        assert statuses == [200, 202]
        attempt.refresh_from_db()
        assert attempt.drafts == {"python": "typed while submitting"}
        assert (attempt.status, attempt.version) == (AttemptStatus.QUEUED, 2)
        assert attempt.latest_submission_id == Submission.objects.get(attempt=attempt).pk


def test_drafts_are_kept_per_language_and_the_last_named_one_is_shown(api_client_for):
    attempt = AttemptFactory(question=CodingQuestionFactory())
    client = api_client_for(attempt.user)
    assert save(client, attempt.pk, "def add(a, b):\n    pass\n").json()["language"] == "python"
    saved = save(client, attempt.pk, "function add(a, b) {}\n", language="javascript")
    assert saved.status_code == 200
    assert saved.json()["language"] == "javascript"

    body = client.get(url(attempt.pk)).json()
    assert body["language"] == "javascript"
    assert body["answer"] == "function add(a, b) {}\n"
    assert body["answers"] == {"python": "def add(a, b):\n    pass\n", "javascript": "function add(a, b) {}\n"}
    assert body["saved_at"] == saved.json()["saved_at"]
    # The save named a language: the attempt's follows, and a save without one keeps it.
    assert client.get(f"/api/v1/attempts/{attempt.pk}/").json()["language"] == "javascript"
    save(client, attempt.pk, "function add(a, b) { return a + b; }\n")
    assert Attempt.objects.get(pk=attempt.pk).drafts["javascript"] == "function add(a, b) { return a + b; }\n"

    # Clearing one language's draft keeps the other's, and the time of the last save.
    cleared = save(client, attempt.pk, "", language="javascript")
    assert cleared.json()["saved_at"] is not None
    assert client.get(url(attempt.pk)).json() == {
        "language": "javascript",
        "answer": "",
        "answers": {"python": "def add(a, b):\n    pass\n"},
        "saved_at": cleared.json()["saved_at"],
    }
    assert save(client, attempt.pk, "", language="python").json() == {"language": "python", "saved_at": None}


def test_a_draft_may_be_typed_in_a_language_not_installed_here(api_client_for, monkeypatch):
    import evaluation.languages

    monkeypatch.setitem(evaluation.languages.language_versions(), "go", None)
    attempt = AttemptFactory(question=CodingQuestionFactory())
    client = api_client_for(attempt.user)
    assert save(client, attempt.pk, "package main\n", language="go").status_code == 200
    assert Attempt.objects.get(pk=attempt.pk).drafts == {"go": "package main\n"}


@pytest.mark.parametrize(
    ("kind", "language", "detail"),
    [("coding", "cobol", "Unknown language 'cobol'"), ("system_design", "java", "answered in prose")],
)
def test_a_draft_in_a_language_its_question_cannot_take_is_400_and_saves_nothing(
    api_client_for, kind, language, detail
):
    attempt = AttemptFactory(question=CodingQuestionFactory() if kind == "coding" else QuestionFactory())
    client = api_client_for(attempt.user)
    save(client, attempt.pk, "kept")
    response = save(client, attempt.pk, "lost", language=language)
    assert response.status_code == 400
    assert response.json()["field"] == "language"
    assert detail in response.json()["detail"]
    stored = Attempt.objects.get(pk=attempt.pk)
    assert (stored.drafts, stored.language) == ({"python": "kept"}, "python")


def _save_in(attempt_id: int, token: str, barrier: threading.Barrier, language: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    try:
        barrier.wait()
        return save(client, attempt_id, f"typed in {language}", language=language).status_code
    finally:
        connection.close()


@pytest.mark.django_db(transaction=True)
def test_drafts_saved_at_once_in_two_languages_keep_both():
    from rest_framework.authtoken.models import Token

    for _ in range(10):
        attempt = AttemptFactory(question=CodingQuestionFactory())
        token = Token.objects.create(user=attempt.user).key
        barrier = threading.Barrier(2)
        with ThreadPoolExecutor(2) as pool:
            statuses = list(
                pool.map(lambda language: _save_in(attempt.pk, token, barrier, language), ["python", "javascript"])
            )
        assert statuses == [200, 200]
        attempt.refresh_from_db()
        assert attempt.drafts == {"python": "typed in python", "javascript": "typed in javascript"}
        assert attempt.language in ("python", "javascript")
