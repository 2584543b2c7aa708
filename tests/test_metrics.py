"""GET /metrics, the cache-diff API and the staff cache-diff page."""

from __future__ import annotations

import re
import uuid

import pytest
import redis
from django.conf import settings
from django.db import transaction
from django.test import Client, override_settings

from attempts.models import Attempt, AttemptStatus
from attempts.selectors.attempts import attempt_get_for_user
from attempts.services.transitions import transition
from evaluation.models import DeadLetter, EvaluationJob, JobStatus
from interviewprep import metrics
from tests.factories import AttemptFactory, UserFactory

pytestmark = [pytest.mark.django_db]

REMOTE = {"REMOTE_ADDR": "10.1.2.3"}


def _samples(text: str) -> dict[str, float]:
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


def _submit(client, attempt_id: int):
    return client.post(
        f"/api/v1/attempts/{attempt_id}/submissions/",
        {"answer": "shard by user"},
        format="json",
        HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex,
    )


def test_metrics_from_the_host_show_queues_jobs_outbox_dead_letters_and_counters(api_client_for):
    user = UserFactory()
    client = api_client_for(user)
    attempts = [AttemptFactory(user=user) for _ in range(3)]
    for attempt in attempts:
        assert _submit(client, attempt.pk).status_code == 202
    job = EvaluationJob.objects.order_by("id").first()
    EvaluationJob.objects.filter(pk=job.pk).update(status=JobStatus.DEAD)
    DeadLetter.objects.create(job=job, kind=job.kind, subject_id=job.subject_id, error="boom", tries=3)
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    broker.lpush("evaluate", "m1", "m2")
    broker.lpush("evaluate\x06\x163", "m3")  # kombu's list for priority 3 of the same queue
    broker.lpush("ops", "m4")
    for _ in range(3):
        attempt_get_for_user(user=user, attempt_id=attempts[0].pk)
    metrics.observe("interviewprep_job_latency_seconds", 0.3, {"kind": "evaluate"})
    metrics.incr("interviewprep_jobs_retried_total", {"kind": "evaluate"}, amount=1_234_567)

    response = Client().get("/metrics")  # REMOTE_ADDR is 127.0.0.1

    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    text = response.content.decode()
    samples = _samples(text)
    assert samples['interviewprep_queue_depth{queue="evaluate"}'] == 3
    assert samples['interviewprep_queue_depth{queue="generate"}'] == 0
    assert samples['interviewprep_queue_depth{queue="ops"}'] == 1
    assert samples['interviewprep_jobs{kind="evaluate",status="pending"}'] == 2
    assert samples['interviewprep_jobs{kind="evaluate",status="dead"}'] == 1
    assert samples['interviewprep_jobs{kind="generate",status="running"}'] == 0
    assert samples["interviewprep_outbox_unpublished"] == 3
    assert samples["interviewprep_dead_letters_pending"] == 1
    assert samples['interviewprep_cache_requests_total{outcome="miss"}'] == 1
    assert samples['interviewprep_cache_requests_total{outcome="hit"}'] == 2
    assert samples['interviewprep_job_latency_seconds_bucket{kind="evaluate",le="0.5"}'] == 1
    assert samples['interviewprep_job_latency_seconds_bucket{kind="evaluate",le="0.25"}'] == 0
    assert samples['interviewprep_job_latency_seconds_count{kind="evaluate"}'] == 1
    assert samples["interviewprep_metrics_store_up"] == 1
    # Exact, not "1.23457e+06": a rounded counter would move in steps.
    assert 'interviewprep_jobs_retried_total{kind="evaluate"} 1234567\n' in text
    # One HELP and TYPE per family, before its samples (the exposition format's rule).
    families = re.findall(r"^# TYPE (\S+) (\S+)$", text, flags=re.M)
    assert len(families) == len({name for name, _ in families})
    assert ("interviewprep_job_latency_seconds", "histogram") in families
    assert ("interviewprep_cache_requests_total", "counter") in families
    assert ("interviewprep_queue_depth", "gauge") in families


def test_metrics_with_the_broker_unreachable_report_minus_one_and_still_answer():
    with override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0"):
        response = Client().get("/metrics")
    assert response.status_code == 200
    samples = _samples(response.content.decode())
    assert samples['interviewprep_queue_depth{queue="evaluate"}'] == -1
    assert samples['interviewprep_jobs{kind="evaluate",status="queued"}'] == 0


def test_metrics_with_the_counter_store_unreachable_still_show_the_gauges():
    with override_settings(REDIS_STATE_URL="redis://127.0.0.1:1/0"):
        response = Client().get("/metrics")
    assert response.status_code == 200
    samples = _samples(response.content.decode())
    assert samples["interviewprep_metrics_store_up"] == 0
    assert "interviewprep_outbox_unpublished" in samples


def test_metrics_from_elsewhere_are_for_staff_only(api_client_for):
    anonymous = Client().get("/metrics", **REMOTE)
    assert anonymous.status_code == 403

    member = Client()
    member.force_login(UserFactory())
    assert member.get("/metrics", **REMOTE).status_code == 403

    staff = Client()
    staff.force_login(UserFactory(is_staff=True))
    assert staff.get("/metrics", **REMOTE).status_code == 200

    assert api_client_for(UserFactory()).get("/metrics", **REMOTE).status_code == 403
    assert api_client_for(UserFactory(is_staff=True)).get("/metrics", **REMOTE).status_code == 200
    bad_token = Client().get("/metrics", HTTP_AUTHORIZATION="Token nope", **REMOTE)
    assert bad_token.status_code == 403


def _stale_copy(attempt: Attempt) -> None:
    """Cache the attempt, then commit a change without refreshing the cache."""
    attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)
    with transaction.atomic():
        locked = Attempt.objects.select_for_update().get(pk=attempt.pk)
        transition(locked, AttemptStatus.QUEUED, actor="test")


def test_cache_diff_api_for_staff_shows_both_sides(api_client_for):
    attempt = AttemptFactory()
    staff = api_client_for(UserFactory(is_staff=True))

    empty = staff.get(f"/api/v1/ops/attempts/{attempt.pk}/cache-diff/")
    assert empty.status_code == 200
    assert empty.json()["cache"] is None and empty.json()["consistent"] is True

    attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)
    same = staff.get(f"/api/v1/ops/attempts/{attempt.pk}/cache-diff/").json()
    assert same["consistent"] is True
    assert same["cache"]["version"] == same["database"]["version"] == attempt.version

    _stale_copy(attempt)
    differs = staff.get(f"/api/v1/ops/attempts/{attempt.pk}/cache-diff/").json()
    assert differs["consistent"] is False
    assert differs["cache"]["version"] == attempt.version
    assert differs["database"]["version"] == attempt.version + 1
    assert differs["floor"] == attempt.version + 1


def test_cache_diff_api_refuses_non_staff_and_answers_404_for_a_missing_attempt(api_client_for):
    attempt = AttemptFactory()
    owner = api_client_for(attempt.user)
    assert owner.get(f"/api/v1/ops/attempts/{attempt.pk}/cache-diff/").status_code == 403
    staff = api_client_for(UserFactory(is_staff=True))
    missing = staff.get("/api/v1/ops/attempts/987654321/cache-diff/")
    assert missing.status_code == 404


def test_staff_cache_diff_page():
    attempt = AttemptFactory()
    staff = Client()
    staff.force_login(UserFactory(is_staff=True))
    url = f"/staff/attempts/{attempt.pk}/cache-diff/"

    page = staff.get(url)
    assert page.status_code == 200
    assert "Consistent (nothing cached)" in page.content.decode()

    _stale_copy(attempt)
    page = staff.get(url).content.decode()
    assert "Inconsistent" in page
    assert f"below version {attempt.version + 1}" in page

    member = Client()
    member.force_login(attempt.user)
    refused = member.get(url)
    assert refused.status_code == 302 and "/admin/login/" in refused["Location"]
    assert staff.get("/staff/attempts/987654321/cache-diff/").status_code == 404
