"""A task sent by the web process is executed by a real worker process, end to end."""

import uuid

from attempts.models import Attempt, Result
from evaluation.models import EvaluationJob, JobStatus
from tests.factories import AttemptFactory
from tests.processes import wait_for


def submit(client, attempt_id, answer):
    response = client.post(
        f"/api/v1/attempts/{attempt_id}/submissions/",
        {"answer": answer},
        format="json",
        HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex,
    )
    assert response.status_code == 202, response.content
    return response.json()


def test_submit_through_the_api_is_scored_by_a_worker_process(workers, api_client_for, assert_invariants):
    workers()
    attempt = AttemptFactory()
    client = api_client_for(attempt.user)
    accepted = submit(client, attempt.pk, "score=73")
    wait_for(lambda: Result.objects.filter(submission_id=accepted["submission_id"]).exists(), timeout=30)
    body = client.get(f"/api/v1/attempts/{attempt.pk}/", {"min_version": accepted["version"]}).json()
    assert body["status"] == "completed"
    assert body["latest_submission_id"] == accepted["submission_id"]
    assert body["result"]["score"] == 73
    job = EvaluationJob.objects.get(kind="evaluate", subject_id=accepted["submission_id"])
    assert job.status == JobStatus.SUCCEEDED
    assert job.tries == 1
    assert Attempt.objects.get(pk=attempt.pk).version == accepted["version"] + 2  # processing, completed
    assert_invariants()
