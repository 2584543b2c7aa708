"""Writes: several writes as one statement, with the effect each would have had on its own."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from attempts.models import Attempt, Result, StateChange, Submission
from interviewprep.writes import Writes, writes_into
from tests.factories import AttemptFactory
from tests.helpers import submit_via_service

pytestmark = pytest.mark.django_db


def _statements(ctx) -> list[str]:
    return [q["sql"] for q in ctx.captured_queries if q["sql"] not in ("BEGIN", "COMMIT")]


def _change(n: int) -> StateChange:
    return StateChange(entity="test", object_id=n, from_status="a", to_status="b", actor="test")


def test_a_save_an_update_and_an_insert_go_as_one_statement():
    attempt = AttemptFactory()
    others = [AttemptFactory(), AttemptFactory()]
    before = attempt.updated_at
    changes = [_change(1), _change(2), _change(3)]
    writes = Writes()
    attempt.language = "go"
    saved = writes.save(attempt, ["language", "updated_at"])
    updated = writes.update(Attempt.objects.filter(pk__in=[o.pk for o in others]), drafts={"python": "x"})
    inserted = writes.insert(changes)
    with CaptureQueriesContext(connection) as ctx:
        writes.flush()
    assert len(_statements(ctx)) == 1
    assert (saved.count, updated.count, inserted.count) == (1, 2, 3)
    # The new rows' keys are on their objects, in their order, with created_at as stored.
    stored = list(StateChange.objects.filter(entity="test").order_by("object_id").values_list("pk", "created_at"))
    assert [(c.pk, c.created_at) for c in changes] == stored
    assert not any(c._state.adding for c in changes)
    attempt.refresh_from_db()
    assert attempt.language == "go" and attempt.updated_at > before  # auto_now stamped, as save() does
    assert [o.drafts for o in Attempt.objects.filter(pk__in=[o.pk for o in others])] == [{"python": "x"}] * 2
    assert not writes  # a flush empties it


def test_a_row_saved_twice_in_one_flush_is_refused():
    # PostgreSQL would apply only one of two writes of a row in one statement, silently.
    attempt = AttemptFactory()
    writes = Writes()
    writes.save(attempt, ["language"])
    with pytest.raises(ValueError, match="twice"):
        writes.save(attempt, ["drafts"])


def test_nothing_queued_sends_nothing():
    with CaptureQueriesContext(connection) as ctx:
        Writes().flush()
    assert _statements(ctx) == []


@pytest.mark.django_db(transaction=True)
def test_a_save_whose_row_is_gone_fails_as_save_does_and_writes_nothing():
    attempt = AttemptFactory()
    Attempt.objects.filter(pk=attempt.pk).delete()
    writes = Writes()
    writes.insert([_change(1)])
    writes.save(attempt, ["language"])
    with pytest.raises(DatabaseError, match="did not affect any rows"):
        writes.flush()  # outside any transaction of the caller's: its own is rolled back
    assert not StateChange.objects.filter(entity="test").exists()


def test_an_object_with_a_key_is_not_inserted():
    change = _change(1)
    change.save()
    with pytest.raises(ValueError, match="has its key already"):
        Writes().insert([change])


def test_one_failing_part_writes_nothing_of_the_others():
    submission_id, _ = submit_via_service(AttemptFactory(), "score=1")
    submission = Submission.objects.get(pk=submission_id)
    Result.objects.create(submission=submission, score=1, max_score=100, feedback="", details={})
    writes = Writes()
    writes.insert([_change(7)])
    writes.insert([Result(submission=submission, score=2, max_score=100, feedback="", details={})])
    with pytest.raises(IntegrityError), transaction.atomic():
        writes.flush()
    assert not StateChange.objects.filter(entity="test").exists()
    assert Result.objects.get(submission=submission).score == 1


def test_writes_into_sends_its_own_at_once_and_joins_a_callers():
    with CaptureQueriesContext(connection) as ctx:
        with writes_into(None) as own:
            own.insert([_change(1)])
            own.insert([_change(2)])
        assert len(_statements(ctx)) == 1
        caller = Writes()
        with writes_into(caller) as joined:
            joined.insert([_change(3)])
        assert len(_statements(ctx)) == 1 and caller
        caller.flush()
    assert StateChange.objects.filter(entity="test").count() == 3
