"""The one-call claim and result write (evaluation/sql/hot_path.sql) against the general paths.

The SQL functions handle only the common case; these tests hold them to writing exactly what
the Python paths write, and to leaving every other case alone, so the two cannot drift apart.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from django.db import connection, transaction
from django.db.models import Q

from attempts.models import (
    Attempt,
    AttemptStatus,
    Result,
    StateChange,
    Submission,
    SubmissionStatus,
)
from attempts.selectors import cache
from attempts.services.transitions import is_legal
from evaluation.evaluators.base import EvaluationOutcome
from evaluation.models import EvaluationJob, JobStatus, JobTry
from evaluation.services import jobs
from interviewprep import background
from tests.factories import AttemptFactory
from tests.helpers import submit_via_service
from tests.processes import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

OUTCOME = EvaluationOutcome(score=61.0, max_score=100.0, feedback="fine", details={"criteria": [1, 2]})


def _fresh_job(answer: str = "score=61") -> tuple[Attempt, int, int]:
    attempt = AttemptFactory()
    submission_id, job_id = submit_via_service(attempt, answer)
    # Published by the fast path's thread (pending -> queued) before anything is compared.
    wait_for(lambda: EvaluationJob.objects.exclude(status=JobStatus.PENDING).filter(pk=job_id).exists(), timeout=10)
    return attempt, submission_id, job_id


def _snapshot(attempt_id: int, submission_id: int, job_id: int) -> dict:
    """Every row the two writes touch, with ids, tokens and times reduced to what must match."""
    job = EvaluationJob.objects.get(pk=job_id)
    attempt = Attempt.objects.get(pk=attempt_id)
    submission = Submission.objects.get(pk=submission_id)
    tries = list(JobTry.objects.filter(job_id=job_id).order_by("number"))
    result = Result.objects.filter(submission_id=submission_id).first()
    changes = StateChange.objects.filter(
        Q(entity="attempt", object_id=attempt_id) | Q(entity="submission", object_id=submission_id)
    ).order_by("id")
    return {
        "job": {
            "status": job.status,
            "tries": job.tries,
            "lease_held": job.lease_token is not None,
            "lease_is_the_try's": bool(tries) and job.lease_token in (None, tries[-1].lease_token),
            "heartbeat_at": job.heartbeat_at is not None,
            "next_retry_at": job.next_retry_at,
            "started_at": job.started_at is not None,
            "finished_at": job.finished_at is not None,
            "discard_reason": job.discard_reason,
            "last_error": job.last_error,
        },
        "tries": [
            (t.number, t.outcome, t.worker, t.error, t.finished_at is not None, t.duration_ms is not None)
            for t in tries
        ],
        "attempt": (attempt.status, attempt.version, attempt.latest_submission_id == submission_id,
                    attempt.scored_submission_id == submission_id if attempt.scored_submission_id else None),
        "submission": submission.status,
        "result": (result.score, result.max_score, result.feedback, result.details) if result else None,
        "changes": [
            (c.entity, c.from_status, c.to_status, re.sub(r"\d+", "N", c.actor), re.sub(r"\d+", "N", c.reason))
            for c in changes
        ],
    }  # fmt: skip


def test_the_sql_claim_and_result_write_what_the_general_paths_write():
    fast_attempt, fast_submission, fast_job = _fresh_job()
    slow_attempt, slow_submission, slow_job = _fresh_job()
    now = time.time()

    fast = jobs._claim_queued(job_id=fast_job, worker="w", now=jobs.timezone.now())
    slow = jobs._claim_any(job_id=slow_job, worker="w", now=jobs.timezone.now())
    assert fast is not None and slow is not None
    assert _snapshot(fast_attempt.pk, fast_submission, fast_job) == _snapshot(
        slow_attempt.pk, slow_submission, slow_job
    )
    for claim, job_id in ((fast, fast_job), (slow, slow_job)):
        assert claim.token == EvaluationJob.objects.get(pk=job_id).lease_token
        assert claim.try_id == JobTry.objects.get(job_id=job_id).pk
    same = ("kind", "tries", "max_tries", "worker", "practice_request_id")
    assert {f: getattr(fast, f) for f in same} == {f: getattr(slow, f) for f in same}
    assert (fast.attempt_id, fast.submission_id) == (fast_attempt.pk, fast_submission)
    for claim, attempt in ((fast, fast_attempt), (slow, slow_attempt)):
        for field in ("pk", "slug", "kind", "prompt", "evaluation_spec", "evaluator"):
            assert getattr(claim.submission.attempt.question, field) == getattr(attempt.question, field), field
    assert fast.submission.answer == slow.submission.answer == "score=61"
    assert fast.created_at.timestamp() == pytest.approx(now, abs=30)

    with transaction.atomic():
        assert jobs._record_result_running(fast, OUTCOME)
    assert jobs._record_result_any(slow, OUTCOME) == "succeeded"
    fast_rows = _snapshot(fast_attempt.pk, fast_submission, fast_job)
    assert fast_rows == _snapshot(slow_attempt.pk, slow_submission, slow_job)
    assert fast_rows["job"]["status"] == JobStatus.SUCCEEDED
    assert fast_rows["attempt"][0] == AttemptStatus.COMPLETED

    # Both leave the committed copy in the cache (not computed on a miss), at or above the floor.
    jobs._after_run(fast)
    jobs._after_run(slow)
    assert background.settle()
    copies = []
    for attempt, submission_id in ((fast_attempt, fast_submission), (slow_attempt, slow_submission)):
        cached, floor = cache._read(attempt.pk)
        assert cached is not None and cached["version"] == fast_rows["attempt"][1] >= floor
        assert cached["result"].pop("submission_id") == submission_id
        ignore = {"id", "latest_submission_id", "question_id", "created_at", "updated_at", "user_id"}
        copies.append({k: v for k, v in cached.items() if k not in ignore})
    assert copies[0] == copies[1]
    assert copies[0]["status"] == AttemptStatus.COMPLETED and copies[0]["result"]["score"] == 61.0


def _claimed_elsewhere(job_id: int) -> None:
    jobs._claim_any(job_id=job_id, worker="other", now=jobs.timezone.now())


def _superseded(job_id: int) -> None:
    job = EvaluationJob.objects.select_related("submission__attempt").get(pk=job_id)
    submit_via_service(job.submission.attempt, "a newer answer")


def _out_of_tries(job_id: int) -> None:
    EvaluationJob.objects.filter(pk=job_id).update(tries=3, max_tries=3)


def _retrying(job_id: int) -> None:
    claim = jobs._claim_any(job_id=job_id, worker="other", now=jobs.timezone.now())
    jobs.job_fail_transient(claim, "TimeoutError: the dependency was slow", retry_after=0)


def _finished(job_id: int) -> None:
    claim = jobs._claim_any(job_id=job_id, worker="other", now=jobs.timezone.now())
    jobs._record_result_any(claim, OUTCOME)


@pytest.mark.parametrize("case", [_claimed_elsewhere, _superseded, _out_of_tries, _retrying, _finished])
def test_the_sql_claim_leaves_every_other_case_unchanged(case):
    attempt, submission_id, job_id = _fresh_job()
    case(job_id)
    before = _snapshot(attempt.pk, submission_id, job_id)
    assert jobs._claim_queued(job_id=job_id, worker="w", now=jobs.timezone.now()) is None
    assert _snapshot(attempt.pk, submission_id, job_id) == before


def test_the_sql_result_write_refuses_a_lost_lease_and_a_superseded_submission():
    attempt, submission_id, job_id = _fresh_job()
    claim = jobs.job_claim(job_id=job_id, worker="w")
    # Lost lease: another run took the job over (the sweeper found it silent).
    EvaluationJob.objects.filter(pk=job_id).update(heartbeat_at=jobs.timezone.now() - jobs.timedelta(seconds=60))
    newer = jobs._claim_any(job_id=job_id, worker="other", now=jobs.timezone.now())
    assert newer is not None and newer.token != claim.token
    before = _snapshot(attempt.pk, submission_id, job_id)
    with transaction.atomic():
        assert not jobs._record_result_running(claim, OUTCOME)
    assert _snapshot(attempt.pk, submission_id, job_id) == before

    # Superseded: the attempt's latest submission is a newer one.
    submit_via_service(Attempt.objects.get(pk=attempt.pk), "a newer answer")
    before = _snapshot(attempt.pk, submission_id, job_id)
    with transaction.atomic():
        assert not jobs._record_result_running(newer, OUTCOME)
    assert _snapshot(attempt.pk, submission_id, job_id) == before
    assert jobs._record_result_any(newer, OUTCOME) == "discarded"


def test_a_worker_dying_after_the_sql_result_commit_leaves_no_older_copy_served():
    """The one-statement result write commits as it returns, so its cache floor must be up
    before it: a worker killed right after (its background steps, the copy and the lock release,
    lost) must not leave readers the processing copy."""
    from attempts.selectors.attempts import attempt_get_for_user

    attempt, _, job_id = _fresh_job()
    claim = jobs.job_claim(job_id=job_id, worker="w")
    assert background.settle()
    processing = attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)
    assert processing["status"] == AttemptStatus.PROCESSING
    assert cache._read(attempt.pk)[0]["version"] == processing["version"], "the read did not cache its copy"

    assert jobs._record_result_running(claim, OUTCOME)
    # The process dies here, before its after-commit steps (the copy, the lock release) run.

    got = attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)
    assert got["status"] == AttemptStatus.COMPLETED and got["version"] == processing["version"] + 1
    assert got["result"]["score"] == 61.0


def test_a_run_still_going_after_the_delay_stops_the_queued_copy_being_served():
    """The one-statement claim raises the cache floor to the processing version off the job's
    path, PROCESSING_FLOOR_DELAY after the claim, if the run is still going."""
    from attempts.selectors.attempts import attempt_get_for_user

    attempt, _, job_id = _fresh_job()
    queued = attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)
    assert queued["status"] == AttemptStatus.QUEUED
    assert cache._read(attempt.pk)[0]["version"] == queued["version"], "the read did not cache its copy"

    claim = jobs._claim_queued(job_id=job_id, worker="w", now=jobs.timezone.now())
    assert claim is not None
    time.sleep(jobs.PROCESSING_FLOOR_DELAY)
    assert background.settle()
    got = attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)
    assert got["status"] == AttemptStatus.PROCESSING and got["version"] == queued["version"] + 1


def test_a_run_done_within_the_delay_raises_only_its_result_floor(monkeypatch):
    raised: list[int] = []
    real = jobs.attempt_cache_raise_floor

    def counting(*, attempt_id: int, version: int) -> None:
        raised.append(version)
        real(attempt_id=attempt_id, version=version)

    monkeypatch.setattr(jobs, "attempt_cache_raise_floor", counting)
    attempt, _, job_id = _fresh_job()
    claim = jobs._claim_queued(job_id=job_id, worker="w", now=jobs.timezone.now())
    assert jobs._record_result_running(claim, OUTCOME)
    jobs._after_run(claim)
    assert background.settle()
    written = Attempt.objects.get(pk=attempt.pk).version
    assert raised == [written]
    assert cache._read(attempt.pk)[0]["version"] == written


@pytest.mark.parametrize("case", [_retrying, _claimed_elsewhere])
def test_the_sql_result_raises_the_floor_to_the_version_it_writes_after_a_general_claim(case, caplog):
    """A retry or a run taking over a silent one is claimed by the general path; its result
    still goes through the SQL write, whose floor is raised from the claim's copy of the
    attempt before the statement: that copy must carry the version the statement writes on."""
    attempt, submission_id, job_id = _fresh_job()
    case(job_id)
    EvaluationJob.objects.filter(pk=job_id).update(
        next_retry_at=None, heartbeat_at=jobs.timezone.now() - jobs.timedelta(seconds=60)
    )
    claim = jobs._claim_any(job_id=job_id, worker="w", now=jobs.timezone.now())
    assert claim is not None
    assert jobs._record_result_running(claim, OUTCOME)
    written = Attempt.objects.get(pk=attempt.pk).version
    assert cache._read(attempt.pk)[1] == written
    assert "unexpected attempt version" not in caplog.text


def test_the_moves_the_sql_makes_are_legal_in_the_transition_tables():
    sql = (Path(jobs.__file__).resolve().parent.parent / "sql" / "hot_path.sql").read_text()
    moves = set(re.findall(r"\('(attempt|submission)', [\w.]+, '(\w+)', '(\w+)'", sql))
    assert moves == {
        ("submission", SubmissionStatus.QUEUED, SubmissionStatus.PROCESSING),
        ("attempt", AttemptStatus.QUEUED, AttemptStatus.PROCESSING),
        ("submission", SubmissionStatus.PROCESSING, SubmissionStatus.COMPLETED),
        ("attempt", AttemptStatus.PROCESSING, AttemptStatus.COMPLETED),
    }
    for entity, from_status, to_status in moves:
        assert is_legal(Attempt if entity == "attempt" else Submission, from_status, to_status)


def _database_sessions() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


def _kill_other_connections() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def test_a_worker_keeps_its_connection_between_jobs_and_survives_losing_it(workers, assert_invariants):
    # One child, so that the job after each cut is run by the child whose connection was cut.
    worker = workers(concurrency=1)
    first = [_fresh_job()[2] for _ in range(3)]
    wait_for(lambda: EvaluationJob.objects.filter(pk__in=first, status=JobStatus.SUCCEEDED).count() == 3, timeout=30)
    sessions = _database_sessions()
    later = [_fresh_job()[2] for _ in range(30)]
    wait_for(lambda: EvaluationJob.objects.filter(pk__in=later, status=JobStatus.SUCCEEDED).count() == 30, timeout=60)
    # Celery's default is a new session per task (two here, before and after); the worker keeps one.
    assert _database_sessions() - sessions < 10

    # The database drops every connection between jobs. Right after a job, the next claim finds
    # it broken and reconnects once; after a pause, the health check on its first use finds it.
    # Either way the next job runs at once on a new one, instead of failing and waiting for the
    # sweeper.
    for pause, reconnects in ((0.0, 1), (1.5, 0)):
        time.sleep(pause)
        before = worker.output().count("reconnecting")
        assert _kill_other_connections() >= 1
        _, submission_id, job_id = _fresh_job("score=12")
        wait_for(lambda: Result.objects.filter(submission_id=submission_id).exists(), timeout=15)
        assert EvaluationJob.objects.get(pk=job_id).tries == 1
        assert worker.output().count("reconnecting") - before == reconnects, worker.output()[-2000:]
    assert_invariants()
