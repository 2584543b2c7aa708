"""Job tries go after JOB_TRY_RETENTION_DAYS, but never those of a job still running or
waiting, or of a job whose dead letter waits for a replay."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from evaluation.models import DeadLetter, EvaluationJob, JobStatus, JobTry
from evaluation.tasks import purge_job_tries

pytestmark = pytest.mark.django_db


def _job_with_a_try(status: str, *, days_ago: int, outcome: str = "succeeded") -> EvaluationJob:
    job = EvaluationJob.objects.create(kind="evaluate", subject_id=1, status=status, max_tries=3, tries=1)
    started = timezone.now() - timedelta(days=days_ago)
    JobTry.objects.create(job=job, number=1, lease_token=uuid.uuid4(), worker="w", started_at=started, outcome=outcome)
    return job


def _letter(job: EvaluationJob, *, replayed: bool) -> None:
    DeadLetter.objects.create(
        job=job,
        kind=job.kind,
        subject_id=job.subject_id,
        error="boom",
        tries=1,
        replayed_at=timezone.now() if replayed else None,
    )


def test_old_tries_of_finished_jobs_go_and_what_is_still_needed_stays():
    assert settings.CONFIG.job_try_retention_days == 90
    old_done = _job_with_a_try(JobStatus.SUCCEEDED, days_ago=91)
    old_replayed = _job_with_a_try(JobStatus.DEAD, days_ago=91, outcome="permanent_error")
    _letter(old_replayed, replayed=True)
    recent = _job_with_a_try(JobStatus.SUCCEEDED, days_ago=89)
    waiting_letter = _job_with_a_try(JobStatus.DEAD, days_ago=91, outcome="permanent_error")
    _letter(waiting_letter, replayed=False)
    retrying = _job_with_a_try(JobStatus.RETRYING, days_ago=91, outcome="transient_error")

    assert purge_job_tries() == 2
    assert set(JobTry.objects.values_list("job_id", flat=True)) == {recent.pk, waiting_letter.pk, retrying.pk}
    assert EvaluationJob.objects.filter(pk__in=[old_done.pk, old_replayed.pk]).count() == 2  # jobs stay
    assert purge_job_tries() == 0
