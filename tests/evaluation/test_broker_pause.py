"""A broker paused long enough that a worker's acknowledgement fails: the worker consumes again."""

import pytest

from attempts.models import Result
from evaluation.models import EvaluationJob, JobStatus
from tests.factories import AttemptFactory
from tests.helpers import submit_via_service
from tests.processes import RedisServer, start_relay, start_worker, wait_for


def job_status(job_id):
    return EvaluationJob.objects.get(pk=job_id).status


@pytest.mark.django_db(transaction=True)
def test_ack_failed_during_a_broker_pause_the_same_worker_takes_the_next_job(tmp_path, assert_invariants):
    broker = RedisServer()
    worker = relay = None
    try:
        worker = start_worker(tmp_path, concurrency=1, CELERY_BROKER_URL=broker.url(), EVALUATOR_FAULTS="delay=2")
        relay = start_relay(tmp_path, CELERY_BROKER_URL=broker.url())
        attempt = AttemptFactory()
        _, first = submit_via_service(attempt, "score=41")
        wait_for(lambda: job_status(first) == JobStatus.RUNNING, timeout=30, message="first job running")
        broker.pause()
        # The job finishes while the broker is paused, so its acknowledgement fails.
        wait_for(lambda: job_status(first) == JobStatus.SUCCEEDED, timeout=30, message="first job done")
        wait_for(lambda: "Couldn't ack" in worker.output(), timeout=30, message="the worker's ack to fail")
        broker.resume()
        second_submission, second = submit_via_service(AttemptFactory(), "score=77")
        wait_for(lambda: job_status(second) == JobStatus.SUCCEEDED, timeout=60, message="the second job run")
        assert worker.proc.poll() is None, "the same worker ran it, without a restart"
        assert Result.objects.get(submission_id=second_submission).score == 77
        assert_invariants()
    finally:
        for process in (worker, relay):
            if process:
                process.stop()
        broker.stop()


@pytest.mark.django_db(transaction=True)
def test_broker_restarted_while_a_job_runs_the_worker_reconnects_instead_of_exiting(tmp_path, assert_invariants):
    broker = RedisServer()
    worker = relay = None
    try:
        worker = start_worker(tmp_path, concurrency=4, CELERY_BROKER_URL=broker.url(), EVALUATOR_FAULTS="delay=3")
        relay = start_relay(tmp_path, CELERY_BROKER_URL=broker.url())
        jobs = [submit_via_service(AttemptFactory(), f"score={30 + n}")[1] for n in range(4)]
        wait_for(
            lambda: all(job_status(job) == JobStatus.RUNNING for job in jobs), timeout=30, message="four jobs running"
        )
        # Killed, and back on the same port 1.5 s later, its queues gone, while the worker holds
        # unacknowledged messages.
        broker.restart(down_for=1.5)
        wait_for(
            lambda: "Connection to broker lost" in worker.output(), timeout=30, message="the worker to meet the loss"
        )
        second_submission, second = submit_via_service(AttemptFactory(), "score=71")
        wait_for(lambda: job_status(second) == JobStatus.SUCCEEDED, timeout=60, message="the second job run")
        assert worker.proc.poll() is None, f"the worker exited:\n{worker.output()[-3000:]}"
        assert "Unrecoverable error" not in worker.output()
        assert Result.objects.get(submission_id=second_submission).score == 71
    finally:
        for process in (worker, relay):
            if process:
                process.stop()
        broker.stop()
