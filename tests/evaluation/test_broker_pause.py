"""A broker paused long enough that a worker's acknowledgement fails: the worker consumes again."""

import pytest

from attempts.models import Result
from evaluation.models import EvaluationJob, JobStatus
from tests.factories import AttemptFactory
from tests.helpers import submit_via_service
from tests.processes import RedisServer, start_relay, start_worker, wait_for


def job_status(job_id):
    return EvaluationJob.objects.get(pk=job_id).status


@pytest.fixture
def own_broker(transactional_db, tmp_path):
    """A broker of the test's own, to pause or restart, and `start(**worker)`: a worker and the
    relay on it; all stopped afterwards."""
    broker = RedisServer()
    started = []

    def start(**worker_options):
        started.append(start_relay(tmp_path, CELERY_BROKER_URL=broker.url()))
        worker = start_worker(tmp_path, CELERY_BROKER_URL=broker.url(), **worker_options)
        started.append(worker)
        return worker

    yield broker, start
    for process in started:
        process.stop()
    broker.stop()


def test_ack_failed_during_a_broker_pause_the_same_worker_takes_the_next_job(own_broker, assert_invariants):
    broker, start = own_broker
    worker = start(concurrency=1, EVALUATOR_FAULTS="delay=2")
    _, first = submit_via_service(AttemptFactory(), "score=41")
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


# On Redis only: a restart is a pause's kind of failure, which RabbitMQ's run of
# test_broker_paused_submits_are_accepted_and_jobs_run_after_resume covers within the suite's budget.
def test_broker_restarted_while_jobs_run_the_worker_reconnects_instead_of_exiting(pausable_broker, tmp_path):
    broker = pausable_broker
    relay = start_relay(tmp_path, CELERY_BROKER_URL=broker.url())
    worker = start_worker(tmp_path, concurrency=4, CELERY_BROKER_URL=broker.url(), EVALUATOR_FAULTS="delay=3")
    try:
        jobs = [submit_via_service(AttemptFactory(), f"score={30 + n}")[1] for n in range(4)]
        wait_for(
            lambda: all(job_status(job) == JobStatus.RUNNING for job in jobs), timeout=30, message="four jobs running"
        )
        # Gone, and back on the same port 1.5 s later, while the worker holds unacknowledged
        # messages: a Redis server killed (its queues gone), or every RabbitMQ connection reset.
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
        worker.stop()
        relay.stop()
