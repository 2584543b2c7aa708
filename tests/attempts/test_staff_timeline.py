"""The staff timeline of one attempt: requests, state changes, job tries and cache writes, oldest first."""

import uuid

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

from attempts.models import Attempt, AttemptStatus, Regrade
from attempts.selectors.timeline import attempt_timeline
from attempts.services.regrades import regrade_start
from evaluation.jobs import job_run
from evaluation.models import EvaluationJob
from tests.attempts.regrade_helpers import grading_changed, scored_attempt
from tests.factories import AttemptFactory, QuestionFactory, UserFactory
from tests.helpers import job_of
from tests.processes import free_port, wait_for

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
        timeline = attempt_timeline(attempt_id=attempt.pk)
    assert len(ctx.captured_queries) == 7
    assert timeline.cache_writes_shown
    events = [event for event in timeline.events if event.type != "cache"]
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


def test_a_real_submission_shows_its_cache_writes_in_order_with_its_state_changes(workers, api_client_for):
    """Through a real worker: each write of the cached copy appears with its stamp, version and
    writer, after the state change whose copy it wrote."""
    workers(concurrency=1, EVALUATOR_FAULTS="delay=1")
    attempt = AttemptFactory()
    candidate = api_client_for(attempt.user)
    response = candidate.post(
        f"/api/v1/attempts/{attempt.pk}/submissions/",
        {"answer": "score=70"},
        format="json",
        HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex,
        HTTP_X_REQUEST_ID="click-cache-9",
    )
    assert response.status_code == 202, response.content
    # The candidate's page reads the attempt while it waits: that read fills the cache.
    read = candidate.get(f"/api/v1/attempts/{attempt.pk}/", HTTP_X_REQUEST_ID="poll-1")
    assert read.json()["status"] in ("queued", "processing")
    wait_for(
        lambda: Attempt.objects.get(pk=attempt.pk).status == AttemptStatus.COMPLETED,
        timeout=60,
        message="the submission scored",
    )
    staff = api_client_for(UserFactory(is_staff=True))
    body = wait_for(
        lambda: _with_completed_copy(staff.get(f"/api/v1/ops/attempts/{attempt.pk}/timeline/").json()),
        timeout=30,
        message="the worker's write of the completed copy",
    )
    assert body["cache_writes"] == "shown"
    events = body["events"]
    assert [event["at"] for event in events] == sorted(event["at"] for event in events)
    writes = [event for event in events if event["type"] == "cache"]
    stored = [w for w in writes if w["details"]["outcome"] == "stored"]
    assert [w["details"]["version"] for w in stored] == sorted(w["details"]["version"] for w in stored)
    assert len(stored) == 2 and stored[-1]["details"]["status"] == "completed"
    assert stored[0]["request_id"] == "poll-1"
    for status in {w["details"]["status"] for w in stored}:
        moved = f"attempt {attempt.pk}: "
        change = next(
            i
            for i, e in enumerate(events)
            if e["type"] == "state" and e["summary"].startswith(moved) and e["summary"].endswith(status)
        )
        write = next(i for i, e in enumerate(events) if e in stored and e["details"]["status"] == status)
        assert change < write, (status, events)
    (completed,) = [w for w in stored if w["details"]["status"] == "completed"]
    (job_try,) = [event for event in events if event["type"] == "try"]
    # The worker's child wrote it, for the click that made the submission.
    assert completed["details"]["process"].rsplit(":", 1)[1] == job_try["details"]["worker"].rsplit(":", 1)[1]
    assert completed["request_id"] == "click-cache-9"
    assert completed["summary"].startswith(f"cache write, stamp {completed['details']['stamp']} (version ")

    html = _staff().get(f"/staff/attempts/{attempt.pk}/timeline/").content.decode()
    assert f"by process {completed['details']['process']}" in html
    assert "cache-writes-unavailable" not in html


def _with_completed_copy(body: dict) -> dict | None:
    done = any(
        e["type"] == "cache" and e["details"]["status"] == "completed" and e["details"]["outcome"] == "stored"
        for e in body["events"]
    )
    return body if done else None


def test_redis_down_the_timeline_says_cache_writes_are_unavailable_and_shows_the_rest(api_client_for):
    attempt, submission_id, _ = _submitted_and_scored(api_client_for, "click-2")
    unreachable = {"default": {**settings.CACHES["default"], "LOCATION": f"redis://127.0.0.1:{free_port()}/0"}}
    with override_settings(CACHES=unreachable):
        body = api_client_for(UserFactory(is_staff=True)).get(f"/api/v1/ops/attempts/{attempt.pk}/timeline/").json()
        html = _staff().get(f"/staff/attempts/{attempt.pk}/timeline/").content.decode()
    assert body["cache_writes"] == "unavailable"
    assert {event["type"] for event in body["events"]} == {"request", "state", "try"}
    assert 'id="cache-writes-unavailable"' in html
    assert f"submit: submission {submission_id}" in html


def test_a_regrade_of_the_attempt_shows_with_its_job_tries():
    question = QuestionFactory()
    attempt = scored_attempt(question, score=60, answer="score=90")
    regrade_start(change_id=grading_changed(question).pk, user=UserFactory(is_staff=True))
    job = EvaluationJob.objects.get(kind="regrade")
    assert job_run(job_id=job.pk, worker="regrade@host:7") == "succeeded"
    regrade = Regrade.objects.get()

    with CaptureQueriesContext(connection) as ctx:
        timeline = attempt_timeline(attempt_id=attempt.pk)
    assert len(ctx.captured_queries) == 7
    summaries = [event.summary for event in timeline.events]
    started = f"regrade: submission {attempt.latest_submission_id}, question change {regrade.change_id}"
    assert started in summaries
    (job_try,) = [event for event in timeline.events if event.type == "try"]
    assert job_try.summary == f"regrade job {job.pk}, try 1: succeeded"
    assert job_try.details["worker"] == "regrade@host:7"
    assert summaries.index(started) < summaries.index(job_try.summary)
    (verdict,) = [event for event in timeline.events if event.summary.startswith(f"regrade {regrade.pk}:")]
    assert verdict.summary == f"regrade {regrade.pk}: 60 → 90 ({regrade.status})"

    html = _staff().get(f"/staff/attempts/{attempt.pk}/timeline/").content.decode()
    assert started in html and verdict.summary in html
    assert f"for question change {regrade.change_id}" in html and "by</td>" not in html.replace("\n", "").replace(
        " ", ""
    )
