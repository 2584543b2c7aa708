"""Under load: warm reads come from the cache; submits past the backlog limit or into an open
breaker are refused with 503 + Retry-After and write nothing (promise 8)."""

from __future__ import annotations

import dataclasses
import uuid

import pytest
from django.conf import settings
from django.test import override_settings

from attempts.models import Attempt, IdempotencyRecord, StateChange, Submission
from attempts.services.admission import evaluate_backlog
from evaluation.breaker import remote_model_breaker
from evaluation.models import EvaluationJob, Outbox
from tests.factories import AttemptFactory, QuestionFactory, UserFactory
from tests.metrics_helpers import counter_value


def _outcomes() -> dict[str, float]:
    return {
        outcome: counter_value("interviewprep_cache_requests_total", {"outcome": outcome})
        for outcome in ("hit", "miss", "stale", "error")
    }


@pytest.mark.django_db
def test_steady_reads_of_warm_attempts_are_served_from_the_cache(api_client_for):
    user = UserFactory()
    attempts = [AttemptFactory(user=user) for _ in range(4)]
    client = api_client_for(user)
    for _ in range(50):
        for attempt in attempts:
            response = client.get(f"/api/v1/attempts/{attempt.pk}/")
            assert response.status_code == 200
            assert response.json()["version"] == attempt.version
    outcomes = _outcomes()
    total = sum(outcomes.values())
    assert total == 200
    assert outcomes["hit"] / total >= 0.9, outcomes


def _submit(client, attempt_id: int, key: str | None = None):
    return client.post(
        f"/api/v1/attempts/{attempt_id}/submissions/",
        {"answer": "use a queue"},
        format="json",
        HTTP_IDEMPOTENCY_KEY=key or uuid.uuid4().hex,
    )


def _written() -> dict[str, int]:
    return {
        "submissions": Submission.objects.count(),
        "idempotency": IdempotencyRecord.objects.count(),
        "jobs": EvaluationJob.objects.count(),
        "outbox": Outbox.objects.count(),
        "state_changes": StateChange.objects.count(),
        "versions": sum(Attempt.objects.values_list("version", flat=True)),
    }


@pytest.mark.django_db
def test_backlog_over_the_limit_refuses_submits_with_503_and_writes_nothing(api_client_for):
    user = UserFactory()
    client = api_client_for(user)
    for _ in range(3):
        assert _submit(client, AttemptFactory(user=user).pk).status_code == 202
    attempt = AttemptFactory(user=user)
    config = dataclasses.replace(settings.CONFIG, evaluate_queue_limit=3)
    with override_settings(CONFIG=config):
        assert evaluate_backlog(fresh=True) == 3
        before = _written()
        response = _submit(client, attempt.pk, key="refused-1")
        assert response.status_code == 503
        assert int(response["Retry-After"]) >= 1
        assert response.json()["status"] == 503
        assert _written() == before
        assert not IdempotencyRecord.objects.filter(key="refused-1").exists()

    # Below the limit the same request goes through: the refusal was the backlog's doing.
    with override_settings(CONFIG=dataclasses.replace(settings.CONFIG, evaluate_queue_limit=4)):
        evaluate_backlog(fresh=True)
        assert _submit(client, attempt.pk, key="refused-1").status_code == 202


@pytest.mark.django_db
def test_open_breaker_refuses_remote_evaluated_submits_with_503(api_client_for):
    question = QuestionFactory(evaluator="remote")
    attempt = AttemptFactory(question=question)
    client = api_client_for(attempt.user)
    breaker = remote_model_breaker()
    breaker.reset()
    for _ in range(breaker.failure_threshold):
        breaker.record_failure()
    assert breaker.state() == "open"
    evaluate_backlog(fresh=True)
    before = _written()

    response = _submit(client, attempt.pk, key="breaker-1")

    assert response.status_code == 503
    assert 1 <= int(response["Retry-After"]) <= int(breaker.reset_after)
    assert _written() == before
    # A question judged by another evaluator is not held back by that breaker.
    other = AttemptFactory(user=attempt.user)
    assert _submit(client, other.pk).status_code == 202
    breaker.reset()
    assert _submit(client, attempt.pk, key="breaker-1").status_code == 202
