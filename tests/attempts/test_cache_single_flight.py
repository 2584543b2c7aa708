"""A cold key read by 200 readers at once is computed once or twice, not 200 times."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from attempts import cache
from attempts.models import Attempt
from attempts.selectors.attempts import attempt_get_for_user
from attempts.selectors.payloads import attempt_payload_from_db
from interviewprep.redis_state import cache_redis
from tests.factories import AttemptFactory
from tests.metrics_helpers import counter_value

READERS = 200


def _read_at_once(attempt, readers: int) -> list[dict]:
    """`readers` threads released together by a barrier, each reading the attempt through the
    cache; fails on any error, else returns what each got."""
    barrier = threading.Barrier(readers)
    results: list[dict | BaseException] = [None] * readers  # type: ignore[list-item]

    def read(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[i] = attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)
        except BaseException as exc:  # noqa: BLE001 - reported below
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=read, args=(i,)) for i in range(readers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    errors = [r for r in results if isinstance(r, BaseException)]
    assert not errors, errors[:3]
    return results  # type: ignore[return-value]


@pytest.mark.django_db(transaction=True)
def test_cold_key_is_computed_at_most_twice_and_every_reader_gets_the_payload():
    attempt = AttemptFactory()
    expected = {k: v for k, v in attempt_payload_from_db(attempt_id=attempt.pk).items() if k != "user_id"}
    before = counter_value("interviewprep_cache_computations_total")
    results = _read_at_once(attempt, READERS)
    assert all(r == expected for r in results)
    computations = counter_value("interviewprep_cache_computations_total") - before
    misses = counter_value("interviewprep_cache_requests_total", {"outcome": "miss"})
    hits = counter_value("interviewprep_cache_requests_total", {"outcome": "hit"})
    assert 1 <= computations <= 2, f"{computations} database computations for one cold key: {misses=} {hits=}"
    assert misses + hits == READERS


@pytest.mark.django_db(transaction=True)
def test_a_slow_leader_is_waited_for_while_it_holds_the_lease_not_raced_by_every_reader():
    """The database is slow (a migration holds the table) when a key goes cold: the readers wait
    for the one leader still at work instead of all giving up after a fixed wait and piling onto
    the database, which is what single flight exists to prevent."""
    attempt = AttemptFactory()
    readers = 50
    hold_seconds = 1.2  # longer than a follower used to wait, shorter than the leader's lease
    locked = threading.Event()

    def hold_table() -> None:
        try:
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute(f"LOCK TABLE {Attempt._meta.db_table} IN ACCESS EXCLUSIVE MODE")
                locked.set()
                time.sleep(hold_seconds)
        finally:
            locked.set()
            connection.close()

    holder = threading.Thread(target=hold_table)
    holder.start()
    assert locked.wait(timeout=30)
    before = counter_value("interviewprep_cache_computations_total")
    results = _read_at_once(attempt, readers)
    holder.join(timeout=60)
    assert all(r["id"] == attempt.pk for r in results)
    computations = counter_value("interviewprep_cache_computations_total") - before
    assert computations == 1, f"{computations} database computations for one slow cold key"


@pytest.mark.django_db(transaction=True)
def test_a_leader_that_died_holding_the_lease_delays_readers_only_until_it_lapses():
    """A reader killed between taking the lease and storing its copy leaves the lease behind; the
    others wait it out (bounded by its TTL), then read the database themselves."""
    attempt = AttemptFactory()
    cache_redis().set(f"{cache._key(attempt.pk)}:lease", "a-dead-reader", px=cache.LEASE_MS)
    before = counter_value("interviewprep_cache_computations_total")
    payload = attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)
    assert payload["id"] == attempt.pk
    assert counter_value("interviewprep_cache_computations_total") - before == 1
    assert cache_redis().get(f"{cache._key(attempt.pk)}:lease") in (None, b"a-dead-reader")
