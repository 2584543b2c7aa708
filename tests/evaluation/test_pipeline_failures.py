"""Promises 2-6 against real worker processes that are really killed, paused and cut off."""

import dataclasses
import os
import signal
import time
import uuid

import pytest
import redis
from django.conf import settings
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from attempts.models import Attempt, Result, Submission
from evaluation.jobs import jobs_sweep
from evaluation.models import DeadLetter, DeadLetterReplay, EvaluationJob, JobStatus, JobTry, Outbox
from tests.factories import AttemptFactory
from tests.helpers import submit_via_service
from tests.processes import start_relay, start_worker, wait_for
from tests.rabbitmq import on_both_brokers


def create_submission(attempt, answer):
    return submit_via_service(attempt, answer)[0]


def job_of(submission_id):
    return EvaluationJob.objects.filter(kind="evaluate", subject_id=submission_id).order_by("id").last()


def wait_for_status(submission_id, status, timeout=40):
    return wait_for(
        lambda: job_of(submission_id).status == status,
        timeout=timeout,
        message=f"job of submission {submission_id} to be {status}",
    )


def wait_running_in_child(worker, submission_id):
    wait_for(lambda: job_of(submission_id).status == JobStatus.RUNNING, timeout=30, message="job running")
    return worker.children()


@on_both_brokers()
def test_worker_child_killed_mid_evaluation_finishes_exactly_once(broker, workers, relay, assert_invariants):
    worker = workers(concurrency=1, EVALUATOR_FAULTS="delay=1.5")
    attempt = AttemptFactory()
    submission_id = create_submission(attempt, "score=88")
    children = wait_running_in_child(worker, submission_id)
    assert len(children) == 1
    os.kill(children[0], signal.SIGKILL)
    wait_for_status(submission_id, JobStatus.SUCCEEDED)
    job = job_of(submission_id)
    assert Result.objects.filter(submission_id=submission_id).count() == 1
    assert job.tries == 2
    outcomes = list(JobTry.objects.filter(job=job).order_by("number").values_list("outcome", flat=True))
    assert outcomes == [JobTry.Outcome.ABANDONED, JobTry.Outcome.SUCCEEDED]
    assert Attempt.objects.get(pk=attempt.pk).status == "completed"
    assert_invariants()


def test_database_connections_cut_mid_evaluation_retry_the_job_instead_of_dead_lettering_it(
    workers, relay, assert_invariants
):
    worker = workers(concurrency=1, EVALUATOR_FAULTS="delay=1.5")
    attempt = AttemptFactory()
    submission_id = create_submission(attempt, "score=73")
    wait_running_in_child(worker, submission_id)
    # Every connection to the test database but this test's own: the worker's, its heartbeat's
    # and the relay's, as a database restart or a failover would.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        assert cursor.fetchone()[0] >= 1
    wait_for_status(submission_id, JobStatus.SUCCEEDED)
    assert not DeadLetter.objects.exists()
    assert Result.objects.filter(submission_id=submission_id).count() == 1
    assert Result.objects.get(submission_id=submission_id).score == 73
    assert Attempt.objects.get(pk=attempt.pk).status == "completed"
    assert_invariants()


@pytest.mark.django_db(transaction=True)
def test_whole_worker_killed_the_sweeper_finishes_the_job_exactly_once(tmp_path, relay, assert_invariants):
    # The relay is there as in production: the re-sent run may find the dead run's lock not yet
    # expired and be deferred, and deferred runs are published by the relay.
    first = start_worker(tmp_path, concurrency=1, EVALUATOR_FAULTS="delay=1.5")
    second = None
    try:
        attempt = AttemptFactory()
        submission_id = create_submission(attempt, "score=61")
        wait_running_in_child(first, submission_id)
        first.kill(signal.SIGKILL)  # the whole process group: main process and its child
        second = start_worker(tmp_path, concurrency=1)
        # Its message is stuck unacknowledged in the broker until the visibility timeout:
        # only the sweeper can bring the job back, once its heartbeat is stale.
        assert job_of(submission_id).status == JobStatus.RUNNING
        config = dataclasses.replace(settings.CONFIG, stale_job_after=1)
        with override_settings(CONFIG=config):
            wait_for(lambda: jobs_sweep() == 1, timeout=60, message="the dead run's job swept")
            assert jobs_sweep() == 0
        wait_for_status(submission_id, JobStatus.SUCCEEDED)
        assert Result.objects.filter(submission_id=submission_id).count() == 1
        assert Result.objects.get(submission_id=submission_id).score == 61
        assert_invariants()
    finally:
        first.stop()
        if second:
            second.stop()


@pytest.mark.rabbitmq
@pytest.mark.parametrize("broker", ["amqp"], indirect=True)
def test_whole_worker_killed_on_rabbitmq_the_broker_delivers_again_and_the_job_finishes_exactly_once(
    broker, workers, relay, assert_invariants
):
    # RabbitMQ gives a dead consumer's unacknowledged messages back when its connection closes
    # (no visibility timeout to wait for): the next worker takes the job over once its lease is
    # stale (or looks again then, if the message came back sooner), with no sweep (STALE_JOB_AFTER
    # is 40 s here).
    first = workers(concurrency=1, EVALUATOR_FAULTS="delay=1.5")
    submission_id = create_submission(AttemptFactory(), "score=62")
    wait_running_in_child(first, submission_id)
    first.kill(signal.SIGKILL)
    workers(concurrency=1)
    wait_for_status(submission_id, JobStatus.SUCCEEDED)
    job = job_of(submission_id)
    outcomes = list(JobTry.objects.filter(job=job).order_by("number").values_list("outcome", flat=True))
    assert outcomes == [JobTry.Outcome.ABANDONED, JobTry.Outcome.SUCCEEDED]
    assert Result.objects.get(submission_id=submission_id).score == 62
    assert_invariants()


def test_a_submit_committed_while_no_relay_listened_is_published_when_one_starts(workers, tmp_path, assert_invariants):
    attempt = AttemptFactory()
    # The commit's NOTIFY reaches nobody: the relay is down (crashed, or being deployed).
    submission_id, job_id = submit_via_service(attempt, "score=42")
    submission = Submission.objects.get(pk=submission_id)
    workers(concurrency=1, relay=False)
    assert Outbox.objects.get(job_id=job_id).published_at is None
    assert EvaluationJob.objects.get(pk=job_id).status == JobStatus.PENDING

    relay = start_relay(tmp_path)
    try:
        wait_for_status(submission.pk, JobStatus.SUCCEEDED)
    finally:
        relay.stop()
    assert Result.objects.get(submission=submission).score == 42
    assert_invariants()


@on_both_brokers("pausable_broker")
def test_broker_paused_submits_are_accepted_and_jobs_run_after_resume(
    pausable_broker, tmp_path, api_client_for, assert_invariants
):
    broker = pausable_broker
    worker = relay = None
    try:
        worker = start_worker(tmp_path, concurrency=1, CELERY_BROKER_URL=broker.url())
        relay = start_relay(tmp_path, CELERY_BROKER_URL=broker.url())
        attempt = AttemptFactory()
        client = api_client_for(attempt.user)
        broker.pause()
        accepted = []
        for i in range(5):
            response = client.post(
                f"/api/v1/attempts/{attempt.pk}/submissions/",
                {"answer": f"score={50 + i}"},
                format="json",
                HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex,
            )
            assert response.status_code == 202
            accepted.append(response.json())
        # The relay really met the paused broker, and nothing ran meanwhile.
        wait_for(
            lambda: Outbox.objects.filter(publish_attempts__gt=0).exists(),
            timeout=60,
            message="a publish attempt failed against the paused broker",
        )
        assert not Result.objects.exists()
        broker.resume()
        last = accepted[-1]["submission_id"]
        wait_for_status(last, JobStatus.SUCCEEDED, timeout=60)
        assert Result.objects.get(submission_id=last).score == 54
        assert Attempt.objects.get(pk=attempt.pk).latest_submission_id == last
        wait_for(
            lambda: not EvaluationJob.objects.exclude(status__in=[JobStatus.SUCCEEDED, JobStatus.DISCARDED]).exists(),
            timeout=30,
            message="every job final",
        )
        assert_invariants()
    finally:
        for process in (worker, relay):
            if process:
                process.stop()


def test_paused_run_that_lost_its_lease_cannot_write(workers, relay, assert_invariants):
    worker = workers(concurrency=2, EVALUATOR_FAULTS="delay=1.5")
    attempt = AttemptFactory()
    submission_id = create_submission(attempt, "score=77")
    wait_for(lambda: job_of(submission_id).status == JobStatus.RUNNING, timeout=30, message="job running")
    first_try = JobTry.objects.get(job=job_of(submission_id))
    paused = int(first_try.worker.rsplit(":", 1)[1])
    assert paused in worker.children()
    os.kill(paused, signal.SIGSTOP)
    try:
        # Heartbeat stops; the lock's TTL runs out; a sweep sends the job again and the other
        # child of the worker runs it with a new lease.
        config = dataclasses.replace(settings.CONFIG, stale_job_after=2)
        with override_settings(CONFIG=config):
            wait_for(lambda: jobs_sweep() == 1, timeout=30, message="the silent run's job swept")
            assert jobs_sweep() == 0
        wait_for_status(submission_id, JobStatus.SUCCEEDED)
    finally:
        os.kill(paused, signal.SIGCONT)
    # The resumed run finds its lease gone and records that instead of a result.
    wait_for(
        lambda: JobTry.objects.get(pk=first_try.pk).outcome == JobTry.Outcome.LOST_LEASE,
        timeout=15,
        message="the paused run to give up its write",
    )
    assert Result.objects.filter(submission_id=submission_id).count() == 1
    job = job_of(submission_id)
    assert job.status == JobStatus.SUCCEEDED
    tries = list(JobTry.objects.filter(job=job).order_by("number"))
    assert tries[0].outcome == JobTry.Outcome.LOST_LEASE
    assert tries[-1].outcome == JobTry.Outcome.SUCCEEDED
    assert tries[-1].lease_token != tries[0].lease_token
    assert_invariants()


@on_both_brokers()
def test_poison_job_is_bounded_and_replay_twice_makes_one_job(broker, workers, relay, admin_client, assert_invariants):
    workers(concurrency=1, EVALUATOR_FAULTS="crash_before_commit=1", JOB_MAX_TRIES="2")
    attempt = AttemptFactory()
    with override_settings(CONFIG=dataclasses.replace(settings.CONFIG, job_max_tries=2)):
        submission_id = create_submission(attempt, "score=10")
    wait_for_status(submission_id, JobStatus.DEAD, timeout=60)
    job = job_of(submission_id)
    assert job.tries == 2
    letter = DeadLetter.objects.get(job=job)
    assert "gave up after 2 tries" in letter.error
    assert letter.subject_id == submission_id
    assert letter.context == {
        "attempt_id": attempt.pk,
        "submission_id": submission_id,
        "question": attempt.question.slug,
    }
    assert letter.error_class == "WorkerLost"
    assert Submission.objects.get(pk=submission_id).status == "failed"
    assert Attempt.objects.get(pk=attempt.pk).status == "failed"
    assert not Result.objects.exists()
    assert_invariants()
    for _ in range(2):
        response = admin_client.post(
            "/admin/evaluation/deadletter/",
            {"action": "replay_dead_letters", "_selected_action": [letter.pk], "post": "yes"},
            follow=True,
        )
        assert response.status_code == 200
    assert EvaluationJob.objects.filter(kind="evaluate", subject_id=submission_id).count() == 2
    assert EvaluationJob.objects.filter(replay_of=letter).count() == 1
    assert list(
        DeadLetterReplay.objects.filter(dead_letter=letter).order_by("id").values_list("outcome", "reason")
    ) == [
        ("requeued", ""),
        ("skipped", "already replayed"),
    ]


@on_both_brokers()
def test_transient_failures_then_success_retry_with_growing_delays(broker, workers, relay, assert_invariants):
    # Four retries: celery#10111 lost a task retried more than twice through RabbitMQ's delayed
    # delivery; here a retry is a new message the relay publishes when due, on either broker.
    workers(concurrency=1)
    attempt = AttemptFactory()
    submission_id = create_submission(attempt, "score=95 transient=4")
    wait_for_status(submission_id, JobStatus.SUCCEEDED, timeout=60)
    job = job_of(submission_id)
    tries = list(JobTry.objects.filter(job=job).order_by("number"))
    assert [t.outcome for t in tries] == ["transient_error"] * 4 + ["succeeded"]
    # One message per try, each published when due: none waits in the broker with a countdown.
    assert Outbox.objects.filter(job=job).count() == 5
    gaps = [(b.started_at - a.finished_at).total_seconds() for a, b in zip(tries, tries[1:], strict=False)]
    base = settings.CONFIG.retry_base_delay
    for number, gap in enumerate(gaps, start=1):
        # full jitter in [ceiling/2, ceiling], ceiling = base * 2^(n-1); the relay adds its poll.
        assert gap >= base * 2 ** (number - 1) / 2 - 0.05, gaps
    assert Result.objects.filter(submission_id=submission_id).count() == 1
    assert_invariants()


def test_a_retry_waiting_longer_than_any_visibility_timeout_holds_no_message_and_runs_once(
    workers, relay, assert_invariants
):
    """celery#5508, kombu#337: the Redis broker delivers again a message unacknowledged past its
    visibility timeout, and a countdown held by a worker is one. Here a retry waits in the outbox:
    while it waits the broker holds no message of the job, acknowledged or not, so no visibility
    timeout, however short, can deliver it twice."""
    # Each retry waits 1.5 to 3 s (full jitter), far longer than the try itself.
    workers(concurrency=1, RETRY_BASE_DELAY="3")
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    try:
        submission_id = create_submission(AttemptFactory(), "score=66 transient=1")
        job = wait_for(
            lambda: (j := job_of(submission_id)).status == JobStatus.RETRYING and not broker.hlen("unacked") and j,
            timeout=30,
            interval=0.01,
            message="the first try's message acknowledged, its retry waiting",
        )
        retry = Outbox.objects.filter(job=job).order_by("id")[1:].get()
        # Sampled only before the retry is due: from then on the relay may publish it at any moment,
        # and the message is in the broker a moment before its row says so.
        held = []
        while timezone.now() < retry.available_at:
            held.append((broker.hlen("unacked"), broker.llen("evaluate")))
            time.sleep(0.05)  # a sample every 50 ms of the wait, not a wait for anything
        assert not Outbox.objects.filter(pk=retry.pk, published_at__lt=retry.available_at).exists()
        assert len(held) > 10, "the retry waited"
        assert set(held) == {(0, 0)}, held
    finally:
        broker.close()
    wait_for_status(submission_id, JobStatus.SUCCEEDED)
    assert Result.objects.filter(submission_id=submission_id).count() == 1
    assert job_of(submission_id).tries == 2
    assert_invariants()
