"""Promise 2 (latest submission wins, whatever the finishing order) and promise 6 (two
sweepers re-send each stuck job exactly once), with real threads on real connections."""

import dataclasses
import random
import threading
import uuid
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from attempts.models import Attempt, Result, Submission
from evaluation.evaluators import register
from evaluation.jobs import job_run, jobs_sweep
from evaluation.models import EvaluationJob, JobStatus, Outbox
from tests.evaluation import gated
from tests.factories import AttemptFactory, QuestionFactory
from tests.helpers import submit_via_service


def _run(job_id, outcomes):
    try:
        outcomes[job_id] = job_run(job_id=job_id, worker="test")
    finally:
        connection.close()


def _run_until_final(job_id):
    import time

    for _ in range(100):
        job = EvaluationJob.objects.get(pk=job_id)
        if job.status in (JobStatus.SUCCEEDED, JobStatus.DISCARDED, JobStatus.DEAD):
            return
        if job.next_retry_at and job.next_retry_at > timezone.now():
            time.sleep((job.next_retry_at - timezone.now()).total_seconds() + 0.01)
        job_run(job_id=job_id, worker="test")
    raise AssertionError(f"job {job_id} never finished")


@pytest.fixture
def gated_evaluator():
    register("gated", "tests.evaluation.gated:GatedEvaluator")
    gated.reset()
    yield
    gated.reset()


def _orderings(rng):
    """A random order of: job 1 starts, submission 2 arrives, job 2 starts, each gate opens."""
    while True:
        steps = ["start1", "submit2", "start2", "open1", "open2"]
        rng.shuffle(steps)
        position = {s: i for i, s in enumerate(steps)}
        if position["start1"] < position["open1"] and position["submit2"] < position["start2"] < position["open2"]:
            return steps


@pytest.mark.django_db(transaction=True)
def test_out_of_order_finishes_always_show_the_newest_submission(gated_evaluator, assert_invariants):
    question = QuestionFactory(evaluator="gated")
    for seed in range(40):
        rng = random.Random(seed)
        steps = _orderings(rng)
        attempt = AttemptFactory(question=question)
        first, first_job = submit_via_service(attempt, f"first {seed}")
        second = second_job = None
        outcomes = {}
        threads = {}
        for step in steps:
            if step == "start1":
                threads[1] = threading.Thread(target=_run, args=(first_job, outcomes))
                threads[1].start()
                # Either it reaches the evaluator, or it finished (discarded at claim).
                while not gated.entered[first].wait(0.01) and threads[1].is_alive():
                    pass
            elif step == "submit2":
                second, second_job = submit_via_service(attempt, f"second {seed}")
            elif step == "start2":
                threads[2] = threading.Thread(target=_run, args=(second_job, outcomes))
                threads[2].start()
                while not gated.entered[second].wait(0.01) and threads[2].is_alive():
                    pass
            elif step == "open1":
                gated.gates[first].set()
                if "submit2" not in steps[: steps.index("open1")]:
                    threads[1].join(120)
                    assert not threads[1].is_alive(), (seed, steps)
            elif step == "open2":
                gated.gates[second].set()
        for thread in threads.values():
            thread.join(120)
            assert not thread.is_alive(), (seed, steps)
        # A run that found the attempt's lock held was deferred: run it again once due, as
        # the relay would.
        _run_until_final(second_job)
        attempt.refresh_from_db()
        assert attempt.latest_submission_id == second, (seed, steps)
        assert attempt.status == "completed", (seed, steps, outcomes)
        assert Result.objects.get(submission__attempt=attempt, submission_id=second)
        older = Submission.objects.get(pk=first)
        if older.status == "completed":
            # Only possible when its result was written before the newer submission arrived.
            assert steps.index("open1") < steps.index("submit2"), (seed, steps)
        else:
            assert older.status == "superseded", (seed, steps, older.status)
            assert not Result.objects.filter(submission_id=first).exists()
        shown = Attempt.objects.get(pk=attempt.pk)
        assert Result.objects.get(submission_id=shown.latest_submission_id).submission_id == second
    assert_invariants()


@pytest.mark.django_db(transaction=True)
def test_two_sweepers_at_once_resend_each_stuck_job_exactly_once():
    attempts = [AttemptFactory() for _ in range(150)]
    jobs = []
    for attempt in attempts:
        _, job_id = submit_via_service(attempt, "score=1")
        jobs.append(job_id)
    long_ago = timezone.now() - timedelta(hours=1)
    half = len(jobs) // 2
    EvaluationJob.objects.filter(pk__in=jobs[:half]).update(
        status=JobStatus.RUNNING, heartbeat_at=long_ago, lease_token=uuid.uuid4(), tries=1
    )
    EvaluationJob.objects.filter(pk__in=jobs[half:]).update(status=JobStatus.QUEUED, updated_at=long_ago)
    Outbox.objects.update(published_at=long_ago)
    barrier = threading.Barrier(2)
    counts = []
    config = dataclasses.replace(settings.CONFIG, stale_job_after=60)

    def sweeper():
        try:
            with override_settings(CONFIG=config):
                barrier.wait()
                counts.append(jobs_sweep())
        finally:
            connection.close()

    threads = [threading.Thread(target=sweeper) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sum(counts) == len(jobs)
    for job_id in jobs:
        assert Outbox.objects.filter(job_id=job_id).count() == 2, job_id  # the submit's, and one re-send
    assert set(EvaluationJob.objects.values_list("status", flat=True)) <= {JobStatus.QUEUED, JobStatus.PENDING}
    with override_settings(CONFIG=config):
        assert jobs_sweep() == 0
