import json

import pytest
from django.core.management import call_command

from attempts.models import Submission
from attempts.services.attempts import submission_create
from tests.factories import AttemptFactory, UserFactory


@pytest.mark.django_db
def test_the_rows_of_a_candidates_work_are_printed_as_json(capsys):
    attempt = AttemptFactory()
    UserFactory(is_staff=True)
    created = submission_create(user=attempt.user, attempt_id=attempt.pk, answer="a")
    Submission.objects.filter(pk=created.pk).update(idempotency_key="k1")
    call_command("attempts_state", "--json")
    state = json.loads(capsys.readouterr().out)
    assert state["users"] == [{"id": attempt.user_id, "username": attempt.user.username}]
    assert [q["id"] for q in state["questions"]] == [attempt.question_id]
    [submission] = state["submissions"]
    assert submission["attempt_id"] == attempt.pk and submission["user_id"] == attempt.user_id
    assert submission["idempotency_key"] == "k1"
    assert state["attempts"][0]["latest_submission_id"] == submission["id"]
    assert state["results"] == [] and state["practice"] == []


@pytest.mark.django_db
def test_without_json_it_prints_counts(capsys):
    AttemptFactory()
    call_command("attempts_state")
    out = capsys.readouterr().out
    assert "attempts: 1 (1 draft)" in out
    assert "submissions: 0" in out
