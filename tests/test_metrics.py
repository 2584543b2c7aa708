"""GET /metrics (counts merged over real worker processes), the cache-diff API and the staff cache-diff page."""

from __future__ import annotations

import os
import re
import signal
import uuid
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import transaction
from django.test import Client, override_settings

from attempts.models import Attempt, AttemptStatus
from attempts.selectors.attempts import attempt_get_for_user
from attempts.services.transitions import transition
from evaluation.models import DeadLetter, EvaluationJob, JobStatus, JobTry
from interviewprep import metrics
from tests.factories import AttemptFactory, UserFactory
from tests.processes import wait_for

pytestmark = [pytest.mark.django_db]

REMOTE = {"REMOTE_ADDR": "10.1.2.3"}


def _samples(text: str) -> dict[str, float]:
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


def _scrape() -> dict[str, float]:
    response = Client().get("/metrics")  # REMOTE_ADDR is 127.0.0.1
    assert response.status_code == 200
    return _samples(response.content.decode())


def _submit(client, attempt_id: int, answer: str = "shard by user"):
    return client.post(
        f"/api/v1/attempts/{attempt_id}/submissions/",
        {"answer": answer},
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
    # Exact (the text may say 1.234567e+06): a rounded counter would move in steps.
    assert samples['interviewprep_jobs_retried_total{kind="evaluate"}'] == 1_234_567
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


def test_metrics_with_a_counter_file_torn_still_show_the_gauges():
    # A file cut short (a full disk, say): the merge fails, the gauges do not.
    (Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]) / "counter_1.db").write_bytes(b"torn")
    response = Client().get("/metrics")
    assert response.status_code == 200
    samples = _samples(response.content.decode())
    assert samples["interviewprep_metrics_store_up"] == 0
    assert "interviewprep_outbox_unpublished" in samples


def test_a_metric_write_that_cannot_be_made_does_not_fail_its_caller():
    metrics.incr("interviewprep_no_such_total")
    metrics.incr("interviewprep_jobs_retried_total", {"no_such_label": "x"})
    metrics.incr("interviewprep_jobs_retried_total", {"kind": "evaluate"}, amount=-1)
    metrics.observe("interviewprep_job_latency_seconds", 0.1, {"kind": "evaluate", "extra": "x"})
    metrics.observe("interviewprep_jobs_retried_total", 0.1, {"kind": "evaluate"})
    assert _scrape().get('interviewprep_jobs_retried_total{kind="evaluate"}', 0) == 0


@pytest.mark.django_db(transaction=True)
def test_counts_from_every_worker_child_add_up_in_one_scrape_and_outlive_a_killed_child(workers, api_client_for):
    """Jobs finished in a prefork worker's children, one child killed in between (SIGKILL: it
    writes nothing on the way out): the scrape, in this process, counts every job exactly once."""
    worker = workers(concurrency=2)
    user = UserFactory()
    client = api_client_for(user)

    def run_jobs(count: int) -> set[str]:
        """`count` submits, waited for until scored; returns the worker processes that ran them."""
        submitted = []
        for _ in range(count):
            response = _submit(client, AttemptFactory(user=user).pk, answer="score=73")
            assert response.status_code == 202
            submitted.append(response.json()["submission_id"])
        jobs = EvaluationJob.objects.filter(kind="evaluate", subject_id__in=submitted)
        wait_for(lambda: jobs.filter(status=JobStatus.SUCCEEDED).count() == count, timeout=120, message="jobs scored")
        return set(JobTry.objects.filter(job__in=jobs).values_list("worker", flat=True))

    first = run_jobs(6)
    killed = sorted(first)[0]
    pid = int(killed.rsplit(":", 1)[1])
    assert pid in worker.children()
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: pid not in worker.children(), timeout=60, message="the killed child to be reaped")
    second = run_jobs(6)
    assert killed not in second  # so at least two processes counted

    finished = 'interviewprep_jobs_finished_total{kind="evaluate",status="succeeded"}'
    # The count is written just after each job's commit: poll until it has caught up, then exact.
    wait_for(lambda: _scrape().get(finished, 0) >= 12, timeout=60, message="the counts to catch up")
    samples = _scrape()
    assert samples[finished] == 12
    assert samples['interviewprep_job_latency_seconds_count{kind="evaluate"}'] == 12
    assert samples['interviewprep_job_latency_seconds_bucket{kind="evaluate",le="+Inf"}'] == 12
    assert samples['interviewprep_jobs{kind="evaluate",status="succeeded"}'] == 12
    # A scrape merges the killed child's files once it is gone (interviewprep/metrics_files.py),
    # and its counts stay in the totals.
    folder = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    wait_for(lambda: _scrape() and not list(folder.glob(f"*_{pid}@*.db")), timeout=60, message="its files merged")
    assert (folder / "counter_merged.db").exists()
    assert _scrape()[finished] == 12


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
