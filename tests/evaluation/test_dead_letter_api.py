"""Staff replay dead letters over REST with the admin's permission; a second replay makes no job."""

import dataclasses

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission
from django.test import override_settings
from rest_framework.test import APIClient

from attempts.models import Submission, SubmissionStatus
from evaluation.jobs import job_run
from evaluation.models import DeadLetter, EvaluationJob
from tests.factories import AttemptFactory, UserFactory
from tests.helpers import submit_via_service

pytestmark = pytest.mark.django_db


@pytest.fixture
def letter() -> DeadLetter:
    attempt = AttemptFactory()
    submission_id, job_id = submit_via_service(attempt, "score=5")
    with override_settings(CONFIG=dataclasses.replace(settings.CONFIG, evaluator_faults={"permanent": 1.0})):
        assert job_run(job_id=job_id, worker="test") == "dead"
    assert Submission.objects.get(pk=submission_id).status == SubmissionStatus.FAILED
    return DeadLetter.objects.get(job_id=job_id)


def _staff(*, can_replay: bool) -> APIClient:
    user = UserFactory(is_staff=True)
    if can_replay:
        user.user_permissions.add(Permission.objects.get(codename="replay_deadletter"))
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_list_names_the_attempt_and_submission_of_each_letter(letter):
    body = _staff(can_replay=False).get("/api/v1/ops/dead-letters/").json()
    assert body["count"] == 1
    row = body["results"][0]
    assert (row["id"], row["job_id"], row["kind"]) == (letter.pk, letter.job_id, "evaluate")
    assert (row["attempt_id"], row["submission_id"]) == (letter.context["attempt_id"], letter.subject_id)
    assert "injected permanent fault" in row["error"]


def test_staff_without_the_replay_permission_are_refused_and_nothing_is_made(letter):
    response = _staff(can_replay=False).post(f"/api/v1/ops/dead-letters/{letter.pk}/replay/")
    assert response.status_code == 403
    assert EvaluationJob.objects.count() == 1


def test_replaying_twice_makes_one_job_and_requeues_the_submission(letter):
    client = _staff(can_replay=True)
    first = client.post(f"/api/v1/ops/dead-letters/{letter.pk}/replay/")
    second = client.post(f"/api/v1/ops/dead-letters/{letter.pk}/replay/")
    assert (first.status_code, second.status_code) == (202, 202)
    assert first.json()["replayed"] is True and second.json()["replayed"] is False
    assert first.json()["job_id"] == second.json()["job_id"]
    assert EvaluationJob.objects.filter(replay_of=letter).count() == 1
    assert Submission.objects.get(pk=letter.subject_id).status == SubmissionStatus.QUEUED


def test_a_missing_dead_letter_is_not_found():
    assert _staff(can_replay=True).post("/api/v1/ops/dead-letters/999999/replay/").status_code == 404
