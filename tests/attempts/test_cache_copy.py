"""The cached copy holds everything a read of the attempt shows: a warm read asks the database
nothing, and every change of what it shows, with a new version or without one (a hint, a
language, a give-up), is on the very next read."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from attempts.services.attempts import attempt_draft_save
from attempts.services.hints import attempt_give_up, attempt_hint_reveal
from attempts.services.runs import run_create
from tests.factories import AttemptFactory, CodingQuestionFactory

pytestmark = pytest.mark.django_db


def read(client, attempt) -> dict:
    response = client.get(f"/api/v1/attempts/{attempt.pk}/")
    assert response.status_code == 200
    return response.json()


def test_a_warm_read_asks_the_database_nothing(api_client_for):
    attempt = AttemptFactory(question=CodingQuestionFactory(hints=["Add them."]))
    attempt_hint_reveal(user=attempt.user, attempt_id=attempt.pk)
    client = api_client_for(attempt.user)
    first = read(client, attempt)  # fills the cache (the token's too)
    with CaptureQueriesContext(connection) as queries:
        assert read(client, attempt) == first
    assert [query["sql"] for query in queries] == []
    assert first["hints_revealed"] == 1 and first["reference"] is None


def test_changes_without_a_new_version_show_on_the_very_next_read(api_client_for):
    question = CodingQuestionFactory(hints=["Add them."], reference_answer="return a + b", explanation="Plus.")
    attempt = AttemptFactory(question=question)
    client = api_client_for(attempt.user)
    version = read(client, attempt)["version"]

    attempt_hint_reveal(user=attempt.user, attempt_id=attempt.pk)
    assert read(client, attempt)["hints_revealed"] == 1
    attempt_draft_save(user=attempt.user, attempt_id=attempt.pk, answer="function add(a, b) {}", language="javascript")
    assert read(client, attempt)["language"] == "javascript"
    run_create(user=attempt.user, attempt_id=attempt.pk, answer="def add(a, b):\n    return a + b\n", language="python")
    assert read(client, attempt)["language"] == "python"
    attempt_give_up(user=attempt.user, attempt_id=attempt.pk)
    body = read(client, attempt)
    assert body["gave_up"] is True
    assert body["reference"] == {"answer": "return a + b", "explanation": "Plus."}
    assert body["version"] == version  # none of them is a new version
