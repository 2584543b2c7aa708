"""notify: a message after commit only, a waiter that misses nothing, one connection for many
waits, Redis failing quietly."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
import redis
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection, transaction
from django.test import override_settings

from interviewprep.notify import notify_on_commit, wait_for
from tests.notify_helpers import ended_waits, open_waits
from tests.processes import RedisServer, free_port
from tests.processes import wait_for as wait_until


class Waiter:
    """`wait_for` on a thread of its own, with a `ready` that records what it was asked."""

    def __init__(self, channel: str, *, timeout: float, enough: str | None = None, on_first_check=None):
        self.channel = channel
        self.asked: list[str | None] = []
        self.result: bool | None = None
        self.elapsed: float | None = None
        self.enough = enough
        self.on_first_check = on_first_check
        self.thread = threading.Thread(target=lambda: asyncio.run(self._run(timeout)))

    async def _ready(self, message: str | None) -> bool:
        self.asked.append(message)
        if message is None and self.on_first_check is not None:
            await sync_to_async(self.on_first_check)()
        return message is not None and (self.enough is None or message == self.enough)

    async def _run(self, timeout: float) -> None:
        began = time.monotonic()
        self.result = await wait_for(self.channel, self._ready, timeout=timeout)
        self.elapsed = time.monotonic() - began

    def start(self) -> Waiter:
        self.thread.start()
        return self

    def join(self) -> None:
        self.thread.join(timeout=120)
        assert not self.thread.is_alive(), "the waiter never returned"


def _channel() -> str:
    return f"test:{uuid.uuid4().hex[:8]}"


@pytest.mark.django_db(transaction=True)
def test_a_message_goes_out_after_commit_and_never_for_a_rollback():
    channel = _channel()
    waiter = Waiter(channel, timeout=30).start()
    wait_until(lambda: open_waits() == 1, message="the waiter to wait")

    with pytest.raises(ZeroDivisionError), transaction.atomic():
        notify_on_commit(channel, "rolled back")
        1 / 0
    with transaction.atomic():
        notify_on_commit(channel, "committed")
        assert open_waits() == 1 and waiter.thread.is_alive(), "published before the commit"
    waiter.join()

    assert waiter.result is True
    assert waiter.asked == [None, "committed"]
    assert waiter.elapsed < 20, "the waiter sat out its deadline"
    assert ended_waits("ready") == 1


@pytest.mark.django_db(transaction=True)
def test_a_change_right_after_the_first_check_is_not_missed():
    """The subscription is confirmed before `ready(None)`: what commits after that check is
    published to a subscriber already in place."""
    channel = _channel()

    def commit_a_change() -> None:
        try:
            notify_on_commit(channel, "7")  # outside a transaction: at once
        finally:
            connection.close()  # this thread's own

    waiter = Waiter(channel, timeout=30, on_first_check=commit_a_change)
    waiter.start().join()
    assert waiter.result is True
    assert waiter.asked == [None, "7"]
    assert waiter.elapsed < 20


@pytest.mark.django_db(transaction=True)
def test_messages_that_are_not_enough_keep_it_waiting_until_the_deadline():
    channel = _channel()
    waiter = Waiter(channel, timeout=1.0, enough="9").start()
    wait_until(lambda: open_waits() == 1, message="the waiter to wait")
    notify_on_commit(channel, "8")
    waiter.join()
    assert waiter.result is False
    assert waiter.asked == [None, "8"]
    assert waiter.elapsed >= 1.0


def test_ready_before_any_message_answers_at_once():
    async def already(message: str | None) -> bool:
        return True

    began = time.monotonic()
    assert asyncio.run(wait_for(_channel(), already, timeout=30)) is True
    assert time.monotonic() - began < 20


@pytest.fixture
def unreachable_redis() -> Iterator[None]:
    dead = {"default": {**settings.CACHES["default"], "LOCATION": f"redis://127.0.0.1:{free_port()}/0"}}
    with override_settings(CACHES=dead):
        yield


@pytest.mark.django_db(transaction=True)
def test_redis_unreachable_a_publish_logs_and_the_commit_stands(unreachable_redis, caplog):
    from django.contrib.auth.models import Group

    with caplog.at_level(logging.WARNING, logger="interviewprep.notify"), transaction.atomic():
        Group.objects.create(name="committed despite redis")
        notify_on_commit(_channel(), "1")
    assert Group.objects.filter(name="committed despite redis").exists()
    assert any("notify failed" in r.getMessage() for r in caplog.records)


def test_redis_unreachable_a_waiter_checks_once_then_answers_at_its_deadline(unreachable_redis, caplog):
    waiter = Waiter(_channel(), timeout=0.5)
    with caplog.at_level(logging.WARNING, logger="interviewprep.notify"):
        waiter.start().join()
    assert waiter.result is False
    assert waiter.asked == [None]
    assert waiter.elapsed >= 0.5
    assert any("lost its connection" in r.getMessage() for r in caplog.records)


@pytest.fixture
def paused_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    caches = {"default": {**settings.CACHES["default"], "LOCATION": server.url(0)}}
    with override_settings(CACHES=caches):
        try:
            yield server
        finally:
            server.stop()


def test_redis_paused_a_waiter_still_answers_at_its_deadline(paused_redis):
    paused_redis.pause()
    waiter = Waiter(_channel(), timeout=0.5).start()
    waiter.join()
    assert waiter.result is False
    assert waiter.asked == [None]


@pytest.mark.django_db(transaction=True)
def test_the_waits_of_a_process_share_one_redis_connection():
    """A wait costs an entry in the process's listener, not a connection and a SUBSCRIBE."""
    channels = [_channel() for _ in range(20)]
    results: list[bool] = []

    async def everyone() -> None:
        async def never(message: str | None) -> bool:
            return message == "go"

        results.extend(await asyncio.gather(*(wait_for(c, never, timeout=30) for c in channels)))

    thread = threading.Thread(target=lambda: asyncio.run(everyone()))
    thread.start()
    wait_until(lambda: open_waits() == 20, message="20 waits")
    listeners = [
        c for c in redis.Redis.from_url(settings.CACHES["default"]["LOCATION"]).client_list() if c["psub"] != "0"
    ]
    mine = [c for c in listeners if c["name"] == f"ip-notify-{os.getpid()}"]
    for channel in channels:
        notify_on_commit(channel, "go")
    thread.join(timeout=120)
    assert len(mine) == 1
    assert results == [True] * 20


@pytest.mark.django_db(transaction=True)
def test_a_broken_connection_sends_its_waits_to_their_deadline(caplog):
    server = RedisServer()
    try:
        with override_settings(CACHES={"default": {**settings.CACHES["default"], "LOCATION": server.url(0)}}):
            waiter = Waiter(_channel(), timeout=2.0)
            with caplog.at_level(logging.WARNING, logger="interviewprep.notify"):
                waiter.start()
                wait_until(lambda: open_waits() == 1, message="the waiter to wait")
                server.proc.kill()
                waiter.join()
    finally:
        server.stop()
    assert waiter.result is False
    assert waiter.elapsed >= 2.0
    assert ended_waits("deadline") == 1
    assert any("lost its connection" in r.getMessage() for r in caplog.records)
