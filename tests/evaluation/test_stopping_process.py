"""A job whose work breaks because its process is being stopped (Celery terminating a child, an
import cut short by the signal's SystemExit) is abandoned for the sweeper, never dead-lettered as
a permanent error (seen in the chaos drill: onnxruntime's import under a broker restart)."""

import pytest

import attempts.jobs
from evaluation.jobs import job_run
from evaluation.models import DeadLetter, EvaluationJob, JobStatus
from tests.factories import AttemptFactory
from tests.helpers import submit_via_service

pytestmark = pytest.mark.django_db(transaction=True)


def test_work_broken_by_the_process_stopping_is_not_a_permanent_failure(monkeypatch):
    _, job_id = submit_via_service(AttemptFactory(), "score=5")
    EvaluationJob.objects.filter(pk=job_id).update(status=JobStatus.QUEUED)

    def stopped_mid_import(work):
        try:
            raise SystemExit(-15)
        except SystemExit as exit_:
            raise ImportError("initialization failed") from exit_

    monkeypatch.setattr(attempts.jobs, "evaluation_run", stopped_mid_import)
    job = EvaluationJob.objects.get(pk=job_id)
    with pytest.raises(SystemExit):
        job_run(job_id=job.pk, worker="w:1", kind=job.kind, subject_id=job.subject_id)
    assert not DeadLetter.objects.exists()
    assert EvaluationJob.objects.get(pk=job_id).status == JobStatus.RUNNING  # the sweeper's to find


def test_an_import_error_of_its_own_is_still_permanent(monkeypatch):
    _, job_id = submit_via_service(AttemptFactory(), "score=5")
    EvaluationJob.objects.filter(pk=job_id).update(status=JobStatus.QUEUED)

    def broken(work):
        raise ImportError("no module named nothing")

    monkeypatch.setattr(attempts.jobs, "evaluation_run", broken)
    job = EvaluationJob.objects.get(pk=job_id)
    assert job_run(job_id=job.pk, worker="w:1", kind=job.kind, subject_id=job.subject_id) == "dead"
    assert DeadLetter.objects.count() == 1
