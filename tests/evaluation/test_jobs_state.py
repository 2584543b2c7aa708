import json

import pytest
from django.core.management import call_command

from attempts.services.attempts import submission_create
from tests.factories import AttemptFactory


@pytest.mark.django_db
def test_jobs_and_the_outbox_are_printed_as_json(capsys):
    attempt = AttemptFactory()
    submission_create(user=attempt.user, attempt_id=attempt.pk, answer="a")
    call_command("jobs_state", "--json")
    state = json.loads(capsys.readouterr().out)
    [job] = state["jobs"]
    assert job["kind"] == "evaluate" and job["subject_id"] == attempt.submissions.get().pk
    assert job["tries"] == 0 and job["max_tries"] >= 1
    assert state["dead_letters"] == []
    assert state["outbox_unpublished"] == 1
    call_command("jobs_state")
    assert "jobs: 1 (1 " in capsys.readouterr().out
