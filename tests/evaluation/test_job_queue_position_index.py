"""The queue-position count reads the partial index on waiting jobs, whatever the number of
finished jobs beside them: shown by PostgreSQL's own plan, on enough rows, after ANALYZE."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evaluation.jobs import job_queue_position
from evaluation.models import EvaluationJob, JobStatus

pytestmark = pytest.mark.django_db


def _plan(sql: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}")
        return "\n".join(row[0] for row in cursor.fetchall())


def test_the_count_of_jobs_ahead_uses_the_waiting_jobs_index():
    finished = [
        EvaluationJob(kind="evaluate", subject_id=n, status=JobStatus.SUCCEEDED, max_tries=3) for n in range(20_000)
    ]
    EvaluationJob.objects.bulk_create(finished, batch_size=5_000)
    waiting = [
        EvaluationJob(kind="evaluate", subject_id=100_000 + n, status=JobStatus.QUEUED, max_tries=3) for n in range(50)
    ]
    EvaluationJob.objects.bulk_create(waiting)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE evaluation_evaluationjob")

    with CaptureQueriesContext(connection) as queries:
        assert job_queue_position(kind="evaluate", subject_id=100_049).position == 50
    # The count of the jobs made before it: the one whose cost grows with the table.
    ahead = [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper() and '"id" <' in q["sql"]]
    assert len(ahead) == 1, [q["sql"] for q in queries.captured_queries]
    plan = _plan(ahead[0])
    assert "job_waiting_kind" in plan, plan
