"""A cold key read by 200 readers at once is computed once or twice, not 200 times."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from attempts.selectors.attempts import attempt_get_for_user, attempt_payload_from_db
from interviewprep import metrics
from tests.factories import AttemptFactory

READERS = 200


@pytest.mark.django_db(transaction=True)
def test_cold_key_is_computed_at_most_twice_and_every_reader_gets_the_payload():
    attempt = AttemptFactory()
    expected = {k: v for k, v in attempt_payload_from_db(attempt_id=attempt.pk).items() if k != "user_id"}
    before = metrics.counter_value("interviewprep_cache_computations_total")
    barrier = threading.Barrier(READERS)
    results: list[dict | BaseException] = [None] * READERS  # type: ignore[list-item]

    def read(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[i] = attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)
        except BaseException as exc:  # noqa: BLE001 - reported below
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=read, args=(i,)) for i in range(READERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    errors = [r for r in results if isinstance(r, BaseException)]
    assert not errors, errors[:3]
    assert all(r == expected for r in results)
    computations = metrics.counter_value("interviewprep_cache_computations_total") - before
    assert 1 <= computations <= 2, f"{computations} database computations for one cold key: {metrics.counters()}"
    misses = metrics.counter_value("interviewprep_cache_requests_total", {"outcome": "miss"})
    hits = metrics.counter_value("interviewprep_cache_requests_total", {"outcome": "hit"})
    assert misses + hits == READERS
