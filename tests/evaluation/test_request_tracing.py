"""One request's X-Request-ID, from the submit to the worker's log lines and the job's try."""

import json
import uuid

import pytest

from evaluation.models import EvaluationJob, JobStatus, JobTry
from tests.factories import AttemptFactory
from tests.helpers import job_of
from tests.processes import start_relay, wait_for


def submit(client, attempt_id, request_id=None):
    headers = {} if request_id is None else {"HTTP_X_REQUEST_ID": request_id}
    return client.post(
        f"/api/v1/attempts/{attempt_id}/submissions/",
        {"answer": "score=61"},
        format="json",
        HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex,
        **headers,
    )


def json_lines(text: str) -> list[dict]:
    lines = []
    for raw in text.splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue  # Celery's banner, written before logging is set up
        if isinstance(line, dict):
            lines.append(line)
    return lines


def test_the_request_id_reaches_the_worker_log_lines_of_its_job_and_its_try(workers, api_client_for, tmp_path):
    relay = start_relay(tmp_path, LOG_LEVEL="INFO")
    try:
        _follow_one_submit(workers(relay=False), relay, api_client_for)
    finally:
        relay.stop()


def _follow_one_submit(worker, relay, api_client_for):
    attempt = AttemptFactory()
    request_id = f"trace-{uuid.uuid4().hex[:12]}"
    response = submit(api_client_for(attempt.user), attempt.pk, request_id)
    assert response.status_code == 202, response.content
    assert response["X-Request-ID"] == request_id
    submission_id = response.json()["submission_id"]
    job = job_of(submission_id)
    assert job.request_id == request_id
    wait_for(lambda: EvaluationJob.objects.get(pk=job.pk).status == JobStatus.SUCCEEDED, timeout=40)

    (job_try,) = JobTry.objects.filter(job=job)
    assert job_try.request_id == request_id
    mine = wait_for(
        lambda: [line for line in json_lines(worker.output()) if line.get("request_id") == request_id],
        timeout=10,
        message="the worker's lines for the job",
    )
    ended = next(line for line in mine if line["msg"] == "job try ended")
    assert ended["job_id"] == job.pk and ended["try"] == 1 and ended["outcome"] == "succeeded"
    assert ended["attempt_id"] == attempt.pk and ended["submission_id"] == submission_id
    assert all(line["job_id"] == job.pk for line in mine)
    # No line of another job's, or of no job, claims this request.
    others = [line for line in json_lines(worker.output()) if line.get("job_id") == job.pk]
    assert {line["request_id"] for line in others} == {request_id}
    published = [line for line in json_lines(relay.output()) if line["msg"] == "job message published"]
    assert [line["request_id"] for line in published if line["job_id"] == job.pk] == [request_id]


@pytest.mark.django_db
@pytest.mark.parametrize("sent", ["bad id with spaces", "x" * 65, "semi;colon", "ünïcode"])
def test_a_bad_request_id_is_replaced_not_trusted(api_client_for, sent):
    attempt = AttemptFactory()
    response = submit(api_client_for(attempt.user), attempt.pk, sent)
    assert response.status_code == 202, response.content
    made = response["X-Request-ID"]
    assert made != sent and len(made) == 32
    assert job_of(response.json()["submission_id"]).request_id == made


@pytest.mark.django_db
def test_a_submit_without_a_request_id_gets_one_and_its_job_keeps_it(api_client_for):
    attempt = AttemptFactory()
    response = submit(api_client_for(attempt.user), attempt.pk)
    assert response.status_code == 202, response.content
    assert job_of(response.json()["submission_id"]).request_id == response["X-Request-ID"] != ""
