"""The staff timeline of one attempt: requests, state changes and job tries, oldest first."""

import uuid

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from attempts.selectors.timeline import attempt_timeline
from evaluation.jobs import job_run
from tests.factories import AttemptFactory, UserFactory
from tests.helpers import job_of

pytestmark = pytest.mark.django_db


def _submitted_and_scored(api_client_for, request_id: str):
    attempt = AttemptFactory()
    response = api_client_for(attempt.user).post(
        f"/api/v1/attempts/{attempt.pk}/submissions/",
        {"answer": "score=70"},
        format="json",
        HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex,
        HTTP_X_REQUEST_ID=request_id,
    )
    assert response.status_code == 202, response.content
    job = job_of(response.json()["submission_id"])
    assert job_run(job_id=job.pk, worker="evaluate@host:41", kind=job.kind, subject_id=job.subject_id) == "succeeded"
    return attempt, response.json()["submission_id"], job


def _staff() -> Client:
    client = Client()
    client.force_login(UserFactory(is_staff=True))
    return client


def test_the_timeline_shows_the_request_its_state_changes_and_the_try_in_time_order(api_client_for):
    attempt, submission_id, job = _submitted_and_scored(api_client_for, "click-7f3a")
    with CaptureQueriesContext(connection) as ctx:
        events = attempt_timeline(attempt_id=attempt.pk)
    assert len(ctx.captured_queries) == 6
    assert [event.at for event in events] == sorted(event.at for event in events)
    types = [event.type for event in events]
    assert types[0] == "request" and types.count("try") == 1
    assert events[0].request_id == "click-7f3a" and events[0].details["submission_id"] == submission_id
    (job_try,) = [event for event in events if event.type == "try"]
    assert job_try.request_id == "click-7f3a"
    assert job_try.details["worker"] == "evaluate@host:41" and job_try.details["duration_ms"] is not None
    moves = [event.summary for event in events if event.type == "state"]
    assert f"submission {submission_id}: processing → completed" in moves
    assert any(move.startswith(f"attempt {attempt.pk}: ") and move.endswith("→ completed") for move in moves)
    assert types.index("request") < types.index("try")

    page = _staff().get(f"/staff/attempts/{attempt.pk}/timeline/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'class="site-header"' in html
    assert "click-7f3a" in html and "evaluate@host:41" in html
    assert html.index(f"submit: submission {submission_id}") < html.index(f"evaluate job {job.pk}, try 1: succeeded")


def test_the_timeline_is_for_staff_only(api_client_for):
    attempt, _, _ = _submitted_and_scored(api_client_for, "click-1")
    url = f"/staff/attempts/{attempt.pk}/timeline/"
    owner = Client()
    owner.force_login(attempt.user)
    refused = owner.get(url)
    assert refused.status_code == 302 and "/admin/login/" in refused["Location"]
    anonymous = Client().get(url)
    assert anonymous.status_code == 302 and "/admin/login/" in anonymous["Location"]
    assert _staff().get("/staff/attempts/987654321/timeline/").status_code == 404

    api = f"/api/v1/ops/attempts/{attempt.pk}/timeline/"
    assert api_client_for(attempt.user).get(api).status_code == 403
    body = api_client_for(UserFactory(is_staff=True)).get(api).json()
    assert body["attempt_id"] == attempt.pk
    assert [event["type"] for event in body["events"]][0] == "request"
    assert {event["request_id"] for event in body["events"] if event["type"] != "state"} == {"click-1"}
    missing = api_client_for(UserFactory(is_staff=True)).get("/api/v1/ops/attempts/987654321/timeline/")
    assert missing.status_code == 404


def test_the_attempt_admin_page_links_to_its_timeline():
    attempt = AttemptFactory()
    admin = Client()
    admin.force_login(UserFactory(is_staff=True, is_superuser=True))
    page = admin.get(f"/admin/attempts/attempt/{attempt.pk}/change/").content.decode()
    assert f'href="/staff/attempts/{attempt.pk}/timeline/"' in page
