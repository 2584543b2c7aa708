"""The cache under failure: a writer dying before its refresh, lapsed floors, a paused Redis."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test import override_settings

from attempts import cache
from attempts.models import Attempt, AttemptStatus
from attempts.selectors.attempts import attempt_get_for_user
from attempts.selectors.payloads import attempt_payload_from_db, attempt_shown
from attempts.services.transitions import transition
from tests.factories import AttemptFactory
from tests.metrics_helpers import counter_value
from tests.processes import RedisServer, free_port, wait_for


def _cached_version(attempt_id: int) -> int | None:
    cached = cache.attempt_cache_diff(attempt_id=attempt_id)["cache"]
    return cached["version"] if cached is not None else None


def _floor(attempt_id: int) -> int:
    floor = cache.attempt_cache_diff(attempt_id=attempt_id)["floor"]
    return -1 if floor is None else floor


def _commit_transition(attempt_id: int, to: str) -> int:
    """A writer that commits and dies before its after-commit cache refresh."""
    with transaction.atomic():
        attempt = Attempt.objects.select_for_update().get(pk=attempt_id)
        transition(attempt, to, actor="test:crashing-writer")
    return attempt.version


class _Rollback(Exception):
    pass


def _rolled_back_transition(attempt_id: int, to: str) -> int:
    with pytest.raises(_Rollback), transaction.atomic():
        attempt = Attempt.objects.select_for_update().get(pk=attempt_id)
        transition(attempt, to, actor="test:rolled-back-writer")
        raise _Rollback
    return attempt.version


@pytest.mark.django_db
def test_crash_between_result_commit_and_cache_write_the_next_read_is_right():
    attempt = AttemptFactory()
    old = attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)
    assert _cached_version(attempt.pk) == old["version"]
    new_version = _commit_transition(attempt.pk, AttemptStatus.QUEUED)

    got = attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)

    assert got["version"] == new_version > old["version"]
    assert got["status"] == AttemptStatus.QUEUED
    assert _cached_version(attempt.pk) == new_version, "the read did not refresh the cache"
    assert cache.attempt_cache_diff(attempt_id=attempt.pk)["consistent"]


@pytest.mark.django_db
def test_lapsed_floor_of_a_committed_writer_still_forces_a_recompute(monkeypatch):
    """Nobody read while the floor was in force: the older copy must still not come back."""
    monkeypatch.setattr(cache, "FLOOR_SECONDS", 0.05)
    attempt = AttemptFactory()
    attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)
    new_version = _commit_transition(attempt.pk, AttemptStatus.QUEUED)
    time.sleep(0.1)  # the floor's lapse is the behaviour under test, not a wait for anything
    assert attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)["version"] == new_version
    # and the copy now in the cache is served again
    before = counter_value("interviewprep_cache_requests_total", {"outcome": "hit"})
    assert attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)["version"] == new_version
    assert counter_value("interviewprep_cache_requests_total", {"outcome": "hit"}) == before + 1


@pytest.mark.django_db(transaction=True)
def test_writer_reusing_a_rolled_back_version_after_its_floor_lapsed_is_protected(monkeypatch):
    monkeypatch.setattr(cache, "FLOOR_SECONDS", 0.05)
    attempt = AttemptFactory()
    attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)
    rolled_back = _rolled_back_transition(attempt.pk, AttemptStatus.QUEUED)
    time.sleep(0.1)  # the floor's lapse is the behaviour under test, not a wait for anything
    monkeypatch.setattr(cache, "FLOOR_SECONDS", 120)
    with transaction.atomic():
        # The next writer gets the same version number: its floor must be in force, although a
        # reader (on its own connection) refills the cache before this commits.
        locked = Attempt.objects.select_for_update().get(pk=attempt.pk)
        transition(locked, AttemptStatus.QUEUED, actor="test:writer")
        reader = threading.Thread(target=_read_in_own_connection, args=(attempt,))
        reader.start()
        reader.join(timeout=120)
        assert not reader.is_alive(), "the reader did not refill the cache before the commit"
    assert locked.version == rolled_back
    assert attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)["version"] == locked.version


def _read_in_own_connection(attempt: Attempt) -> None:
    try:
        attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)
    finally:
        connection.close()


@pytest.mark.django_db
def test_rolled_back_writer_costs_misses_only_until_its_floor_lapses(monkeypatch):
    monkeypatch.setattr(cache, "FLOOR_SECONDS", 0.2)
    attempt = AttemptFactory()
    version = attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)["version"]
    _rolled_back_transition(attempt.pk, AttemptStatus.QUEUED)
    stale = {"outcome": "stale"}
    before = counter_value("interviewprep_cache_requests_total", stale)
    assert attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)["version"] == version
    assert counter_value("interviewprep_cache_requests_total", stale) == before + 1
    time.sleep(0.3)  # the floor's lapse is the behaviour under test
    attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)  # read after the lapse: clears it
    hits = counter_value("interviewprep_cache_requests_total", {"outcome": "hit"})
    for _ in range(5):
        assert attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)["version"] == version
    assert counter_value("interviewprep_cache_requests_total", {"outcome": "hit"}) == hits + 5


@pytest.fixture
def paused_redis_cache() -> Iterator[RedisServer]:
    server = RedisServer()
    caches = {"default": {**settings.CACHES["default"], "LOCATION": server.url(0)}}
    # cache_redis() keys its clients by URL, so the override alone points the cache at it.
    with override_settings(CACHES=caches):
        cache.attempt_cache_forget_process_state()
        try:
            yield server
        finally:
            cache.attempt_cache_forget_process_state()
            server.stop()


@pytest.mark.django_db
def test_paused_redis_makes_reads_slower_not_wrong_and_the_cache_comes_back(paused_redis_cache):
    server = paused_redis_cache
    attempt = AttemptFactory()
    (expected,) = attempt_shown([attempt_payload_from_db(attempt_id=attempt.pk)])
    assert attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk) == expected  # warms the cache
    errors_before = counter_value("interviewprep_cache_requests_total", {"outcome": "error"})

    server.pause()
    try:
        reads = [0]

        def read_right() -> bool:
            assert attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk) == expected
            reads[0] += 1
            return counter_value("interviewprep_cache_requests_total", {"outcome": "error"}) - errors_before >= 2

        # Every read is right; the cache is tried again once a backoff is over.
        wait_for(read_right, timeout=120, interval=0.05, message="a second try of the paused cache")
        errors = counter_value("interviewprep_cache_requests_total", {"outcome": "error"}) - errors_before
        assert errors < reads[0], "every read waited for the paused Redis: no backoff"
    finally:
        server.resume()

    def hit() -> bool:
        hits = counter_value("interviewprep_cache_requests_total", {"outcome": "hit"})
        assert attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk) == expected
        return counter_value("interviewprep_cache_requests_total", {"outcome": "hit"}) == hits + 1

    wait_for(hit, timeout=120, interval=0.05, message="the cache to serve again")
    hits_before = counter_value("interviewprep_cache_requests_total", {"outcome": "hit"})
    for _ in range(10):
        assert attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk) == expected
    assert counter_value("interviewprep_cache_requests_total", {"outcome": "hit"}) - hits_before == 10


@pytest.mark.django_db
def test_min_version_holds_even_when_the_writer_could_not_raise_the_floor(monkeypatch):
    """A writer whose floor never arrived (Redis unreachable, and its process gone before the
    owed floor was raised): a reader without min_version may get the older copy (lag), one that
    has seen the new version never does."""
    attempt = AttemptFactory()
    old = attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)["version"]
    monkeypatch.setattr(cache, "attempt_cache_raise_floor", lambda **kwargs: None)
    new = _commit_transition(attempt.pk, AttemptStatus.QUEUED)
    assert attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)["version"] == old
    assert attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk, min_version=new)["version"] == new
    # and the reader's recompute put the new copy in the cache for everyone
    assert attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)["version"] == new


@pytest.mark.django_db
def test_a_floor_the_writer_could_not_raise_is_raised_once_redis_answers():
    """A writer that could not reach Redis commits anyway; the floor it owes is raised at the
    process's next cache call once Redis answers again, so readers without min_version stop
    getting the older copy then, not when it expires an hour later."""
    attempt = AttemptFactory()
    old = attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)["version"]
    assert _cached_version(attempt.pk) == old

    # Nothing listens there: for this writer, Redis is unreachable (refused, not merely slow).
    unreachable = {"default": {**settings.CACHES["default"], "LOCATION": f"redis://127.0.0.1:{free_port()}/0"}}
    with override_settings(CACHES=unreachable):
        new = _commit_transition(attempt.pk, AttemptStatus.QUEUED)
        assert cache.attempt_cache_floors_owed() == 1
        attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)  # still unreachable: still owed
        assert cache.attempt_cache_floors_owed() == 1
    assert new > old
    stamp = Attempt.objects.get(pk=attempt.pk).stamp
    assert _floor(attempt.pk) < stamp, "the floor went up while Redis was unreachable"

    # Once the backoff after the failure is over, this process's next cache call pays the debt.
    wait_for(
        lambda: (
            attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk) and cache.attempt_cache_floors_owed() == 0
        ),
        timeout=10,
        message="the owed floor was raised",
    )
    assert _floor(attempt.pk) >= stamp
    assert attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)["version"] == new
    assert _cached_version(attempt.pk) == new, "the read did not put the new copy in the cache"
