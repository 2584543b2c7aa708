"""The candidate side's retention: finished runs go after RUN_RETENTION_DAYS with their jobs,
tries and records, state changes after STATE_CHANGE_RETENTION_DAYS; what a page, the
dead-letter console or an invariant still reads stays, whatever its age."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import transaction
from django.test import override_settings
from django.utils import timezone

from attempts.models import Run, StateChange
from attempts.services.invariants import invariants_check
from attempts.services.runs import run_complete, run_create, run_lock, run_start_processing
from attempts.tasks import purge_runs, purge_state_changes
from evaluation.jobs import job_run
from evaluation.models import DeadLetter, EvaluationJob, JobStatus, JobTry, Outbox
from tests.factories import AttemptFactory, CodingQuestionFactory

pytestmark = pytest.mark.django_db

ANSWER = "def add(a, b):\n    return a + b\n"
DAY = timedelta(days=1)


def _run(attempt, *, finished_days_ago: float | None = 30) -> Run:
    """A run through the service; finished (its job succeeded, with a try) that many days ago."""
    run = run_create(user=attempt.user, attempt_id=attempt.pk, answer=ANSWER)
    if finished_days_ago is None:
        return run
    job = EvaluationJob.objects.get(kind="run", subject_id=run.pk)
    with transaction.atomic():
        locked = run_lock(run_id=run.pk)
        run_start_processing(run=locked, actor="test")
        run_complete(run=locked, result={"load_error": None, "stopped": None, "cases": []}, actor="test")
    at = timezone.now() - finished_days_ago * DAY
    JobTry.objects.create(
        job=job, number=1, lease_token=uuid.uuid4(), worker="test", started_at=at, outcome="succeeded"
    )
    EvaluationJob.objects.filter(pk=job.pk).update(status=JobStatus.SUCCEEDED, tries=1, finished_at=at)
    Run.objects.filter(pk=run.pk).update(finished_at=at)
    return run


def _gone(run: Run) -> bool:
    return not (
        Run.objects.filter(pk=run.pk).exists()
        or EvaluationJob.objects.filter(kind="run", subject_id=run.pk).exists()
        or StateChange.objects.filter(entity="run", object_id=run.pk).exists()
    )


def test_finished_runs_past_seven_days_go_with_their_jobs_tries_and_records():
    assert settings.CONFIG.run_retention_days == 7
    attempt = AttemptFactory(question=CodingQuestionFactory())
    old, week_and_a_day, recent = _run(attempt), _run(attempt, finished_days_ago=8), _run(attempt, finished_days_ago=6)
    latest = _run(attempt)
    assert StateChange.objects.filter(entity="run", object_id=old.pk).exists()

    assert purge_runs() == 2
    assert _gone(old) and _gone(week_and_a_day)
    assert set(Run.objects.values_list("pk", flat=True)) == {recent.pk, latest.pk}
    assert not JobTry.objects.filter(job__subject_id__in=[old.pk, week_and_a_day.pk], job__kind="run").exists()
    assert not Outbox.objects.filter(job__kind="run", job__subject_id=old.pk).exists()
    assert invariants_check() == []
    assert purge_runs() == 0


def test_an_attempts_latest_run_an_unfinished_one_and_a_dead_lettered_one_stay():
    attempt = AttemptFactory(question=CodingQuestionFactory())
    unfinished = _run(attempt, finished_days_ago=None)
    Run.objects.filter(pk=unfinished.pk).update(created_at=timezone.now() - 30 * DAY)
    lettered = _run(attempt, finished_days_ago=None)
    job = EvaluationJob.objects.get(kind="run", subject_id=lettered.pk)
    with override_settings(CONFIG=dataclasses.replace(settings.CONFIG, evaluator_faults={"permanent": 1.0})):
        assert job_run(job_id=job.pk, worker="test") == "dead"
    Run.objects.filter(pk=lettered.pk).update(finished_at=timezone.now() - 30 * DAY)
    other = AttemptFactory(question=CodingQuestionFactory())
    only = _run(other)

    assert purge_runs() == 0
    assert set(Run.objects.values_list("pk", flat=True)) == {unfinished.pk, lettered.pk, only.pk}
    assert DeadLetter.objects.filter(job=job).exists()


def test_state_changes_past_ninety_days_go_and_newer_ones_stay():
    assert settings.CONFIG.state_change_retention_days == 90
    attempt = AttemptFactory()
    for days in (91, 89):
        change = StateChange.objects.create(
            entity="attempt", object_id=attempt.pk, from_status="a", to_status="b", actor="test"
        )
        StateChange.objects.filter(pk=change.pk).update(created_at=timezone.now() - days * DAY)
    assert purge_state_changes() == 1
    assert [round((timezone.now() - c).days) for c in StateChange.objects.values_list("created_at", flat=True)] == [89]


def test_each_purge_is_a_beat_entry_on_the_ops_queue():
    tasks = {entry["task"]: entry for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    for name in (
        "attempts.tasks.purge_idempotency_keys",
        "attempts.tasks.purge_runs",
        "attempts.tasks.purge_state_changes",
        "evaluation.tasks.purge_job_tries",
        "evaluation.tasks.purge_outbox",
    ):
        assert tasks[name]["options"]["queue"] == "ops", name
