"""Staff start the regrade a question change offers, from the ops API or the admin, once."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from attempts.models import AttemptStatus, QuestionChange, Regrade, Submission, SubmissionStatus
from evaluation.models import EvaluationJob
from tests.attempts.regrade_helpers import grading_changed, scored_attempt
from tests.factories import AttemptFactory, QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db

ADMIN_LIST = "/admin/attempts/questionchange/"


@pytest.fixture
def changed():
    """A question with three scored latest submissions, one attempt whose latest is still
    waiting (not scored), an attempt of another question, and a change of its tests."""
    question = QuestionFactory(slug="rate-limiter")
    scored = [scored_attempt(question, score=score) for score in (40, 60, 80)]
    waiting = AttemptFactory(question=question, status=AttemptStatus.QUEUED)
    waiting.latest_submission = Submission.objects.create(attempt=waiting, answer="x", status=SubmissionStatus.QUEUED)
    waiting.save()
    scored_attempt(QuestionFactory(slug="other-question"))
    return grading_changed(question), scored


def _staff(**extra):
    client = APIClient()
    client.force_authenticate(UserFactory(is_staff=True, is_superuser=True, **extra))
    return client


def _regrade_jobs() -> list[int]:
    return sorted(EvaluationJob.objects.filter(kind="regrade").values_list("subject_id", flat=True))


def test_the_api_refuses_anyone_but_staff_with_the_permission(changed):
    url = "/api/v1/ops/questions/rate-limiter/regrade/"
    assert APIClient().post(url).status_code in (401, 403)
    candidate = APIClient()
    candidate.force_authenticate(UserFactory())
    assert candidate.post(url).status_code == 403
    assert candidate.get(url).status_code == 403
    staff_only = APIClient()
    staff_only.force_authenticate(UserFactory(is_staff=True))
    assert staff_only.get(url).status_code == 200
    assert staff_only.post(url).status_code == 403
    assert _regrade_jobs() == []
    assert QuestionChange.objects.get().regrade_started_at is None


def test_a_start_makes_one_job_per_scored_latest_submission_and_a_second_start_makes_none(changed):
    change, scored = changed
    client = _staff()
    url = "/api/v1/ops/questions/rate-limiter/regrade/"
    offered = client.get(url).json()
    assert offered["would_touch"] == 3 and offered["started_at"] is None and offered["regrades"] == 0
    assert offered["summary"] == "the question's rubric changed" and offered["changed"] == ["rubric"]

    first = client.post(url)
    assert first.status_code == 202
    assert first.json()["jobs_created"] == 3 and first.json()["regrades"] == 3
    assert first.json()["jobs"]["pending"] == 3
    regrades = Regrade.objects.filter(change=change)
    assert sorted(r.submission_id for r in regrades) == sorted(a.latest_submission_id for a in scored)
    assert sorted(r.previous_score for r in regrades) == [40, 60, 80]
    assert _regrade_jobs() == sorted(r.pk for r in regrades)

    second = client.post(url)
    assert second.status_code == 200
    assert second.json()["jobs_created"] == 0 and second.json()["regrades"] == 3
    assert _regrade_jobs() == sorted(r.pk for r in regrades)
    assert client.post("/api/v1/ops/questions/other-question/regrade/").status_code == 404


def test_the_admin_lists_the_offer_and_starts_it_behind_a_confirmation_once(changed, client):
    change, _ = changed
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    listing = client.get(ADMIN_LIST).content.decode()
    assert "the question&#x27;s rubric changed" in listing and "not started" in listing

    asked = client.post(ADMIN_LIST, {"action": "start_regrades", "_selected_action": [change.pk]})
    page = asked.content.decode()
    assert asked.status_code == 200 and "Yes, regrade them" in page
    assert "rate-limiter" in page and "<td>3</td>" in page
    assert _regrade_jobs() == []

    done = client.post(
        ADMIN_LIST, {"action": "start_regrades", "_selected_action": [change.pk], "post": "yes"}, follow=True
    )
    assert "3 regrade jobs queued." in done.content.decode()
    assert len(_regrade_jobs()) == 3
    again = client.post(
        ADMIN_LIST, {"action": "start_regrades", "_selected_action": [change.pk], "post": "yes"}, follow=True
    )
    assert "0 regrade jobs queued; 1 change skipped (its regrade was started already)." in again.content.decode()
    assert len(_regrade_jobs()) == 3
    assert "0 of 3 done" in client.get(ADMIN_LIST).content.decode()


def test_the_admin_offers_no_start_without_the_permission(changed, client):
    change, _ = changed
    client.force_login(UserFactory(is_staff=True))
    client.post(ADMIN_LIST, {"action": "start_regrades", "_selected_action": [change.pk], "post": "yes"})
    assert _regrade_jobs() == []
