"""A cold key read by 200 readers at once is computed once or twice, not 200 times.

Single flight depends on readers waiting for the leader, so these tests give the wait room:
the lease (how long followers wait) is a minute instead of 2 s, and where the count of database
computations is asserted, the cache client waits up to 30 s for Redis instead of 250 ms. On a
busy machine a leader slower than 2 s, or a Redis reply later than 250 ms (a cache error, after
which a reader reads the database itself by design), would otherwise change the count.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test import override_settings

from attempts import cache
from attempts.models import Attempt
from attempts.selectors.attempts import attempt_get_for_user
from attempts.selectors.payloads import attempt_payload_from_db, attempt_shown
from tests.factories import AttemptFactory
from tests.metrics_helpers import counter_value
from tests.processes import ROOT, process_env, wait_for

READERS = 200
PATIENT_LEASE_MS = 60_000


def _computations() -> float:
    return counter_value("interviewprep_cache_computations_total")


def _outcome(outcome: str) -> float:
    return counter_value("interviewprep_cache_requests_total", {"outcome": outcome})


@pytest.fixture
def patient_cache(monkeypatch) -> Iterator[None]:
    monkeypatch.setattr(cache, "LEASE_MS", PATIENT_LEASE_MS)
    location = settings.CACHES["default"]["LOCATION"]
    joiner = "&" if "?" in location else "?"
    # redis-py takes options in the URL over its keyword arguments; cache_redis() makes its
    # client per URL, so this one is the cache's client for the test.
    patient = f"{location}{joiner}socket_timeout=30&socket_connect_timeout=30"
    with override_settings(CACHES={"default": {**settings.CACHES["default"], "LOCATION": patient}}):
        yield


def _read_at_once(attempt, readers: int) -> list[dict]:
    """`readers` threads released together by a barrier, each reading the attempt through the
    cache; fails on any error, else returns what each got."""
    barrier = threading.Barrier(readers)
    results: list[dict | BaseException] = [None] * readers  # type: ignore[list-item]

    def read(i: int) -> None:
        try:
            barrier.wait(timeout=60)
            results[i] = attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)
        except BaseException as exc:  # noqa: BLE001 - reported below
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=read, args=(i,)) for i in range(readers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a reader never returned"
    errors = [r for r in results if isinstance(r, BaseException)]
    assert not errors, errors[:3]
    return results  # type: ignore[return-value]


@contextlib.contextmanager
def attempts_table_locked() -> Iterator[threading.Event]:
    """The attempts table held ACCESS EXCLUSIVE (a migration, say) on a connection of its own
    until the yielded event is set: every read of an attempt from the database waits."""
    locked, release = threading.Event(), threading.Event()
    failed: list[BaseException] = []

    def hold() -> None:
        try:
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute(f"LOCK TABLE {Attempt._meta.db_table} IN ACCESS EXCLUSIVE MODE")
                locked.set()
                release.wait(timeout=120)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failed.append(exc)
        finally:
            locked.set()
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    assert locked.wait(timeout=60) and not failed, failed
    try:
        yield release
    finally:
        release.set()
        holder.join(timeout=60)


def _waiting_on_a_lock() -> list[int]:
    """Backends of the test database blocked on a lock (as readers of the locked table are)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        )
        return [pid for (pid,) in cursor.fetchall()]


@pytest.mark.django_db(transaction=True)
def test_cold_key_is_computed_at_most_twice_and_every_reader_gets_the_payload(patient_cache):
    attempt = AttemptFactory()
    (expected,) = attempt_shown([attempt_payload_from_db(attempt_id=attempt.pk)])
    before = _computations()
    outcomes_before = {outcome: _outcome(outcome) for outcome in ("hit", "miss", "error")}
    results = _read_at_once(attempt, READERS)
    assert all(r == expected for r in results)
    computations = _computations() - before
    outcomes = {outcome: _outcome(outcome) - outcomes_before[outcome] for outcome in outcomes_before}
    assert 1 <= computations <= 2, f"{computations} database computations for one cold key: {outcomes}"
    assert outcomes["miss"] + outcomes["hit"] == READERS, outcomes


@pytest.mark.django_db(transaction=True)
def test_a_slow_leader_is_waited_for_while_it_holds_the_lease_not_raced_by_every_reader(patient_cache):
    """The database is slow (a migration holds the table) when a key goes cold: the readers wait
    for the one leader still at work instead of all giving up after a fixed wait and piling onto
    the database, which is what single flight exists to prevent."""
    attempt = AttemptFactory()
    readers = 50
    before = _computations()
    misses_before = _outcome("miss")
    results: list[list[dict]] = []
    with attempts_table_locked() as release:
        reading = threading.Thread(target=lambda: results.append(_read_at_once(attempt, readers)))
        reading.start()
        # Every reader has missed, and one of them, the leader, is at the (locked) database.
        wait_for(
            lambda: _outcome("miss") - misses_before == readers and _computations() - before >= 1,
            timeout=60,
            message="every reader to miss and the leader to reach the database",
        )
        # The slow leader is the behaviour under test: it keeps every other reader waiting for
        # longer than a follower used to wait (1 s) before reading the database itself.
        time.sleep(1.2)
        release.set()
        reading.join(timeout=120)
    assert results, "the readers never returned"
    assert all(r["id"] == attempt.pk for r in results[0])
    computations = _computations() - before
    assert computations == 1, f"{computations} database computations for one slow cold key"


_DYING_READER = """
import sys
import django
django.setup()
from attempts.cache import attempt_cached
attempt_cached(attempt_id=int(sys.argv[1]))
"""


@pytest.mark.django_db(transaction=True)
def test_a_leader_that_died_holding_the_lease_delays_readers_only_until_it_lapses(monkeypatch):
    """A reader killed between taking the lease and storing its copy leaves the lease behind; the
    others wait it out (bounded by its TTL), then read the database themselves."""
    attempt = AttemptFactory()
    # A follower here may wait ten minutes for a leader that is still at work, so the reader
    # below returns only because the dead leader's lease (2 s, its own process's) lapsed.
    monkeypatch.setattr(cache, "LEASE_MS", 600_000)
    with attempts_table_locked() as release:
        leader = subprocess.Popen(
            [sys.executable, "-c", _DYING_READER, str(attempt.pk)],
            cwd=ROOT,
            env=process_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            # The key is cold, so the first reader takes the lease before it asks the database.
            wait_for(
                lambda: _waiting_on_a_lock() or leader.poll() is not None,
                timeout=60,
                message="the leader to reach the database",
            )
            assert leader.poll() is None, leader.stderr.read().decode(errors="replace")
        finally:
            leader.send_signal(signal.SIGKILL)
            leader.wait(timeout=30)
            leader.stderr.close()
        before = _computations()
        got: list[dict] = []

        def read() -> None:
            try:
                got.append(attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk))
            finally:
                connection.close()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        release.set()
        reader.join(timeout=120)  # a hang detector: the lapse comes within 2 s of the leader's start
    assert not reader.is_alive(), "the reader kept waiting after the dead leader's lease lapsed"
    assert got and got[0]["id"] == attempt.pk
    assert _computations() - before == 1
