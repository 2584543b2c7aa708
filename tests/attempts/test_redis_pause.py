"""A paused Redis (SIGSTOP) costs one socket timeout, not one per state change, and a cache
floor owed during the pause is paid by the process that owes it as soon as Redis is back."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator

import pytest
import redis
from django.conf import settings
from django.db import transaction
from django.test import override_settings

from attempts import cache
from attempts.models import Attempt, AttemptStatus
from attempts.selectors.attempts import attempt_get_for_user
from attempts.services.transitions import transition
from interviewprep.backoff import cache_backoff
from interviewprep.ticker import ticker
from tests.factories import AttemptFactory
from tests.processes import RedisServer, Worker, process_env, wait_for

# What a call to the paused server logs when its socket timeout ends it, by who made the call.
_TIMED_OUT = ("cache unavailable", "notify failed")


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    """A redis-server of this test's own as the cache's server, for this process and the ones
    it starts (they take REDIS_URL from the settings)."""
    server = RedisServer()
    caches = {"default": {**settings.CACHES["default"], "LOCATION": server.url(0)}}
    with override_settings(CACHES=caches):
        cache.attempt_cache_forget_process_state()
        try:
            yield server
        finally:
            server.resume()
            cache.attempt_cache_forget_process_state()
            server.stop()


def _queue(attempt_id: int) -> None:
    with transaction.atomic():
        attempt = Attempt.objects.select_for_update().get(pk=attempt_id)
        transition(attempt, AttemptStatus.QUEUED, actor="test:writer")


class _Heard:
    """The attempt channels' messages on a server, as a waiting web process hears them."""

    def __init__(self, server: RedisServer) -> None:
        self.client = redis.Redis.from_url(server.url(0), decode_responses=True)
        self.pubsub = self.client.pubsub()
        self.pubsub.psubscribe("ip:0:attempt:*")
        self.channels: list[str] = []

    def collect(self) -> list[str]:
        while (message := self.pubsub.get_message(timeout=0.05)) is not None:
            if message["type"] == "pmessage":
                self.channels.append(message["channel"])
        return self.channels

    def close(self) -> None:
        self.pubsub.close()
        self.client.close()


@pytest.mark.django_db(transaction=True)
def test_state_changes_during_a_pause_cost_one_timeout_together_and_publishes_resume(own_redis, caplog, monkeypatch):
    paused = [AttemptFactory() for _ in range(10)]
    heard = _Heard(own_redis)
    try:
        wait_for(lambda: heard.collect() == [] and heard.pubsub.subscribed, timeout=30, message="subscribed")
        # The back-off outlasts the ten changes however slow the machine is; its end is tested below.
        monkeypatch.setattr(cache_backoff(), "seconds", 30.0)
        own_redis.pause()
        try:
            with caplog.at_level(logging.WARNING):
                for attempt in paused:
                    _queue(attempt.pk)
            assert all(Attempt.objects.get(pk=a.pk).status == AttemptStatus.QUEUED for a in paused)
            timed_out = [r.getMessage() for r in caplog.records if r.getMessage().startswith(_TIMED_OUT)]
            # One call waited for the paused server (the first floor raise); every publish after
            # it, and every later floor raise, was skipped.
            assert len(timed_out) == 1, timed_out
        finally:
            own_redis.resume()
        monkeypatch.setattr(cache_backoff(), "seconds", 0.2)
        wait_for(lambda: cache.attempt_cache_floors_owed() == 0, timeout=30, message="the owed floors paid")
        # Publishes resume once the back-off is over: a state change is heard again. (A publish
        # skipped by the back-off is not sent later, so each poll changes a new attempt.)
        later: list[int] = []

        def a_change_is_heard() -> bool:
            later.append(AttemptFactory().pk)
            _queue(later[-1])
            return f"ip:0:attempt:{later[-1]}" in heard.collect()

        wait_for(a_change_is_heard, timeout=30, interval=0.1, message="a publish after the pause")
    finally:
        heard.close()
    assert not any(f"ip:0:attempt:{a.pk}" in heard.channels for a in paused)


@pytest.mark.django_db
def test_the_ticker_runs_only_while_a_floor_is_owed(own_redis):
    attempt = AttemptFactory()
    attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)
    wait_for(lambda: not ticker().running(), timeout=30, message="no ticker while nothing is owed")
    own_redis.pause()
    try:
        _queue(attempt.pk)
        assert cache.attempt_cache_floors_owed() == 1
        assert ticker().running()
    finally:
        own_redis.resume()
    wait_for(lambda: cache.attempt_cache_floors_owed() == 0, timeout=30, message="the owed floor paid")
    wait_for(lambda: not ticker().running(), timeout=30, message="the ticker's end once nothing is owed")
    assert not any(thread.name == "ticker" and thread.is_alive() for thread in threading.enumerate())


# Process A: during the pause, a cache read waits its timeout, then a state change commits while
# this process backs off, so its floor is owed and never sent. Then it idles: no call of its own.
_OWER = """
import sys, threading
import django
django.setup()
from django.db import transaction
from attempts import cache
from attempts.models import Attempt, AttemptStatus
from attempts.services.transitions import transition

attempt_id = int(sys.argv[1])
cache.attempt_cached(attempt_id=attempt_id)
with transaction.atomic():
    attempt = Attempt.objects.select_for_update().get(pk=attempt_id)
    transition(attempt, AttemptStatus.QUEUED, actor="test:process-a")
print(f"written, floors owed: {cache.attempt_cache_floors_owed()}", flush=True)
threading.Event().wait()
"""


@pytest.mark.django_db(transaction=True)
def test_a_floor_another_process_owes_is_paid_when_redis_returns_without_a_call_of_its_own(own_redis, tmp_path):
    """Process B (this test) holds the older copy in the cache; process A writes while Redis is
    paused and owes the floor. Redis comes back and A makes no call: B's plain read (no
    min_version) must still see A's write, not the older copy."""
    attempt = AttemptFactory()
    older = attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)
    assert older["status"] == AttemptStatus.DRAFT
    assert attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk) == older  # served from the cache
    own_redis.pause()
    owner = Worker.start(
        "process-a",
        [sys.executable, "-c", _OWER, str(attempt.pk)],
        env=process_env(),
        log=tmp_path / "process-a.log",
    )
    try:
        try:
            wait_for(
                lambda: "written, floors owed: 1" in owner.output(),
                timeout=60,
                message="process A's write while Redis is paused",
                process=owner,
            )
        finally:
            own_redis.resume()
        assert Attempt.objects.get(pk=attempt.pk).status == AttemptStatus.QUEUED
        # Only A can raise its floor; until it does, B's plain reads are served the older copy.
        wait_for(
            lambda: attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)["status"] == AttemptStatus.QUEUED,
            timeout=30,
            interval=0.05,
            message="A's write in a plain read of process B",
            process=owner,
        )
    finally:
        owner.stop()
    assert cache.attempt_cache_floors_owed() == 0, "B owed nothing: A paid"
