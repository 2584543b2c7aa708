"""The Redis-backed circuit breaker against the real state Redis, across threads and processes.

Cool-downs and probe leases are driven by a clock of the test's own (`Breaker(clock=...)`), so
no test waits for them or depends on how fast the machine gets from one call to the next.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis
from django.test import override_settings

from evaluation.breaker import Breaker, BreakerOpen
from tests.helpers import Clock

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def name() -> str:
    return f"test-{uuid.uuid4().hex}"


@pytest.fixture
def clock() -> Clock:
    return Clock()


def trip(breaker: Breaker) -> None:
    for _ in range(breaker.failure_threshold):
        breaker.record_failure()


def test_opens_after_threshold_consecutive_failures(name: str, clock: Clock) -> None:
    breaker = Breaker(name, failure_threshold=3, reset_after=30, clock=clock)

    breaker.record_failure()
    breaker.record_failure()
    assert breaker.state() == "closed"
    assert breaker.allow()

    breaker.record_failure()

    assert breaker.state() == "open"
    assert not breaker.allow()
    assert breaker.retry_after() == 30
    with pytest.raises(BreakerOpen) as caught:
        breaker.check()
    assert caught.value.retry_after == 30
    clock.advance(10.5)
    assert breaker.retry_after() == 20  # whole seconds, rounded up
    with pytest.raises(BreakerOpen) as caught:
        breaker.check()
    assert caught.value.retry_after == 20


def test_success_resets_the_consecutive_count(name: str) -> None:
    breaker = Breaker(name, failure_threshold=3, reset_after=30)

    breaker.record_failure()
    breaker.record_failure()
    breaker.record_success()
    breaker.record_failure()
    breaker.record_failure()
    assert breaker.state() == "closed"

    breaker.record_failure()
    assert breaker.state() == "open"


def test_failures_further_apart_than_the_window_are_not_consecutive(name: str) -> None:
    # The window is the count's TTL in Redis, so this test waits it out for real; only the
    # failures recorded with the short window are meant to be forgotten.
    short = Breaker(name, failure_threshold=3, reset_after=30, failure_window=0.1)
    breaker = Breaker(name, failure_threshold=3, reset_after=30, failure_window=3600)

    short.record_failure()
    short.record_failure()
    time.sleep(0.3)  # the behaviour under test: a quiet spell longer than the window
    breaker.record_failure()
    breaker.record_failure()
    assert breaker.state() == "closed"

    breaker.record_failure()
    assert breaker.state() == "open"


def test_closed_breaker_allows_many_concurrent_calls(name: str) -> None:
    breaker = Breaker(name, failure_threshold=3, reset_after=30)

    assert all(breaker.allow() for _ in range(20))
    assert breaker.state() == "closed"
    assert breaker.retry_after() == 0


def test_open_breaker_turns_half_open_after_the_cool_down(name: str, clock: Clock) -> None:
    breaker = Breaker(name, failure_threshold=2, reset_after=30, clock=clock)
    trip(breaker)
    assert breaker.state() == "open"

    clock.advance(29.999)
    assert breaker.state() == "open"
    assert not breaker.allow()
    clock.advance(0.001)

    assert breaker.state() == "half_open"
    # Asking for the state must not take the probe.
    assert breaker.state() == "half_open"
    assert breaker.allow()
    assert not breaker.allow()  # the probe is taken


def test_failures_during_the_cool_down_do_not_extend_it(name: str, clock: Clock) -> None:
    breaker = Breaker(name, failure_threshold=2, reset_after=30, clock=clock)
    trip(breaker)

    clock.advance(20)
    breaker.record_failure()
    breaker.record_failure()
    assert breaker.state() == "open"
    clock.advance(10)

    assert breaker.state() == "half_open"


def test_success_of_a_straggler_during_the_cool_down_does_not_close_it(name: str, clock: Clock) -> None:
    breaker = Breaker(name, failure_threshold=2, reset_after=30, clock=clock)
    trip(breaker)

    clock.advance(29)
    breaker.record_success()

    assert breaker.state() == "open"


def test_half_open_lets_exactly_one_probe_through_racing_threads(name: str, clock: Clock) -> None:
    breaker = Breaker(name, failure_threshold=2, reset_after=30, probe_timeout=30, clock=clock)
    racers = 16
    for _ in range(5):
        trip(breaker)
        clock.advance(breaker.reset_after)
        assert breaker.state() == "half_open"
        barrier = threading.Barrier(racers)
        admitted: list[bool] = []

        def race(barrier: threading.Barrier = barrier, admitted: list[bool] = admitted) -> None:
            barrier.wait()
            admitted.append(breaker.allow())

        threads = [threading.Thread(target=race) for _ in range(racers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=10)

        assert len(admitted) == racers
        assert admitted.count(True) == 1
        # The probe is in flight: others are told to come back when its lease ends.
        assert breaker.retry_after() == 30
        breaker.record_success()
        assert breaker.state() == "closed"


def _race_for_probe(name: str, now: float, barrier: Any, results: Any) -> None:  # in a forked child process
    barrier.wait()
    breaker = Breaker(name, failure_threshold=2, reset_after=30, probe_timeout=30, clock=lambda: now)
    results.put(breaker.allow())


def test_half_open_lets_exactly_one_probe_through_racing_processes(name: str, clock: Clock) -> None:
    breaker = Breaker(name, failure_threshold=2, reset_after=30, probe_timeout=30, clock=clock)
    trip(breaker)
    clock.advance(breaker.reset_after)
    assert breaker.state() == "half_open"
    context = multiprocessing.get_context("fork")
    racers = 8
    barrier = context.Barrier(racers)
    results = context.Queue()

    processes = [
        context.Process(target=_race_for_probe, args=(name, clock.now, barrier, results)) for _ in range(racers)
    ]
    for process in processes:
        process.start()
    admitted = [results.get(timeout=20) for _ in range(racers)]
    for process in processes:
        process.join(timeout=10)

    assert all(process.exitcode == 0 for process in processes)
    assert admitted.count(True) == 1


def test_probe_success_closes_the_breaker(name: str, clock: Clock) -> None:
    breaker = Breaker(name, failure_threshold=2, reset_after=30, clock=clock)
    trip(breaker)
    clock.advance(breaker.reset_after)
    assert breaker.allow()

    breaker.record_success()

    assert breaker.state() == "closed"
    assert breaker.retry_after() == 0
    assert all(breaker.allow() for _ in range(5))
    # Closed again means a fresh count: one failure does not reopen it.
    breaker.record_failure()
    assert breaker.state() == "closed"


def test_probe_failure_reopens_with_a_fresh_cool_down(name: str, clock: Clock) -> None:
    breaker = Breaker(name, failure_threshold=2, reset_after=30, clock=clock)
    trip(breaker)
    clock.advance(breaker.reset_after)
    assert breaker.allow()
    clock.advance(5)  # the probe's call takes a while, then fails

    breaker.record_failure()

    assert breaker.state() == "open"
    assert not breaker.allow()
    assert breaker.retry_after() == 30
    clock.advance(29.999)
    assert breaker.state() == "open"
    clock.advance(0.001)
    assert breaker.state() == "half_open"


def test_a_probe_that_never_reports_back_lets_another_probe_through(name: str, clock: Clock) -> None:
    breaker = Breaker(name, failure_threshold=2, reset_after=30, probe_timeout=10, clock=clock)
    trip(breaker)
    clock.advance(breaker.reset_after)
    assert breaker.allow()
    assert not breaker.allow()
    clock.advance(9.999)
    assert not breaker.allow()

    clock.advance(0.001)

    assert breaker.allow()
    assert not breaker.allow()


def test_breakers_with_different_names_are_independent(name: str) -> None:
    tripped = Breaker(name, failure_threshold=1, reset_after=30)
    other = Breaker(f"{name}-other", failure_threshold=1, reset_after=30)

    tripped.record_failure()

    assert tripped.state() == "open"
    assert other.state() == "closed"
    assert other.allow()


# On Redis TIME, like every worker: the cool-down is an hour, far longer than any test takes.
COOL_DOWN = 3600

_CHILD = f"""
import json, sys
import django
django.setup()
from evaluation.breaker import Breaker
breaker = Breaker(sys.argv[1], failure_threshold=3, reset_after={COOL_DOWN})
if sys.argv[2] == "trip":
    for _ in range(3):
        breaker.record_failure()
print(json.dumps({{"state": breaker.state(), "retry_after": breaker.retry_after(),
                  "allowed": breaker.allow()}}))
"""


def _child(name: str, action: str) -> dict[str, Any]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    completed = subprocess.run(
        [sys.executable, "-c", _CHILD, name, action],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_another_process_sees_a_breaker_opened_here(name: str) -> None:
    breaker = Breaker(name, failure_threshold=3, reset_after=COOL_DOWN)
    trip(breaker)

    before = breaker.retry_after()
    seen = _child(name, "read")
    after = breaker.retry_after()

    assert seen == {"state": "open", "retry_after": seen["retry_after"], "allowed": False}
    # The same cool-down as seen here just before and just after, not a fresh one of its own.
    assert after <= seen["retry_after"] <= before <= COOL_DOWN


def test_a_breaker_opened_in_another_process_is_open_here(name: str) -> None:
    breaker = Breaker(name, failure_threshold=3, reset_after=COOL_DOWN)
    assert breaker.state() == "closed"

    assert _child(name, "trip")["state"] == "open"

    assert breaker.state() == "open"
    assert not breaker.allow()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_redis_fails_open_without_raising(name: str, caplog: pytest.LogCaptureFixture) -> None:
    seen: dict[str, object] = {}

    def every_call() -> None:
        breaker = Breaker(name, failure_threshold=2, reset_after=30)
        for _ in range(5):
            breaker.record_failure()
        seen["allowed"] = breaker.allow()
        breaker.check()
        breaker.record_success()
        seen["state"] = breaker.state()
        seen["retry_after"] = breaker.retry_after()
        breaker.reset()
        seen["done"] = True

    with override_settings(REDIS_STATE_URL=f"redis://127.0.0.1:{_closed_port()}/0"):
        with caplog.at_level(logging.WARNING, logger="evaluation.breaker"):
            # On its own thread only so that a call stuck on the dead Redis fails this test
            # instead of hanging it; the deadline is a hang detector, not a speed requirement.
            calls = threading.Thread(target=every_call, daemon=True)
            calls.start()
            calls.join(timeout=120)

    assert not calls.is_alive(), "a breaker call hung on the unreachable Redis"
    assert seen == {"allowed": True, "state": "closed", "retry_after": 0, "done": True}
    assert any("failing open" in record.getMessage() for record in caplog.records)


def test_state_survives_in_redis_not_in_the_instance(name: str, state_redis: redis.Redis) -> None:
    trip(Breaker(name, failure_threshold=2, reset_after=30))

    assert Breaker(name, failure_threshold=2, reset_after=30).state() == "open"
    assert state_redis.ttl(Breaker(name).key) > 0  # abandoned breakers do not pile up
    Breaker(name).reset()
    assert Breaker(name).state() == "closed"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"failure_threshold": 0},
        {"reset_after": 0},
        {"probe_timeout": -1},
        {"failure_window": 0},
    ],
)
def test_nonsense_settings_are_refused(name: str, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Breaker(name, **kwargs)
