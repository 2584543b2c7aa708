"""Queued jobs with the instant evaluator drain completely, with one result each: 2,000 in
`make test`, 10,000 in `make drills` (about three minutes on 2 cores)."""

import os
import time

import pytest
from django.db import connection
from django.utils import timezone

from attempts.models import Attempt, AttemptStatus, Result, Submission
from evaluation.models import EvaluationJob, JobStatus, Outbox
from tests.factories import QuestionFactory, UserFactory
from tests.helpers import wait_while_progressing


def _bulk_queue(count):
    """The state a burst of `count` submits leaves behind, written in bulk."""
    user, question = UserFactory(), QuestionFactory()
    attempts = Attempt.objects.bulk_create(
        Attempt(user=user, question=question, status=AttemptStatus.QUEUED, version=2) for _ in range(count)
    )
    submissions = Submission.objects.bulk_create(Submission(attempt=a, answer="score=90") for a in attempts)
    for attempt, submission in zip(attempts, submissions, strict=True):
        attempt.latest_submission = submission
    Attempt.objects.bulk_update(attempts, ["latest_submission"], batch_size=2000)
    jobs = EvaluationJob.objects.bulk_create(
        EvaluationJob(kind="evaluate", subject_id=s.pk, status=JobStatus.PENDING, max_tries=5) for s in submissions
    )
    now = timezone.now()
    Outbox.objects.bulk_create(
        Outbox(job=j, queue="evaluate", task_name="evaluation.tasks.run_job", available_at=now) for j in jobs
    )


@pytest.mark.parametrize(
    "jobs", [int(os.environ.get("DRAIN_JOBS", "2000")), pytest.param(10_000, marks=pytest.mark.drill)]
)
def test_queued_jobs_drain_with_one_result_each(workers, relay, assert_invariants, jobs):
    JOBS = jobs
    _bulk_queue(JOBS)
    connection.close()
    workers(concurrency=2)
    started = time.monotonic()
    wait_while_progressing(lambda: Result.objects.count(), JOBS, what="results")
    elapsed = time.monotonic() - started
    print(f"\n{JOBS} jobs drained in {elapsed:.1f} s ({JOBS / elapsed:.0f} per second)")
    assert EvaluationJob.objects.filter(status=JobStatus.SUCCEEDED).count() == JOBS
    assert not Outbox.objects.filter(published_at__isnull=True).exists()
    assert Submission.objects.filter(status="completed").count() == JOBS
    assert_invariants()
