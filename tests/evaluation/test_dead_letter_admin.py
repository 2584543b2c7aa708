"""The admin's dead-letter console: groups, a dry run that changes nothing, a replay behind a
confirmation page, its audit, and records of what happened that nobody can add or delete."""

import dataclasses

import pytest
from django.conf import settings
from django.test import override_settings

from evaluation.jobs import job_run
from evaluation.models import DeadLetter, DeadLetterReplay, EvaluationJob
from tests.evaluation.test_dead_letter_console import _database
from tests.factories import AttemptFactory
from tests.helpers import submit_via_service

pytestmark = pytest.mark.django_db

LIST = "/admin/evaluation/deadletter/"


@pytest.fixture
def letters() -> list[DeadLetter]:
    made = []
    for _ in range(2):
        _, job_id = submit_via_service(AttemptFactory(), "score=5")
        with override_settings(CONFIG=dataclasses.replace(settings.CONFIG, evaluator_faults={"permanent": 1.0})):
            assert job_run(job_id=job_id, worker="test") == "dead"
        made.append(DeadLetter.objects.get(job_id=job_id))
    return made


def test_the_groups_page_counts_letters_per_error_class_and_question(admin_client, letters):
    page = admin_client.get(f"{LIST}groups/").content.decode()
    assert "PermanentJobError" in page and ">2<" in page
    for letter in letters:
        assert letter.context["question"] in page
    assert "By error class and question" in admin_client.get(LIST).content.decode()
    filtered = admin_client.get(f"{LIST}?error_class=PermanentJobError").content.decode()
    assert "2 dead letters" in filtered


def test_the_dry_run_action_shows_what_a_replay_would_do_and_writes_nothing(admin_client, letters):
    before = _database()
    ids = [letter.pk for letter in letters]
    response = admin_client.post(LIST, {"action": "dry_run_dead_letters", "_selected_action": ids})
    page = response.content.decode()
    assert response.status_code == 200
    assert "Nothing has changed" in page and "2 would run again, 0 would be skipped" in page
    assert "1 try" in page and "1 tries" not in page
    assert "Yes, replay them" not in page
    assert _database() == before


def test_the_replay_asks_first_then_replays_once_and_audits_it(admin_client, letters, admin_user):
    ids = [letter.pk for letter in letters]
    asked = admin_client.post(LIST, {"action": "replay_dead_letters", "_selected_action": ids}).content.decode()
    assert "Yes, replay them" in asked and "2 would run again" in asked
    assert not EvaluationJob.objects.filter(replay_of__isnull=False).exists()

    first = admin_client.post(
        LIST, {"action": "replay_dead_letters", "_selected_action": ids, "post": "yes"}, follow=True
    )
    assert "2 dead letters replayed." in first.content.decode()
    again = admin_client.post(
        LIST, {"action": "replay_dead_letters", "_selected_action": ids[:1], "post": "yes"}, follow=True
    )
    assert "0 dead letters replayed; 1 skipped" in again.content.decode()
    assert EvaluationJob.objects.filter(replay_of__in=ids).count() == 2
    assert DeadLetterReplay.objects.filter(user=admin_user).count() == 3
    detail = admin_client.get(f"{LIST}{ids[0]}/change/").content.decode()
    assert "replays (audit)" in detail.lower() and "already replayed" in detail


@pytest.mark.parametrize(
    "model",
    [
        "evaluation/evaluationjob",
        "evaluation/outbox",
        "evaluation/deadletter",
        "evaluation/deadletterreplay",
        "attempts/statechange",
    ],
)
def test_records_of_what_happened_offer_no_add_or_delete(admin_client, letters, model):
    listing = admin_client.get(f"/admin/{model}/").content.decode()
    assert f"/admin/{model}/add/" not in listing
    assert 'value="delete_selected"' not in listing
    assert admin_client.get(f"/admin/{model}/add/").status_code == 403


def test_plurals_read_right_in_the_index(admin_client):
    index = admin_client.get("/admin/").content.decode()
    assert "Outbox messages" in index and "Outboxs" not in index
    assert "Dead-letter replays" in index
