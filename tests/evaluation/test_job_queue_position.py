"""A waiting job's place in its queue, and its wait estimated from recent runs."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from evaluation.jobs import QueuePosition, job_queue_position
from evaluation.models import EvaluationJob, JobStatus

pytestmark = pytest.mark.django_db


def _job(subject_id: int, status: str = JobStatus.PENDING, kind: str = "evaluate") -> EvaluationJob:
    return EvaluationJob.objects.create(kind=kind, subject_id=subject_id, status=status, max_tries=3)


def _ran(seconds: float, *, ago: timedelta = timedelta(seconds=10), tries: int = 1, kind: str = "evaluate") -> None:
    """A job that finished `ago`, after a run of `seconds`."""
    finished = timezone.now() - ago
    job = _job(0, kind=kind)
    EvaluationJob.objects.filter(pk=job.pk).update(
        status=JobStatus.SUCCEEDED,
        tries=tries,
        started_at=finished - timedelta(seconds=seconds),
        finished_at=finished,
        updated_at=finished,
    )


def test_waiting_jobs_stand_in_the_order_they_were_made():
    for subject in (1, 2, 3):
        _job(subject)
    assert [job_queue_position(kind="evaluate", subject_id=s).position for s in (1, 2, 3)] == [1, 2, 3]


def test_only_waiting_jobs_of_the_same_kind_are_ahead():
    _job(10, JobStatus.RUNNING)
    _job(11, JobStatus.SUCCEEDED)
    _job(12, JobStatus.DISCARDED)
    _job(13, kind="generate")
    _job(14, JobStatus.RETRYING)
    _job(15, JobStatus.QUEUED)
    _job(16)
    assert job_queue_position(kind="evaluate", subject_id=16).position == 3  # 14 and 15 first


def test_a_subject_without_a_waiting_job_has_no_position():
    _job(20, JobStatus.RUNNING)
    _job(21, JobStatus.SUCCEEDED)
    assert job_queue_position(kind="evaluate", subject_id=20) == QueuePosition(None, None)
    assert job_queue_position(kind="evaluate", subject_id=21) == QueuePosition(None, None)
    assert job_queue_position(kind="evaluate", subject_id=22) == QueuePosition(None, None)


def test_its_newest_waiting_job_counts_for_a_subject():
    _job(30, JobStatus.DEAD)
    _job(31)
    _job(30)  # a replay of 30's dead letter
    assert job_queue_position(kind="evaluate", subject_id=30).position == 2


def test_no_recent_run_no_estimate():
    _ran(2, ago=timedelta(minutes=10))  # too long ago
    _ran(2, tries=2)  # its span holds a retry's wait, not a run
    _ran(2, kind="generate")
    _job(40)
    assert job_queue_position(kind="evaluate", subject_id=40) == QueuePosition(1, None)


def test_the_estimate_is_the_position_over_the_rate_of_the_running_workers():
    _ran(1)
    _ran(3)  # runs of 2 s on average
    for subject in (50, 51, 52):
        _job(subject)
    assert job_queue_position(kind="evaluate", subject_id=52) == QueuePosition(3, 6)  # one at a time

    _job(53, JobStatus.RUNNING)
    _job(54, JobStatus.RUNNING)  # two workers busy: twice the rate
    assert job_queue_position(kind="evaluate", subject_id=52) == QueuePosition(3, 3)
    assert job_queue_position(kind="evaluate", subject_id=50) == QueuePosition(1, 1)


def test_a_quick_run_still_estimates_at_least_a_second():
    _ran(0.01)
    _job(60)
    assert job_queue_position(kind="evaluate", subject_id=60) == QueuePosition(1, 1)
