"""Promise 6, the sweeper's rule for queued jobs: a job that only waits in a long backlog is
not sent again; a queued job whose message the broker lost is, once. Real messages in the real
broker (the tests' Redis), published by the outbox as in production; no worker consumes them."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.test import override_settings
from django.utils import timezone
from kombu import Connection

from evaluation.jobs import jobs_sweep
from evaluation.jobs import queue_depths as depths_module
from evaluation.jobs.outbox import outbox_publish
from evaluation.jobs.queue_depths import queue_depths
from evaluation.models import EvaluationJob, JobStatus, Outbox
from tests.factories import AttemptFactory
from tests.helpers import submit_via_service
from tests.processes import start_relay, wait_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def redis_broker():
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    yield client
    client.close()


@pytest.fixture
def stale_after_a_minute():
    with override_settings(CONFIG=dataclasses.replace(settings.CONFIG, stale_job_after=60)):
        yield


def _backlog(size: int) -> list[int]:
    """`size` evaluation jobs queued, their messages in the broker, all waiting for an hour."""
    jobs = [submit_via_service(AttemptFactory(), "score=1")[1] for _ in range(size)]
    while outbox_publish():
        pass
    assert queue_depths()["evaluate"] == size
    assert set(EvaluationJob.objects.filter(pk__in=jobs).values_list("status", flat=True)) == {JobStatus.QUEUED}
    _wait_an_hour(jobs)
    return jobs


def _wait_an_hour(jobs: list[int]) -> None:
    hour_ago = timezone.now() - timedelta(hours=1)
    EvaluationJob.objects.filter(pk__in=jobs).update(updated_at=hour_ago)
    Outbox.objects.filter(job_id__in=jobs).update(published_at=hour_ago, created_at=hour_ago)


def _sends(job_id: int) -> int:
    return Outbox.objects.filter(job_id=job_id).count()


def test_a_long_backlog_with_its_messages_in_the_broker_is_not_sent_again(stale_after_a_minute):
    jobs = _backlog(40)
    assert jobs_sweep() == 0
    assert [_sends(job) for job in jobs] == [1] * 40
    assert queue_depths()["evaluate"] == 40


def test_a_queued_job_whose_message_was_lost_is_sent_again_once(redis_broker, stale_after_a_minute):
    (job,) = _backlog(1)
    redis_broker.delete("evaluate")  # the broker lost it (a flush, a failover without its data)
    assert queue_depths()["evaluate"] == 0

    assert jobs_sweep() == 1
    assert _sends(job) == 2
    while outbox_publish():
        pass
    assert queue_depths()["evaluate"] == 1
    _wait_an_hour([job])
    assert jobs_sweep() == 0  # its new message is there: a second pass sends nothing
    assert _sends(job) == 2


def test_in_a_backlog_only_as_many_as_were_lost_are_sent_again_oldest_first(redis_broker, stale_after_a_minute):
    jobs = _backlog(30)
    redis_broker.rpop("evaluate")  # kombu pushes on the left and takes from the right: the oldest message
    assert queue_depths()["evaluate"] == 29

    assert jobs_sweep() == 1
    assert [_sends(job) for job in jobs] == [2] + [1] * 29
    assert jobs_sweep() == 0


def test_with_rabbitmq_a_queue_no_worker_declared_holds_nothing_and_the_others_are_still_read(monkeypatch):
    """Else one undeclared queue would make every depth unknown, and the sweeper would never
    find a lost message on any queue."""
    url = "amqp://guest:guest@127.0.0.1:5672//"
    declared, missing = f"ip-test-declared-{uuid.uuid4().hex}", f"ip-test-missing-{uuid.uuid4().hex}"
    with Connection(url, connect_timeout=2) as conn:
        channel = conn.channel()
        channel.queue_declare(queue=declared, auto_delete=False)
        channel.basic_publish(channel.prepare_message(b"m"), exchange="", routing_key=declared)
        try:
            monkeypatch.setattr(depths_module, "broker_queues", lambda: [missing, declared])
            config = dataclasses.replace(settings.CONFIG, broker_url=url)
            with override_settings(CONFIG=config, CELERY_BROKER_URL=url):
                # RabbitMQ counts a published message a moment later.
                wait_for(lambda: queue_depths().get(declared) == 1, timeout=10, message="the message counted")
                assert queue_depths() == {missing: 0, declared: 1}
        finally:
            channel.queue_delete(queue=declared)


@pytest.mark.rabbitmq
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("broker", ["amqp"], indirect=True)
def test_with_rabbitmq_a_queued_job_whose_message_was_lost_is_sent_again_once(broker, tmp_path, stale_after_a_minute):
    """The sweeper's count of lost messages read from RabbitMQ's queues, which the relay declared
    and published to; no worker consumes. The relay sweeps once as it starts, then never here."""
    relay = start_relay(tmp_path, SWEEP_INTERVAL="3600")
    try:
        jobs = [submit_via_service(AttemptFactory(), "score=1")[1] for _ in range(3)]
        wait_for(
            lambda: not Outbox.objects.filter(published_at__isnull=True).exists(),
            timeout=30,
            message="the rows published",
        )
        wait_for(lambda: queue_depths()["evaluate"] == 3, timeout=10, message="RabbitMQ to count the messages")
        _wait_an_hour(jobs)
        assert jobs_sweep() == 0  # a backlog with its messages is only waiting
        with Connection(broker.url, connect_timeout=2) as conn:
            assert conn.default_channel.basic_get("evaluate", no_ack=True) is not None  # the oldest message lost
        wait_for(lambda: queue_depths()["evaluate"] == 2, timeout=10, message="the loss counted")

        assert jobs_sweep() == 1
        assert [_sends(job) for job in jobs] == [2, 1, 1]
        wait_for(lambda: queue_depths()["evaluate"] == 3, timeout=30, message="the re-send published")
        _wait_an_hour(jobs)
        assert jobs_sweep() == 0
    finally:
        relay.stop()
