"""Runs: an answer tried against the visible examples or custom inputs, queued on its own, and
never a submission."""

import dataclasses
import uuid

import pytest
from django.conf import settings
from django.test import override_settings

from attempts.cache import attempt_cache_key
from attempts.models import Attempt, IdempotencyRecord, Run, RunStatus, StateChange, Submission
from attempts.services.admission import queue_backlog
from attempts.services.runs import run_complete, run_create, run_lock, run_start_processing
from evaluation.jobs import dead_letter_replay, job_run
from evaluation.languages import languages_status
from evaluation.models import DeadLetter, EvaluationJob, JobStatus, Outbox
from interviewprep.redis_state import cache_redis
from tests.factories import AttemptFactory, CodingQuestionFactory, QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db

ANSWER = "def add(a, b):\n    return a + b\n"
# What the code runner returns for ANSWER on the two visible examples (the worker's Python
# version, not necessarily the web process's).
WORKER_PYTHON = {"id": "python", "name": "Python", "version": "3.99.1"}
COMPLETED = {
    "language": WORKER_PYTHON,
    "time": {"compile_ms": None, "run_ms": 41.7, "compile_cached": False},
    "load_error": None,
    "stopped": None,
    "cases": [
        {
            "name": "small",
            "input": [1, 2],
            "expected": 3,
            "got": 3,
            "outcome": "passed",
            "stdout": "",
            "time_ms": 0.1,
            "error": None,
        },
        {
            "name": "negative",
            "input": [-1, 1],
            "expected": 0,
            "got": 0,
            "outcome": "passed",
            "stdout": "",
            "time_ms": 0.1,
            "error": None,
        },
    ],
}


def web_python() -> dict:
    """Python as this (web) process finds its toolchain."""
    row = next(row for row in languages_status() if row["id"] == "python")
    return {"id": "python", "name": row["name"], "version": row["version"]}


def coding_attempt(**kwargs) -> Attempt:
    return AttemptFactory(question=CodingQuestionFactory(), **kwargs)


def post_run(client, attempt_id, body=None, **extra):
    body = {"answer": ANSWER} if body is None else body
    return client.post(f"/api/v1/attempts/{attempt_id}/runs/", body, format="json", **extra)


def written() -> dict[str, int]:
    return {
        "runs": Run.objects.count(),
        "jobs": EvaluationJob.objects.count(),
        "outbox": Outbox.objects.count(),
        "idempotency": IdempotencyRecord.objects.count(),
        "submissions": Submission.objects.count(),
    }


def test_a_run_is_queued_with_its_job_on_the_run_queue(api_client_for):
    attempt = coding_attempt()
    response = post_run(api_client_for(attempt.user), attempt.pk, {"answer": ANSWER, "inputs": [[2, 2]]})
    assert response.status_code == 202
    run = Run.objects.get()
    assert response.json() == {"id": run.pk, "status": "queued", "language": "python"}
    assert (run.user_id, run.attempt_id, run.answer, run.language) == (attempt.user_id, attempt.pk, ANSWER, "python")
    assert run.inputs == [[2, 2]]
    job = EvaluationJob.objects.get()
    assert (job.kind, job.subject_id, job.status) == ("run", run.pk, JobStatus.PENDING)
    assert list(Outbox.objects.values_list("queue", flat=True)) == ["run"]


# Committed rows: the job runs in this process, and its heartbeat stamps from another connection.
@pytest.mark.django_db(transaction=True)
def test_a_run_is_not_a_submission(api_client_for):
    attempt = coding_attempt()
    client = api_client_for(attempt.user)
    assert client.get(f"/api/v1/attempts/{attempt.pk}/").status_code == 200  # cached now
    cached = cache_redis().hgetall(attempt_cache_key(attempt.pk))
    assert cached
    before = Attempt.objects.filter(pk=attempt.pk).values().get()

    run_id = post_run(client, attempt.pk).json()["id"]
    job = EvaluationJob.objects.get(kind="run", subject_id=run_id)
    # The run's whole life, in this process: it ends completed where the sandbox runs code and
    # failed where it refuses to; the attempt never hears of it either way.
    assert job_run(job_id=job.pk, worker="test") in ("succeeded", "dead")
    assert Run.objects.get(pk=run_id).status in (RunStatus.COMPLETED, RunStatus.FAILED)

    assert Attempt.objects.filter(pk=attempt.pk).values().get() == before
    assert not Submission.objects.exists()
    assert not StateChange.objects.filter(entity="attempt").exists()
    assert cache_redis().hgetall(attempt_cache_key(attempt.pk)) == cached
    assert client.get(f"/api/v1/attempts/{attempt.pk}/").json()["version"] == attempt.version


def test_a_completed_run_shows_its_cases(api_client_for):
    attempt = coding_attempt()
    client = api_client_for(attempt.user)
    run_id = post_run(client, attempt.pk).json()["id"]
    queued = client.get(f"/api/v1/runs/{run_id}/").json()
    assert queued["status"] == "queued"
    assert (queued["cases"], queued["load_error"], queued["stopped"], queued["error"]) == ([], None, None, None)
    assert (queued["language"], queued["time"]) == (web_python(), None)

    # The handler's steps as the job machinery takes them, with what the runner returns.
    run_start_processing(run=run_lock(run_id=run_id), actor="test")
    assert run_complete(run=run_lock(run_id=run_id), result=COMPLETED, actor="test") is None
    assert run_complete(run=run_lock(run_id=run_id), result=COMPLETED, actor="test") is not None

    body = client.get(f"/api/v1/runs/{run_id}/").json()
    run = Run.objects.get(pk=run_id)
    assert body == {
        "id": run_id,
        "attempt_id": attempt.pk,
        "status": "completed",
        "language": WORKER_PYTHON,
        "time": {"compile_ms": None, "run_ms": 41.7, "compile_cached": False},
        "cases": COMPLETED["cases"],
        "load_error": None,
        "stopped": None,
        "error": None,
        "created_at": run.created_at.isoformat(),
    }
    assert run.finished_at is not None
    moves = list(StateChange.objects.filter(entity="run", object_id=run_id).values_list("from_status", "to_status"))
    assert moves == [("queued", "processing"), ("processing", "completed")]


def test_a_run_shows_the_language_and_time_of_what_the_worker_ran_as_a_submission_does(api_client_for):
    attempt = coding_attempt()
    client = api_client_for(attempt.user)
    run_id = post_run(client, attempt.pk, {"answer": "function add(a, b) { return a + b; }", "language": "javascript"})
    run_id = run_id.json()["id"]
    ran = {"id": "javascript", "name": "JavaScript", "version": "20.20.2"}
    # As a worker reports it: a build of the same text compiled before.
    time = {"compile_ms": 0.0, "run_ms": 30.0, "compile_cached": True}
    result = {**COMPLETED, "language": ran, "time": time}
    run_start_processing(run=run_lock(run_id=run_id), actor="test")
    run_complete(run=run_lock(run_id=run_id), result=result, actor="test")
    body = client.get(f"/api/v1/runs/{run_id}/").json()
    assert (body["language"], body["time"]) == (ran, time)
    # The same two keys a submission's result carries in its details, in the same shape.
    details = {"language": ran, "time": time}
    assert {key: body[key] for key in details} == details


def test_a_run_recorded_before_workers_reported_their_language_names_it_from_the_web_server(api_client_for):
    attempt = coding_attempt()
    client = api_client_for(attempt.user)
    run_id = post_run(client, attempt.pk).json()["id"]
    old = {key: value for key, value in COMPLETED.items() if key not in ("language", "time")}
    run_start_processing(run=run_lock(run_id=run_id), actor="test")
    run_complete(run=run_lock(run_id=run_id), result=old, actor="test")
    body = client.get(f"/api/v1/runs/{run_id}/").json()
    assert (body["language"], body["time"]) == (web_python(), None)


def test_a_dead_lettered_run_fails_names_its_attempt_and_can_be_replayed(api_client_for):
    attempt = coding_attempt()
    client = api_client_for(attempt.user)
    run_id = post_run(client, attempt.pk).json()["id"]
    job = EvaluationJob.objects.get(kind="run", subject_id=run_id)
    with override_settings(CONFIG=dataclasses.replace(settings.CONFIG, evaluator_faults={"permanent": 1.0})):
        assert job_run(job_id=job.pk, worker="test") == "dead"
    run = Run.objects.get(pk=run_id)
    assert run.status == RunStatus.FAILED
    assert run.error and run.finished_at is not None
    body = client.get(f"/api/v1/runs/{run_id}/").json()
    assert (body["status"], body["cases"], body["error"]) == ("failed", [], run.error)
    letter = DeadLetter.objects.get(job=job)
    assert (letter.kind, letter.context) == (
        "run",
        {"run_id": run_id, "attempt_id": attempt.pk, "question": attempt.question.slug},
    )

    replay = dead_letter_replay(dead_letter_id=letter.pk, user=None)
    run.refresh_from_db()
    assert replay.replayed and run.status == RunStatus.QUEUED
    assert EvaluationJob.objects.get(pk=replay.job_id).kind == "run"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"answer": ""}, "answer"),
        ({"answer": "   \n"}, "answer"),
        ({"answer": 5}, "answer"),
        ({}, "answer"),
        ({"answer": ANSWER, "language": "cobol"}, "language"),
        ({"answer": ANSWER, "language": 3}, "language"),
        ({"answer": ANSWER, "inputs": "1, 2"}, "inputs"),
        ({"answer": ANSWER, "inputs": [1, 2]}, "inputs"),
        ({"answer": ANSWER, "inputs": []}, "inputs"),
        ({"answer": ANSWER, "inputs": [[1, 2]] * 11}, "inputs"),
    ],
)
def test_a_malformed_run_is_400_and_queues_nothing(api_client_for, body, field):
    attempt = coding_attempt()
    response = post_run(api_client_for(attempt.user), attempt.pk, body)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem.get("field") == field or field in problem.get("errors", {})
    assert written() == dict.fromkeys(written(), 0)


def test_ten_inputs_and_null_inputs_are_accepted(api_client_for):
    attempt = coding_attempt()
    client = api_client_for(attempt.user)
    assert post_run(client, attempt.pk, {"answer": ANSWER, "inputs": [[1, 2]] * 10}).status_code == 202
    assert post_run(client, attempt.pk, {"answer": ANSWER, "inputs": None, "language": "python"}).status_code == 202
    assert list(Run.objects.order_by("id").values_list("inputs", flat=True)) == [[[1, 2]] * 10, None]


def test_a_run_of_a_question_that_is_not_coding_is_400(api_client_for):
    attempt = AttemptFactory(question=QuestionFactory(kind="system_design"))
    response = post_run(api_client_for(attempt.user), attempt.pk)
    assert response.status_code == 400
    assert response.json()["detail"] == "Run is only for coding questions."
    assert written() == dict.fromkeys(written(), 0)


def test_an_answer_over_64_kib_is_413(api_client_for):
    attempt = coding_attempt()
    client = api_client_for(attempt.user)
    response = post_run(client, attempt.pk, {"answer": "x" * (settings.ANSWER_MAX_BYTES + 1)})
    assert response.status_code == 413
    assert response.json()["limit"] == settings.ANSWER_MAX_BYTES
    assert post_run(client, attempt.pk, {"answer": "x" * 400_000}).status_code == 413
    assert written() == dict.fromkeys(written(), 0)


def test_another_users_attempt_or_run_is_indistinguishable_from_a_missing_one(api_client_for):
    attempt = coding_attempt()
    owner = api_client_for(attempt.user)
    run_id = post_run(owner, attempt.pk).json()["id"]
    stranger = api_client_for(UserFactory())
    theirs, missing = post_run(stranger, attempt.pk), post_run(stranger, 999_999)
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json()["title"] == missing.json()["title"]
    their_run, no_run = stranger.get(f"/api/v1/runs/{run_id}/"), stranger.get("/api/v1/runs/999999/")
    assert their_run.status_code == no_run.status_code == 404
    assert their_run.json().keys() == no_run.json().keys()
    assert Run.objects.count() == 1
    assert owner.get(f"/api/v1/runs/{run_id}/").status_code == 200


def test_an_idempotency_key_is_honoured_when_sent(api_client_for):
    attempt = coding_attempt()
    client = api_client_for(attempt.user)
    first = post_run(client, attempt.pk, HTTP_IDEMPOTENCY_KEY="run-1")
    again = post_run(client, attempt.pk, HTTP_IDEMPOTENCY_KEY="run-1")
    assert first.status_code == again.status_code == 202
    assert again.content == first.content and again["Idempotent-Replayed"] == "true"
    assert Run.objects.count() == 1
    other_body = post_run(client, attempt.pk, {"answer": "def add(a, b): return 0"}, HTTP_IDEMPOTENCY_KEY="run-1")
    assert other_body.status_code == 422
    assert post_run(client, attempt.pk, HTTP_IDEMPOTENCY_KEY="bad key").status_code == 400
    assert post_run(client, attempt.pk).status_code == 202
    assert Run.objects.count() == EvaluationJob.objects.count() == 2


def test_runs_are_throttled_per_user_apart_from_submits(api_client_for, monkeypatch):
    from attempts.apis import RunThrottle, SubmitThrottle

    monkeypatch.setattr(RunThrottle, "THROTTLE_RATES", {"run": "2/min"})
    monkeypatch.setattr(SubmitThrottle, "THROTTLE_RATES", {"submit": "2/min"})
    mine, theirs = coding_attempt(), coding_attempt()
    client = api_client_for(mine.user)
    assert [post_run(client, mine.pk).status_code for _ in range(3)] == [202, 202, 429]
    refused = post_run(client, mine.pk)
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert refused["Content-Type"] == "application/problem+json"
    assert Run.objects.filter(attempt=mine).count() == 2
    assert post_run(api_client_for(theirs.user), theirs.pk).status_code == 202
    # The run budget is spent, the submit budget is not: a submit still goes through.
    submit = client.post(
        f"/api/v1/attempts/{mine.pk}/submissions/", {"answer": ANSWER}, format="json", HTTP_IDEMPOTENCY_KEY="s-1"
    )
    assert submit.status_code == 202
    # Reading a run is never throttled.
    run_id = Run.objects.filter(attempt=mine).values_list("pk", flat=True).first()
    assert all(client.get(f"/api/v1/runs/{run_id}/").status_code == 200 for _ in range(3))


def test_a_run_backlog_over_its_limit_refuses_runs_with_503_and_writes_nothing(api_client_for):
    attempt = coding_attempt()
    client = api_client_for(attempt.user)
    for _ in range(3):
        run_create(user=attempt.user, attempt_id=attempt.pk, answer=ANSWER)
    with override_settings(CONFIG=dataclasses.replace(settings.CONFIG, run_queue_limit=3)):
        assert queue_backlog(kind="run", fresh=True) == 3
        before = written()
        response = post_run(client, attempt.pk, HTTP_IDEMPOTENCY_KEY="refused-1")
        assert response.status_code == 503
        assert int(response["Retry-After"]) >= 1
        problem = response.json()
        assert problem["status"] == 503 and problem["retry_after"] == int(response["Retry-After"])
        assert "Runs are behind" in problem["detail"]
        assert written() == before
        # Submits wait on another queue, with its own limit.
        submit = client.post(
            f"/api/v1/attempts/{attempt.pk}/submissions/", {"answer": ANSWER}, format="json", HTTP_IDEMPOTENCY_KEY="s"
        )
        assert submit.status_code == 202

    # Below the limit, or with the limit off, the same request goes through.
    with override_settings(CONFIG=dataclasses.replace(settings.CONFIG, run_queue_limit=0)):
        assert post_run(client, attempt.pk, HTTP_IDEMPOTENCY_KEY="refused-1").status_code == 202


def test_an_evaluation_backlog_does_not_refuse_runs(api_client_for):
    attempt = coding_attempt()
    client = api_client_for(attempt.user)
    submit = client.post(
        f"/api/v1/attempts/{attempt.pk}/submissions/", {"answer": ANSWER}, format="json", HTTP_IDEMPOTENCY_KEY="s"
    )
    assert submit.status_code == 202
    with override_settings(CONFIG=dataclasses.replace(settings.CONFIG, evaluate_queue_limit=1)):
        assert queue_backlog(kind="evaluate", fresh=True) == 1
        assert post_run(client, attempt.pk).status_code == 202
        refused = client.post(
            f"/api/v1/attempts/{attempt.pk}/submissions/", {"answer": ANSWER}, format="json", HTTP_IDEMPOTENCY_KEY="t"
        )
        assert refused.status_code == 503


def test_unauthenticated_run_is_401():
    from rest_framework.test import APIClient

    attempt = coding_attempt()
    assert post_run(APIClient(), attempt.pk).status_code == 401
    assert APIClient().get(f"/api/v1/runs/{uuid.uuid4().int % 1000 + 1}/").status_code == 401


@pytest.mark.django_db(transaction=True)
def test_inputs_the_runner_refuses_fail_the_run_with_its_message_and_no_dead_letter():
    from django.db import transaction

    from evaluation.jobs import job_enqueue

    attempt = coding_attempt()
    # Past the service's shape check (the runner checks more than the shape).
    with transaction.atomic():
        run = Run.objects.create(user=attempt.user, attempt=attempt, answer=ANSWER, inputs=[[1, 2]] * 11)
        job = job_enqueue(kind="run", subject_id=run.pk)
    assert job_run(job_id=job.pk, worker="test") == "succeeded"
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "inputs" in run.error
    assert run.result is None and run.finished_at is not None
    assert not DeadLetter.objects.exists()
    assert EvaluationJob.objects.get(pk=job.pk).status == JobStatus.SUCCEEDED


def test_a_run_without_its_job_breaks_an_invariant(api_client_for, assert_invariants):
    from attempts.services.invariants import invariants_check

    attempt = coding_attempt()
    post_run(api_client_for(attempt.user), attempt.pk)
    assert_invariants()
    orphan = Run.objects.create(user=attempt.user, attempt=attempt, answer=ANSWER)
    violations = {v.check: v.rows for v in invariants_check()}
    assert violations["run_has_job"] == [{"run_id": orphan.pk, "attempt_id": attempt.pk}]
