"""The Redis-backed circuit breaker against the real state Redis, across threads and processes."""

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

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def name() -> str:
    return f"test-{uuid.uuid4().hex}"


def trip(breaker: Breaker) -> None:
    for _ in range(breaker.failure_threshold):
        breaker.record_failure()


def test_opens_after_threshold_consecutive_failures(name: str) -> None:
    breaker = Breaker(name, failure_threshold=3, reset_after=30)

    breaker.record_failure()
    breaker.record_failure()
    assert breaker.state() == "closed"
    assert breaker.allow()

    breaker.record_failure()

    assert breaker.state() == "open"
    assert not breaker.allow()
    assert breaker.retry_after() in (29, 30)
    with pytest.raises(BreakerOpen) as caught:
        breaker.check()
    assert caught.value.retry_after in (29, 30)


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
    breaker = Breaker(name, failure_threshold=3, reset_after=30, failure_window=0.2)

    breaker.record_failure()
    breaker.record_failure()
    time.sleep(0.3)
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


def test_open_breaker_turns_half_open_after_the_cool_down(name: str) -> None:
    breaker = Breaker(name, failure_threshold=2, reset_after=0.3)
    trip(breaker)
    assert breaker.state() == "open"

    time.sleep(0.35)

    assert breaker.state() == "half_open"
    # Asking for the state must not take the probe.
    assert breaker.state() == "half_open"
    assert breaker.allow()


def test_failures_during_the_cool_down_do_not_extend_it(name: str) -> None:
    breaker = Breaker(name, failure_threshold=2, reset_after=0.4)
    trip(breaker)

    time.sleep(0.2)
    breaker.record_failure()
    breaker.record_failure()
    time.sleep(0.25)

    assert breaker.state() == "half_open"


def test_success_of_a_straggler_during_the_cool_down_does_not_close_it(name: str) -> None:
    breaker = Breaker(name, failure_threshold=2, reset_after=30)
    trip(breaker)

    breaker.record_success()

    assert breaker.state() == "open"


def test_half_open_lets_exactly_one_probe_through_racing_threads(name: str) -> None:
    breaker = Breaker(name, failure_threshold=2, reset_after=0.2, probe_timeout=30)
    racers = 16
    for _ in range(5):
        trip(breaker)
        time.sleep(0.25)
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
        # The probe is in flight: others are told to come back when its lease could end.
        assert 1 <= breaker.retry_after() <= 30
        breaker.record_success()
        assert breaker.state() == "closed"


def _race_for_probe(name: str, barrier: Any, results: Any) -> None:  # runs in a forked child process
    barrier.wait()
    results.put(Breaker(name, failure_threshold=2, reset_after=0.2, probe_timeout=30).allow())


def test_half_open_lets_exactly_one_probe_through_racing_processes(name: str) -> None:
    breaker = Breaker(name, failure_threshold=2, reset_after=0.2, probe_timeout=30)
    trip(breaker)
    time.sleep(0.25)
    context = multiprocessing.get_context("fork")
    racers = 8
    barrier = context.Barrier(racers)
    results = context.Queue()

    processes = [context.Process(target=_race_for_probe, args=(name, barrier, results)) for _ in range(racers)]
    for process in processes:
        process.start()
    admitted = [results.get(timeout=20) for _ in range(racers)]
    for process in processes:
        process.join(timeout=10)

    assert all(process.exitcode == 0 for process in processes)
    assert admitted.count(True) == 1


def test_probe_success_closes_the_breaker(name: str) -> None:
    breaker = Breaker(name, failure_threshold=2, reset_after=0.2)
    trip(breaker)
    time.sleep(0.25)
    assert breaker.allow()

    breaker.record_success()

    assert breaker.state() == "closed"
    assert breaker.retry_after() == 0
    assert all(breaker.allow() for _ in range(5))
    # Closed again means a fresh count: one failure does not reopen it.
    breaker.record_failure()
    assert breaker.state() == "closed"


def test_probe_failure_reopens_with_a_fresh_cool_down(name: str) -> None:
    breaker = Breaker(name, failure_threshold=2, reset_after=0.4)
    trip(breaker)
    time.sleep(0.45)
    assert breaker.allow()

    breaker.record_failure()

    assert breaker.state() == "open"
    assert not breaker.allow()
    time.sleep(0.2)
    assert breaker.state() == "open"
    time.sleep(0.25)
    assert breaker.state() == "half_open"


def test_a_probe_that_never_reports_back_lets_another_probe_through(name: str) -> None:
    breaker = Breaker(name, failure_threshold=2, reset_after=0.1, probe_timeout=0.3)
    trip(breaker)
    time.sleep(0.15)
    assert breaker.allow()
    assert not breaker.allow()

    time.sleep(0.35)

    assert breaker.allow()
    assert not breaker.allow()


def test_breakers_with_different_names_are_independent(name: str) -> None:
    tripped = Breaker(name, failure_threshold=1, reset_after=30)
    other = Breaker(f"{name}-other", failure_threshold=1, reset_after=30)

    tripped.record_failure()

    assert tripped.state() == "open"
    assert other.state() == "closed"
    assert other.allow()


_CHILD = """
import json, sys
import django
django.setup()
from evaluation.breaker import Breaker
breaker = Breaker(sys.argv[1], failure_threshold=3, reset_after=30)
if sys.argv[2] == "trip":
    for _ in range(3):
        breaker.record_failure()
print(json.dumps({"state": breaker.state(), "retry_after": breaker.retry_after(),
                  "allowed": breaker.allow()}))
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
    breaker = Breaker(name, failure_threshold=3, reset_after=30)
    trip(breaker)

    seen = _child(name, "read")

    assert seen == {"state": "open", "retry_after": seen["retry_after"], "allowed": False}
    assert 25 <= seen["retry_after"] <= 30


def test_a_breaker_opened_in_another_process_is_open_here(name: str) -> None:
    breaker = Breaker(name, failure_threshold=3, reset_after=30)
    assert breaker.state() == "closed"

    assert _child(name, "trip")["state"] == "open"

    assert breaker.state() == "open"
    assert not breaker.allow()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_redis_fails_open_without_raising(name: str, caplog: pytest.LogCaptureFixture) -> None:
    with override_settings(REDIS_STATE_URL=f"redis://127.0.0.1:{_closed_port()}/0"):
        breaker = Breaker(name, failure_threshold=2, reset_after=30)
        with caplog.at_level(logging.WARNING, logger="evaluation.breaker"):
            started = time.monotonic()
            for _ in range(5):
                breaker.record_failure()
            assert breaker.allow()
            breaker.check()
            breaker.record_success()
            assert breaker.state() == "closed"
            assert breaker.retry_after() == 0
            breaker.reset()
            elapsed = time.monotonic() - started

    assert elapsed < 5
    assert any("failing open" in record.getMessage() for record in caplog.records)


def test_state_survives_in_redis_not_in_the_instance(name: str, state_redis: redis.Redis) -> None:
    trip(Breaker(name, failure_threshold=2, reset_after=30))

    assert Breaker(name, failure_threshold=2, reset_after=30).state() == "open"
    assert state_redis.ttl(f"breaker:{name}") > 0  # abandoned breakers do not pile up
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
