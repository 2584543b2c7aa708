"""A queued attempt says where its evaluation stands; no other attempt does, and the cache never
holds it."""

from __future__ import annotations

import json

import pytest

from attempts import cache
from attempts.models import AttemptStatus
from attempts.selectors.attempts import attempt_get_for_user
from evaluation.models import EvaluationJob, JobStatus
from interviewprep.redis_state import cache_redis
from tests.factories import AttemptFactory
from tests.helpers import submit_via_service

pytestmark = pytest.mark.django_db


def _read(attempt):
    return attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)


def test_queued_attempts_carry_their_place_in_submit_order():
    attempts = [AttemptFactory() for _ in range(3)]
    jobs = [submit_via_service(attempt, "score=50")[1] for attempt in attempts]

    reads = [_read(attempt) for attempt in attempts]
    assert [r["status"] for r in reads] == [AttemptStatus.QUEUED] * 3
    assert [r["queue"] for r in reads] == [{"position": n, "estimated_seconds": None} for n in (1, 2, 3)]

    EvaluationJob.objects.filter(pk=jobs[0]).update(status=JobStatus.RUNNING)  # a worker took the first
    assert [_read(attempt)["queue"]["position"] for attempt in attempts[1:]] == [1, 2]


def test_the_queue_is_never_stored_in_the_cache():
    attempt = AttemptFactory()
    submit_via_service(attempt, "score=50")
    assert "queue" in _read(attempt)
    assert "queue" in _read(attempt)  # served from the cache this time
    stored = json.loads(cache_redis().hget(cache.attempt_cache_key(attempt.pk), "payload"))
    assert stored["status"] == AttemptStatus.QUEUED
    assert "queue" not in stored


def test_attempts_that_are_not_queued_carry_no_queue(api_client_for):
    draft = AttemptFactory()
    assert "queue" not in _read(draft)
    assert "queue" not in api_client_for(draft.user).get(f"/api/v1/attempts/{draft.pk}/").json()


def test_the_api_shows_the_queue_of_a_queued_attempt(api_client_for):
    attempt = AttemptFactory()
    submit_via_service(attempt, "score=50")
    body = api_client_for(attempt.user).get(f"/api/v1/attempts/{attempt.pk}/").json()
    assert body["queue"] == {"position": 1, "estimated_seconds": None}
