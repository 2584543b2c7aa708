"""A job's status moves only along its table; an illegal move is refused, counted and rolled back."""

import itertools

import pytest
from django.db import transaction

from evaluation.jobs.transitions import JOB_MOVES, job_move_is_legal, job_transition
from evaluation.models import EvaluationJob, JobStatus
from interviewprep.errors import IllegalTransition
from tests.metrics_helpers import counter_value

ILLEGAL = [(a, b) for a, b in itertools.product(JobStatus.values, repeat=2) if not job_move_is_legal(a, b)]
LEGAL = [(a, b) for a, targets in JOB_MOVES.items() for b in sorted(targets)]  # sorted: one order in every process


def _job(status: str) -> EvaluationJob:
    return EvaluationJob.objects.create(kind="evaluate", subject_id=1, status=status, max_tries=3)


def test_every_status_has_a_row_and_final_ones_lead_nowhere():
    assert set(JOB_MOVES) == set(JobStatus.values)
    for final in (JobStatus.SUCCEEDED, JobStatus.DEAD, JobStatus.DISCARDED):
        assert JOB_MOVES[final] == set()


@pytest.mark.django_db
@pytest.mark.parametrize(("source", "target"), ILLEGAL)
def test_an_illegal_job_move_is_refused_counted_and_leaves_the_row_as_it_was(source, target):
    job = _job(source)
    before = EvaluationJob.objects.filter(pk=job.pk).values().get()
    labels = {"entity": "job", "from": source, "to": target}
    counted = counter_value("interviewprep_invalid_transitions_total", labels)
    with pytest.raises(IllegalTransition), transaction.atomic():
        locked = EvaluationJob.objects.select_for_update().get(pk=job.pk)
        job_transition(locked, target, last_error="should not stay")
    assert EvaluationJob.objects.filter(pk=job.pk).values().get() == before
    assert counter_value("interviewprep_invalid_transitions_total", labels) == counted + 1


@pytest.mark.django_db
@pytest.mark.parametrize(("source", "target"), LEGAL)
def test_a_legal_job_move_saves_the_status_and_the_other_fields_together(source, target):
    job = _job(source)
    with transaction.atomic():
        locked = EvaluationJob.objects.select_for_update().get(pk=job.pk)
        job_transition(locked, target, last_error="noted")
    job.refresh_from_db()
    assert (job.status, job.last_error) == (target, "noted")
