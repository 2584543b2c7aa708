"""Runs through real processes: the relay publishes them to the `run` queue and a worker of
that queue alone executes them, however many evaluations wait on theirs."""

import dataclasses

import pytest
from django.conf import settings
from django.test import override_settings

from attempts.models import Attempt, Run, RunStatus, Submission
from attempts.services.attempts import submission_create
from evaluation.models import EvaluationJob, JobStatus, JobTry
from evaluation.sandbox import REFUSED, current_mode
from tests.factories import AttemptFactory, CodingQuestionFactory, QuestionFactory, UserFactory
from tests.processes import wait_for

ANSWER = "def add(a, b):\n    return a + b\n"
FINAL = (RunStatus.COMPLETED, RunStatus.FAILED)


def sandbox_runs_code() -> bool:
    return current_mode() != REFUSED


def run_and_wait(client, attempt_id: int, body: dict) -> dict:
    response = client.post(f"/api/v1/attempts/{attempt_id}/runs/", body, format="json")
    # 200 with the cases when the run finished within the create's wait, else 202.
    assert response.status_code in (200, 202), response.content
    if response.status_code == 200:
        assert response.json()["status"] in FINAL
        return response.json()
    run_id = response.json()["id"]

    def finished():
        payload = client.get(f"/api/v1/runs/{run_id}/").json()
        return payload if payload["status"] in FINAL else None

    return wait_for(finished, timeout=60, interval=0.1, message=f"run {run_id} to finish")


def test_a_run_worker_runs_the_visible_examples_and_custom_inputs(workers, api_client_for, assert_invariants):
    if not sandbox_runs_code():
        pytest.skip("the code sandbox refuses to run code on this machine")
    workers(queues="run")
    attempt = AttemptFactory(question=CodingQuestionFactory())
    before = Attempt.objects.filter(pk=attempt.pk).values().get()
    client = api_client_for(attempt.user)

    examples = run_and_wait(client, attempt.pk, {"answer": ANSWER})
    assert examples["status"] == "completed", examples
    assert [(c["name"], c["input"], c["expected"], c["got"], c["outcome"]) for c in examples["cases"]] == [
        ("small", "1, 2", "3", "3", "passed"),
        ("negative", "-1, 1", "0", "0", "passed"),
    ]
    assert (examples["load_error"], examples["stopped"]) == (None, None)

    custom = run_and_wait(client, attempt.pk, {"answer": ANSWER, "inputs": [[2, 2], [5, -5]]})
    assert [(c["input"], c["expected"], c["got"], c["outcome"]) for c in custom["cases"]] == [
        ("2, 2", None, "4", "ran"),
        ("5, -5", None, "0", "ran"),
    ]

    wrong = run_and_wait(client, attempt.pk, {"answer": "def add(a, b):\n    print('hi')\n    return a - b\n"})
    assert [(c["got"], c["outcome"]) for c in wrong["cases"]] == [("-1", "failed"), ("-2", "failed")]
    assert wrong["cases"][0]["stdout"].startswith("hi")

    broken = run_and_wait(client, attempt.pk, {"answer": "def add(a, b)\n    return a + b\n"})
    assert broken["status"] == "completed"
    assert broken["load_error"]["kind"] == "compile" and broken["cases"] == []

    assert Attempt.objects.filter(pk=attempt.pk).values().get() == before
    assert not Submission.objects.exists()
    assert_invariants()


def test_a_run_is_served_while_many_evaluations_wait(workers, api_client_for):
    # Evaluations waiting on their queue, published, with no worker of theirs running: of many
    # candidates, since fair share publishes only a few of one user's at a time.
    question = QuestionFactory()
    for _ in range(100):
        user = UserFactory()
        submission_create(user=user, attempt_id=AttemptFactory(user=user, question=question).pk, answer="score=5")
    evaluations = EvaluationJob.objects.filter(kind="evaluate")
    workers(queues="run")
    wait_for(
        lambda: evaluations.filter(status=JobStatus.QUEUED).count() == 100,
        timeout=60,
        message="the relay to publish the evaluations",
    )

    attempt = AttemptFactory(question=CodingQuestionFactory())
    client = api_client_for(attempt.user)
    payload = run_and_wait(client, attempt.pk, {"answer": ANSWER})

    # Completed where the sandbox runs code; where it refuses, the run fails saying so. Either
    # way it finished while every evaluation still waits, untouched.
    if sandbox_runs_code():
        assert payload["status"] == "completed" and len(payload["cases"]) == 2
    else:
        assert payload["status"] == "failed" and "sandbox" in payload["error"]
    run = Run.objects.get(pk=payload["id"])
    run_job = EvaluationJob.objects.get(kind="run", subject_id=run.pk)
    assert run_job.status in (JobStatus.SUCCEEDED, JobStatus.DEAD)
    assert JobTry.objects.filter(job=run_job).count() == 1
    assert evaluations.filter(status=JobStatus.QUEUED, tries=0).count() == 100
    assert not JobTry.objects.filter(job__kind="evaluate").exists()


def test_creating_a_run_answers_its_cases_when_it_finishes_within_the_wait(workers, api_client_for):
    if not sandbox_runs_code():
        pytest.skip("the code sandbox refuses to run code on this machine")
    workers(queues="run")
    attempt = AttemptFactory(question=CodingQuestionFactory())
    client = api_client_for(attempt.user)
    with override_settings(CONFIG=dataclasses.replace(settings.CONFIG, run_wait_seconds=30)):
        response = client.post(f"/api/v1/attempts/{attempt.pk}/runs/", {"answer": ANSWER}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "completed"
    assert [case["outcome"] for case in response.json()["cases"]] == ["passed", "passed"]
