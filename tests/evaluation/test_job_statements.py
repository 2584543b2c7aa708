"""What one instant evaluation job costs the database, counted (never timed), and the claim's
and the fence's compare-and-swaps doing what the reads they replace did."""

import threading
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from attempts.models import Attempt, Result, StateChange, Submission
from evaluation.jobs import job_run
from evaluation.jobs.claim import job_claim
from evaluation.jobs.outcomes import job_record
from evaluation.models import EvaluationJob, JobStatus, JobTry
from interviewprep.redis_state import cache_redis
from tests.factories import AttemptFactory
from tests.helpers import submit_via_service

pytestmark = pytest.mark.django_db(transaction=True)

# The claim: SET LOCAL synchronous_commit, lock the subject, swap the job to running, then one
# statement for the try's row, submission and attempt to processing and their state changes.
# The record: lock the subject, then one statement for the result, submission and attempt to
# completed, their state changes, the try's end and the fenced swap of the job. BEGIN and COMMIT
# are not counted.
STATEMENTS_PER_INSTANT_JOB = 6
# A message from before kind and subject_id were sent: one read of them first.
STATEMENTS_FOR_AN_OLD_MESSAGE = STATEMENTS_PER_INSTANT_JOB + 1


def _statements(ctx) -> list[str]:
    return [q["sql"] for q in ctx.captured_queries if q["sql"] not in ("BEGIN", "COMMIT")]


def _queued_job(answer: str = "score=50") -> tuple[int, EvaluationJob]:
    submission_id, job_id = submit_via_service(AttemptFactory(), answer)
    EvaluationJob.objects.filter(pk=job_id).update(status=JobStatus.QUEUED)
    return submission_id, EvaluationJob.objects.get(pk=job_id)


def test_instant_job_stays_within_its_statement_budget():
    submission_id, job = _queued_job()
    with CaptureQueriesContext(connection) as ctx:
        assert job_run(job_id=job.pk, worker="w:1", kind=job.kind, subject_id=job.subject_id) == "succeeded"
    statements = _statements(ctx)
    assert len(statements) <= STATEMENTS_PER_INSTANT_JOB, "\n".join(s[:120] for s in statements)
    # Nothing reads the job's row: the message names it and the swaps move it.
    assert not [s for s in statements if s.startswith("SELECT") and '"evaluation_evaluationjob"' in s.split("FROM")[1]]
    assert Result.objects.get(submission_id=submission_id).score == 50
    assert JobTry.objects.get(job=job).outcome == JobTry.Outcome.SUCCEEDED
    assert list(
        StateChange.objects.filter(entity="submission", object_id=submission_id).values_list("to_status", flat=True)
    ) == ["processing", "completed"]


def test_old_one_argument_message_still_runs_with_one_read_more():
    _, job = _queued_job()
    with CaptureQueriesContext(connection) as ctx:
        assert job_run(job_id=job.pk, worker="w:1") == "succeeded"
    assert len(_statements(ctx)) <= STATEMENTS_FOR_AN_OLD_MESSAGE


def test_message_naming_another_subject_claims_nothing():
    _, job = _queued_job()
    other_submission, _ = _queued_job()
    assert job_claim(job_id=job.pk, worker="w:1", kind=job.kind, subject_id=other_submission) is None
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED
    assert job.tries == 0
    assert not JobTry.objects.filter(job=job).exists()


def test_claim_of_a_job_with_a_live_run_is_refused_without_a_try():
    _, job = _queued_job()
    first = job_claim(job_id=job.pk, worker="w:1", kind=job.kind, subject_id=job.subject_id)
    assert first is not None
    assert job_claim(job_id=job.pk, worker="w:2", kind=job.kind, subject_id=job.subject_id) is None
    job.refresh_from_db()
    assert (job.status, job.tries, job.lease_token) == (JobStatus.RUNNING, 1, first.token)
    assert JobTry.objects.filter(job=job).count() == 1


def test_takeover_of_a_silent_run_ends_its_try_abandoned():
    _, job = _queued_job()
    first = job_claim(job_id=job.pk, worker="w:1", kind=job.kind, subject_id=job.subject_id)
    EvaluationJob.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timezone.timedelta(minutes=5))
    second = job_claim(job_id=job.pk, worker="w:2", kind=job.kind, subject_id=job.subject_id)
    assert second is not None and second.tries == 2 and second.token != first.token
    outcomes = list(JobTry.objects.filter(job=job).order_by("number").values_list("outcome", flat=True))
    assert outcomes == [JobTry.Outcome.ABANDONED, JobTry.Outcome.RUNNING]


def test_run_that_lost_its_lease_writes_nothing_but_its_try():
    submission_id, job = _queued_job()
    claim = job_claim(job_id=job.pk, worker="w:1", kind=job.kind, subject_id=job.subject_id)
    # Another run took the job over meanwhile: the lease token is no longer this run's.
    EvaluationJob.objects.filter(pk=job.pk).update(lease_token=uuid.uuid4())
    from evaluation.evaluators import EvaluationOutcome

    outcome = EvaluationOutcome(score=50, max_score=100, feedback="late", details={})
    assert job_record(claim, outcome) == "lost_lease"
    assert not Result.objects.filter(submission_id=submission_id).exists()
    assert Submission.objects.get(pk=submission_id).status == "processing"
    job.refresh_from_db()
    assert job.status == JobStatus.RUNNING
    assert JobTry.objects.get(pk=claim.try_id).outcome == JobTry.Outcome.LOST_LEASE
    assert not StateChange.objects.filter(entity="submission", object_id=submission_id, to_status="completed").exists()


def test_claim_with_no_tries_left_dead_letters_without_a_new_try():
    submission_id, job = _queued_job()
    EvaluationJob.objects.filter(pk=job.pk).update(tries=job.max_tries)
    assert job_claim(job_id=job.pk, worker="w:1", kind=job.kind, subject_id=job.subject_id) is None
    job.refresh_from_db()
    assert job.status == JobStatus.DEAD
    assert not JobTry.objects.filter(job=job).exists()
    assert Submission.objects.get(pk=submission_id).status == "failed"


def test_a_results_waiters_are_told_only_once_its_copy_is_in_the_cache():
    """The copy is stored before the notification is published, so a waiter it wakes reads a hit
    (watched in Redis's own order of commands, MONITOR)."""
    submission_id, job = _queued_job()
    attempt_id = Submission.objects.get(pk=submission_id).attempt_id
    client = cache_redis()
    db = client.connection_pool.connection_kwargs.get("db", 0)
    seen: list[str] = []
    watching = threading.Event()

    def watch() -> None:
        with client.monitor() as monitor:
            watching.set()
            for command in monitor.listen():
                if command["db"] == db and f"attempt:{attempt_id}" in command["command"]:
                    seen.append(command["command"])
                    if command["command"].startswith("PUBLISH") and command["command"].endswith(f" {version}"):
                        return

    version = Attempt.objects.get(pk=attempt_id).version + 2  # processing, then the result
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    assert watching.wait(10)
    client.ping()  # MONITOR is on once a command after it is seen by it
    assert job_run(job_id=job.pk, worker="w:1", kind=job.kind, subject_id=job.subject_id) == "succeeded"
    watcher.join(10)
    stored = [i for i, c in enumerate(seen) if c.startswith("hset") and f'"version":{version},' in c]
    published = [i for i, c in enumerate(seen) if c.startswith("PUBLISH") and c.endswith(f" {version}")]
    assert stored and published, seen
    assert stored[0] < published[0], seen
