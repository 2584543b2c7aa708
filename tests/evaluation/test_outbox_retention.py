"""Outbox rows go OUTBOX_RETENTION_DAYS after they were published, once their job has finished;
a row not published yet, or whose job is still live (a re-send, a retry), stays."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from evaluation.models import EvaluationJob, JobStatus, Outbox
from evaluation.tasks import purge_outbox

pytestmark = pytest.mark.django_db


def _row(status: str, *, published_days_ago: int | None) -> Outbox:
    job = EvaluationJob.objects.create(kind="evaluate", subject_id=1, status=status, max_tries=3, tries=1)
    now = timezone.now()
    published = None if published_days_ago is None else now - timedelta(days=published_days_ago)
    return Outbox.objects.create(
        job=job, queue="evaluate", task_name="evaluation.tasks.run_job", available_at=now, published_at=published
    )


def test_published_rows_of_finished_jobs_go_after_their_retention_and_the_rest_stays():
    assert settings.CONFIG.outbox_retention_days == 7
    gone = [_row(status, published_days_ago=8) for status in (JobStatus.SUCCEEDED, JobStatus.DEAD, JobStatus.DISCARDED)]
    recent = _row(JobStatus.SUCCEEDED, published_days_ago=6)
    live = _row(JobStatus.RETRYING, published_days_ago=8)
    running = _row(JobStatus.RUNNING, published_days_ago=8)
    unpublished = _row(JobStatus.SUCCEEDED, published_days_ago=None)

    assert purge_outbox() == 3
    kept = set(Outbox.objects.values_list("pk", flat=True))
    assert kept == {recent.pk, live.pk, running.pk, unpublished.pk}
    assert EvaluationJob.objects.filter(pk__in=[row.job_id for row in gone]).count() == 3  # jobs stay
    assert purge_outbox() == 0


def test_the_outbox_purge_is_a_beat_entry_on_the_ops_queue():
    (entry,) = [e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == "evaluation.tasks.purge_outbox"]
    assert entry["options"]["queue"] == "ops"
