"""The one-call submit (attempts/sql/submit.sql) against the general submit path.

The SQL function handles a fresh key and replays a finished one; every other key goes through
the Python path. These tests hold the two to writing the same rows and answering the same bytes.
"""

from __future__ import annotations

import json
import re
import uuid

import pytest
from django.db.models import Q

from attempts.errors import IdempotencyKeyReused, NotFound
from attempts.models import Attempt, AttemptStatus, IdempotencyRecord, StateChange, Submission, SubmissionStatus
from attempts.selectors import cache
from attempts.services import attempts as services
from attempts.services.idempotency import render_body
from attempts.services.transitions import ATTEMPT_MOVES, is_legal
from evaluation.models import EvaluationJob, Outbox
from tests.factories import AttemptFactory
from tests.processes import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _submit(create, attempt, answer, key=None):
    return create(
        user=attempt.user, attempt_id=attempt.pk, answer=answer, idempotency_key=key or uuid.uuid4().hex,
        fingerprint=f"fp-{answer}",
    )  # fmt: skip


def _normalise(text: str) -> str:
    return re.sub(r"\d+", "N", text)


def _snapshot(attempt: Attempt, key: str) -> dict:
    attempt.refresh_from_db()
    new = Submission.objects.get(attempt=attempt, idempotency_key=key)
    older = list(Submission.objects.filter(attempt=attempt).exclude(pk=new.pk).order_by("pk"))
    job = EvaluationJob.objects.get(submission=new)
    outbox = Outbox.objects.get(job=job)
    record = IdempotencyRecord.objects.get(user=attempt.user, key=key)
    changes = StateChange.objects.filter(created_at__gte=new.created_at).filter(
        Q(entity="attempt", object_id=attempt.pk)
        | Q(entity="submission", object_id__in=[*(s.pk for s in older), new.pk])
    )
    return {
        "attempt": (attempt.status, attempt.version, attempt.latest_submission_id == new.pk),
        "new": (new.status, new.answer),
        "older": [s.status for s in older],
        "job": (job.kind, job.status, job.tries, job.max_tries, job.correlation_id == key[:64], job.lease_token,
                job.last_error, job.discard_reason, job.practice_request_id, job.replay_of_id),
        "outbox": (outbox.queue, outbox.task_name, outbox.available_at <= outbox.created_at, outbox.publish_attempts,
                   outbox.last_error, outbox.published_at is not None),
        "record": (record.fingerprint, record.status_code, json.loads(bytes(record.response_body))["status"],
                   (record.expires_at - record.created_at).total_seconds()),
        "changes": sorted((c.entity, c.from_status, c.to_status, _normalise(c.actor), _normalise(c.reason))
                          for c in changes),
    }  # fmt: skip


@pytest.mark.parametrize("earlier", [0, 1, 2])
def test_the_sql_submit_writes_what_the_general_path_writes(earlier):
    fast, slow = AttemptFactory(), AttemptFactory()
    for attempt in (fast, slow):
        for n in range(earlier):
            _submit(services.submission_create, attempt, f"earlier {n}")
    key_fast, key_slow = uuid.uuid4().hex, uuid.uuid4().hex
    fast_response = _submit(services._submission_create_fresh, fast, "the answer", key_fast)
    slow_response = _submit(services._submission_create_any, slow, "the answer", key_slow)
    assert fast_response is not None
    wait_for(lambda: not Outbox.objects.filter(published_at=None).exists())

    fast_rows, slow_rows = _snapshot(fast, key_fast), _snapshot(slow, key_slow)
    assert fast_rows == slow_rows
    assert fast_rows["attempt"][0] == AttemptStatus.QUEUED
    assert fast_rows["older"] == [SubmissionStatus.SUPERSEDED] * earlier

    # The same bytes as the general path renders, stored and answered.
    for attempt, key, response in ((fast, key_fast, fast_response), (slow, key_slow, slow_response)):
        payload = json.loads(response.body)
        assert response.body == render_body(payload)
        assert bytes(IdempotencyRecord.objects.get(user=attempt.user, key=key).response_body) == response.body
        assert (response.status_code, response.replayed) == (202, False)
        assert payload["attempt_id"] == attempt.pk and payload["version"] == attempt.version
        assert cache._read(attempt.pk)[1] == attempt.version  # the floor, raised before the commit


def test_a_finished_key_is_replayed_from_the_same_call_and_another_body_refused():
    attempt = AttemptFactory()
    key = uuid.uuid4().hex
    first = _submit(services.submission_create, attempt, "one answer", key)
    again = _submit(services._submission_create_fresh, attempt, "one answer", key)
    assert (again.status_code, again.body, again.replayed) == (first.status_code, first.body, True)
    with pytest.raises(IdempotencyKeyReused):
        _submit(services._submission_create_fresh, attempt, "another answer", key)
    assert Submission.objects.filter(attempt=attempt).count() == 1


def test_an_expired_key_is_left_to_the_general_path():
    attempt = AttemptFactory()
    key = uuid.uuid4().hex
    _submit(services.submission_create, attempt, "one answer", key)
    IdempotencyRecord.objects.filter(key=key).update(expires_at=IdempotencyRecord.objects.get(key=key).created_at)
    assert _submit(services._submission_create_fresh, attempt, "one answer", key) is None
    assert Submission.objects.filter(attempt=attempt).count() == 1
    # The general path frees the expired key and submits again.
    response = _submit(services.submission_create, attempt, "one answer", key)
    assert (response.status_code, response.replayed) == (202, False)
    assert Submission.objects.filter(attempt=attempt).count() == 2


def test_another_users_attempt_is_not_found_and_nothing_is_written():
    attempt, stranger = AttemptFactory(), AttemptFactory()
    with pytest.raises(NotFound):
        services.submission_create(
            user=stranger.user, attempt_id=attempt.pk, answer="mine now", idempotency_key="k1", fingerprint="f"
        )
    assert not IdempotencyRecord.objects.exists() and not Submission.objects.exists()


def test_the_moves_the_sql_submit_makes_are_legal_in_the_transition_tables():
    assert all(is_legal(Attempt, status, AttemptStatus.QUEUED) for status in ATTEMPT_MOVES)
    for status in (SubmissionStatus.QUEUED, SubmissionStatus.PROCESSING):
        assert is_legal(Submission, status, SubmissionStatus.SUPERSEDED)
