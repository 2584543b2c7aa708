"""The staff dashboard's figures (evaluation/dashboard.py) against rows made here, its samples,
and who may see the page, its panels and the ops API."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from evaluation.dashboard import ops_dashboard
from evaluation.jobs import registry
from evaluation.models import DeadLetter, EvaluationJob, JobStatus, JobTry, OpsSample
from evaluation.ops_samples import ops_sample_take
from interviewprep import metrics
from interviewprep.celery import app
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


class _IdleHandler:
    queue = "ops"


@pytest.fixture
def extra_kind():
    """A kind registered by no app, as a new one would be: the dashboard lists it unchanged."""
    registry.register_handler("bulk-test", _IdleHandler())
    yield "bulk-test"
    registry._HANDLERS.pop("bulk-test", None)


def _job(kind="evaluate", status=JobStatus.SUCCEEDED, created=None, finished=None) -> EvaluationJob:
    job = EvaluationJob.objects.create(kind=kind, subject_id=1, status=status, max_tries=3)
    EvaluationJob.objects.filter(pk=job.pk).update(created_at=created or timezone.now(), finished_at=finished)
    return job


def _try(job, outcome, finished) -> None:
    JobTry.objects.create(
        job=job,
        number=JobTry.objects.filter(job=job).count() + 1,
        lease_token=uuid.uuid4(),
        worker="w:1",
        started_at=finished - timedelta(seconds=1),
        finished_at=finished,
        outcome=outcome,
    )


def test_the_hours_series_are_counted_per_minute_from_the_rows(extra_kind):
    now = timezone.now().replace(microsecond=0)
    since = now - timedelta(hours=1)
    minute = lambda n, s=0: since + timedelta(minutes=n, seconds=s)  # noqa: E731
    # Two successes in minute 50 (latencies 5 s and 15 s), a dead job in minute 30, one too old.
    _job(created=minute(50, 0), finished=minute(50, 5))
    _job(created=minute(50, -5), finished=minute(50, 10))
    dead = _job(status=JobStatus.DEAD, created=minute(29), finished=minute(30, 1))
    _job(created=now - timedelta(hours=3), finished=now - timedelta(hours=2))
    DeadLetter.objects.filter(
        pk=DeadLetter.objects.create(job=dead, kind="evaluate", subject_id=1, error="boom", tries=3).pk
    ).update(created_at=minute(40, 2))
    _try(dead, JobTry.Outcome.TRANSIENT_ERROR, minute(55, 1))
    _try(dead, JobTry.Outcome.TRANSIENT_ERROR, minute(55, 30))
    _try(dead, JobTry.Outcome.LOCK_CONTENDED, minute(55, 40))
    # Work in progress: three waiting (the pending one the oldest, 100 s), one running.
    _job(status=JobStatus.PENDING, created=now - timedelta(seconds=100))
    _job(status=JobStatus.QUEUED, created=now - timedelta(seconds=50))
    _job(status=JobStatus.RETRYING, created=now - timedelta(seconds=500))
    _job(status=JobStatus.RUNNING, created=now - timedelta(seconds=20))

    dashboard = ops_dashboard(now=now)

    assert len(dashboard.throughput) == 60
    assert dashboard.throughput[50] == (minute(50), 2.0)
    assert dashboard.throughput[30] == (minute(30), 1.0)
    assert sum(value for _, value in dashboard.throughput) == 3
    assert dashboard.latency["p50"][50] == (minute(50), 10.0)
    assert dashboard.latency["p95"][50][1] == pytest.approx(14.5)
    assert dashboard.latency["p99"][50][1] == pytest.approx(14.9)
    assert dashboard.latency["p50"][30] == (minute(30), None)  # a dead job has no latency
    assert dashboard.retries[55] == (minute(55), 2.0)
    assert sum(value for _, value in dashboard.retries) == 2
    assert dashboard.lock_contention[55] == (minute(55), 1.0)
    assert dashboard.dead_letters[40] == (minute(40), 1.0)
    assert sum(value for _, value in dashboard.dead_letters) == 1
    kinds = {kind.kind: kind for kind in dashboard.kinds}
    assert extra_kind in kinds and kinds[extra_kind].queue == "ops" and kinds[extra_kind].waiting == 0
    evaluate = kinds["evaluate"]
    assert (evaluate.waiting, evaluate.processing, evaluate.succeeded, evaluate.dead) == (3, 1, 2, 1)
    assert evaluate.finished == 3
    assert evaluate.oldest_waiting_seconds == pytest.approx(100, abs=1)
    assert kinds[extra_kind].oldest_waiting_seconds is None


def test_cache_hit_ratio_is_the_difference_between_samples_and_survives_a_counter_reset():
    now = timezone.now()
    for seconds_ago, hits, misses in ((90, 10, 0), (60, 18, 2), (30, 3, 1)):  # the last after a restart
        OpsSample.objects.create(
            taken_at=now - timedelta(seconds=seconds_ago),
            counters={"cache_hit": hits, "cache_miss": misses, "cache_stale": 0, "cache_error": 0},
            queue_depths={"evaluate": seconds_ago // 10, "run": -1},
            oldest_waiting={"evaluate": 7.0},
        )

    dashboard = ops_dashboard(now=now)

    assert [value for _, value in dashboard.cache_hit_ratio] == [0.8, 0.75]
    assert dashboard.cache_requests == {"hit": 11, "miss": 3, "stale": 0, "error": 0}
    assert [value for _, value in dashboard.queue_depth_history["evaluate"]] == [9.0, 6.0, 3.0]
    assert [value for _, value in dashboard.queue_depth_history["run"]] == [None, None, None]
    assert [value for _, value in dashboard.oldest_waiting_history["evaluate"]] == [7.0, 7.0, 7.0]


def test_a_sample_holds_the_merged_counters_and_old_samples_are_purged():
    old = OpsSample.objects.create(taken_at=timezone.now() - timedelta(hours=3))
    kept = OpsSample.objects.create(taken_at=timezone.now() - timedelta(minutes=90))
    metrics.incr("interviewprep_cache_requests_total", {"outcome": "hit"}, amount=5)
    metrics.incr("interviewprep_cache_requests_total", {"outcome": "miss"}, amount=2)

    sample = ops_sample_take()

    assert sample.counters == {"cache_hit": 5, "cache_miss": 2, "cache_stale": 0, "cache_error": 0}
    assert set(sample.queue_depths) >= {"evaluate", "run"}
    assert "evaluate" in sample.oldest_waiting
    assert not OpsSample.objects.filter(pk=old.pk).exists()
    assert OpsSample.objects.filter(pk=kept.pk).exists()


def _client(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@pytest.mark.parametrize("path", ["/staff/dashboard/", "/staff/dashboard/panels/"])
def test_the_dashboard_is_for_staff_only(path):
    anonymous = _client().get(path)
    assert anonymous.status_code == 302 and "/admin/login/" in anonymous["Location"]
    assert _client(UserFactory()).get(path).status_code == 403
    staff = _client(UserFactory(is_staff=True)).get(path)
    assert staff.status_code == 200
    assert 'data-chart="throughput"' in staff.content.decode()


def test_the_admin_index_links_the_dashboard():
    page = _client(UserFactory(is_staff=True, is_superuser=True)).get("/admin/").content.decode()
    assert 'href="/staff/dashboard/"' in page


def test_the_ops_api_gives_the_same_figures_to_staff_only(api_client_for):
    _job(finished=timezone.now() - timedelta(seconds=5))
    assert Client().get("/api/v1/ops/dashboard/").status_code in (401, 403)
    assert api_client_for(UserFactory()).get("/api/v1/ops/dashboard/").status_code == 403
    body = api_client_for(UserFactory(is_staff=True)).get("/api/v1/ops/dashboard/").json()
    assert sum(value for _, value in body["throughput"]) == 1
    assert len(body["throughput"]) == 60
    assert set(body["latency"]) == {"p50", "p95", "p99"}
    assert body["breaker"]["state"] == "closed"
    evaluate = next(kind for kind in body["kinds"] if kind["kind"] == "evaluate")
    assert evaluate["finished"] == 1 and evaluate["succeeded"] == 1


def test_the_sample_and_the_invariants_run_on_beat_as_registered_tasks():
    app.loader.import_default_modules()
    for entry in ("take-ops-sample", "check-invariants"):
        scheduled = settings.CELERY_BEAT_SCHEDULE[entry]
        assert scheduled["task"] in app.tasks
        assert scheduled["options"]["queue"] == "ops"
