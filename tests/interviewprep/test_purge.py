"""The purge helper: bounded batches, each its own transaction, and a row another transaction
holds is skipped, never waited for."""

from __future__ import annotations

import dataclasses
import threading
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from attempts.models import StateChange
from interviewprep.purge import purge_in_batches

pytestmark = pytest.mark.django_db(transaction=True)


def _changes(count: int) -> list[int]:
    StateChange.objects.bulk_create(
        StateChange(entity="attempt", object_id=n, from_status="a", to_status="b", actor="test") for n in range(count)
    )
    return list(StateChange.objects.order_by("pk").values_list("pk", flat=True))


@pytest.fixture
def batches_of_three():
    with override_settings(CONFIG=dataclasses.replace(settings.CONFIG, purge_batch_size=3)):
        yield


def test_rows_go_in_batches_each_in_its_own_transaction(batches_of_three):
    ids = _changes(10)
    keep = ids[4]
    with CaptureQueriesContext(connection) as queries:
        assert purge_in_batches(StateChange.objects.exclude(pk=keep)) == 9
    assert list(StateChange.objects.values_list("pk", flat=True)) == [keep]
    sql = [q["sql"] for q in queries.captured_queries]
    deletes = [s for s in sql if s.startswith("DELETE")]
    assert len(deletes) == 3  # 9 rows, 3 at a time
    assert all(" LIMIT 3" in s for s in sql if s.startswith("SELECT") and "FOR UPDATE" in s)


def test_a_row_another_transaction_holds_is_skipped_not_waited_for(batches_of_three):
    ids = _changes(7)
    held, done = threading.Event(), threading.Event()

    def writer():
        try:
            with transaction.atomic():
                StateChange.objects.select_for_update().get(pk=ids[1])
                held.set()
                done.wait(30)
        finally:
            connection.close()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert held.wait(30)
        old = timezone.now() + timedelta(seconds=1)
        assert purge_in_batches(StateChange.objects.filter(created_at__lt=old)) == 6
    finally:
        done.set()
        thread.join(30)
    assert list(StateChange.objects.values_list("pk", flat=True)) == [ids[1]]


def test_rows_a_delete_function_keeps_are_not_read_again_and_the_run_ends(batches_of_three):
    ids = _changes(8)
    seen: list[int] = []

    def delete_even(batch: list[int]) -> int:
        seen.extend(batch)
        return StateChange.objects.filter(pk__in=[pk for pk in batch if pk % 2 == 0]).delete()[0]

    deleted = purge_in_batches(StateChange.objects.all(), delete=delete_even)
    assert seen == ids
    assert deleted == sum(pk % 2 == 0 for pk in ids)
