"""The promises checked on live data (`manage.py check_invariants`).

Each check is one query that returns the rows breaking it; an empty answer everywhere means
every promise holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from django.db import connection
from django.utils import timezone

from evaluation.check_outcomes import check_outcome_record
from evaluation.jobs import lease_timeout, sweep_allowance


@dataclass
class Violation:
    check: str
    description: str
    rows: list[dict] = field(default_factory=list)


CHECKS: list[tuple[str, str, str]] = [
    (
        "latest_submission_belongs_to_attempt",
        "an attempt's latest submission is one of its own",
        """
        SELECT a.id AS attempt_id, a.latest_submission_id
        FROM attempts_attempt a JOIN attempts_submission s ON s.id = a.latest_submission_id
        WHERE s.attempt_id <> a.id
        """,
    ),
    (
        "one_unfinished_submission_per_attempt",
        "at most one submission of an attempt is unfinished (queued or processing), and it is the latest",
        """
        SELECT s.attempt_id, s.id AS submission_id, s.status, a.latest_submission_id
        FROM attempts_submission s JOIN attempts_attempt a ON a.id = s.attempt_id
        WHERE s.status IN ('queued', 'processing') AND s.id <> a.latest_submission_id
        """,
    ),
    (
        "result_only_for_latest_or_older",
        "results exist only for submissions that were the latest when scored: never for a superseded one",
        """
        SELECT r.id AS result_id, r.submission_id, s.status
        FROM attempts_result r JOIN attempts_submission s ON s.id = r.submission_id
        WHERE s.status <> 'completed'
        """,
    ),
    (
        "one_result_per_submission",
        "at most one result per submission",
        """
        SELECT r.submission_id, count(*) AS results
        FROM attempts_result r GROUP BY r.submission_id HAVING count(*) > 1
        """,
    ),
    (
        "completed_attempt_shows_latest_result",
        "a completed attempt's latest submission has its result",
        """
        SELECT a.id AS attempt_id, a.latest_submission_id
        FROM attempts_attempt a LEFT JOIN attempts_result r ON r.submission_id = a.latest_submission_id
        WHERE a.status = 'completed' AND r.id IS NULL
        """,
    ),
    (
        "submission_has_job",
        "every committed submission has an evaluation job",
        """
        SELECT s.id AS submission_id, s.attempt_id
        FROM attempts_submission s
        WHERE NOT EXISTS (
            SELECT 1 FROM evaluation_evaluationjob j WHERE j.kind = 'evaluate' AND j.subject_id = s.id
        )
        """,
    ),
    (
        "run_has_job",
        "every committed run has a run job",
        """
        SELECT r.id AS run_id, r.attempt_id
        FROM attempts_run r
        WHERE NOT EXISTS (
            SELECT 1 FROM evaluation_evaluationjob j WHERE j.kind = 'run' AND j.subject_id = r.id
        )
        """,
    ),
    (
        "no_running_job_without_heartbeat",
        "no job is running with a heartbeat older than the sweeper's threshold plus its interval"
        " (before that, the sweeper's next pass repairs it)",
        """
        SELECT j.id AS job_id, j.heartbeat_at, j.tries
        FROM evaluation_evaluationjob j
        WHERE j.status = 'running' AND j.heartbeat_at < %(stale_before)s
        """,
    ),
    (
        "outbox_published_in_time",
        "no outbox row stays unpublished beyond the bound after it became due, but for one waiting"
        " its turn in fair share behind its share's jobs in flight",
        """
        SELECT o.id AS outbox_id, o.job_id, o.available_at, o.publish_attempts, o.last_error
        FROM evaluation_outbox o JOIN evaluation_evaluationjob j ON j.id = o.job_id
        WHERE o.published_at IS NULL AND o.available_at < %(outbox_before)s
          AND NOT (j.share_key <> '' AND EXISTS (
              SELECT 1 FROM evaluation_evaluationjob f
              WHERE f.share_key = j.share_key AND f.kind = j.kind AND f.status IN ('queued', 'running')
          ))
        """,
    ),
    (
        "final_submission_has_final_job",
        "a completed submission's jobs are all finished",
        """
        SELECT s.id AS submission_id, j.id AS job_id, j.status
        FROM attempts_submission s
        JOIN evaluation_evaluationjob j ON j.kind = 'evaluate' AND j.subject_id = s.id
        WHERE s.status = 'completed' AND j.status IN ('running')
          AND j.heartbeat_at < %(stale_before)s
        """,
    ),
]


def invariants_check(*, outbox_bound_seconds: float = 60.0) -> list[Violation]:
    now = timezone.now()
    params = {
        "stale_before": now - timedelta(seconds=max(sweep_allowance(), lease_timeout())),
        "outbox_before": now - timedelta(seconds=outbox_bound_seconds),
    }
    violations: list[Violation] = []
    with connection.cursor() as cursor:
        for name, description, sql in CHECKS:
            cursor.execute(sql, params)
            columns = [c.name for c in cursor.description]
            rows = [dict(zip(columns, row, strict=True)) for row in cursor.fetchmany(50)]
            if rows:
                violations.append(Violation(name, description, rows))
    return violations


INVARIANTS_CHECK = "invariants"


def invariants_check_record(*, outbox_bound_seconds: float = 60.0) -> list[Violation]:
    """invariants_check, with its outcome kept for /metrics (`interviewprep_invariant_violations`)
    and the alert on it."""
    violations = invariants_check(outbox_bound_seconds=outbox_bound_seconds)
    check_outcome_record(
        name=INVARIANTS_CHECK,
        failures=len(violations),
        detail=", ".join(violation.check for violation in violations),
    )
    return violations
