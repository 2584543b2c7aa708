"""Reads of question changes and their regrades: which submissions a regrade would touch, how
far one has gone, and what a candidate is told of a changed score."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, F, QuerySet

from attempts.models import AttemptStatus, QuestionChange, Regrade, RegradeStatus, Result, Submission
from evaluation.jobs import jobs_status_counts

# The job kind that regrades one submission for one change (its handler: attempts/jobs_regrade.py).
REGRADE = "regrade"


def regrade_candidates(*, change: QuestionChange) -> QuerySet[Submission]:
    """The scored latest submissions of the change's question, scored before the change: what a
    regrade of it touches. Only an attempt's latest submission shows a result, so only those."""
    return Submission.objects.filter(
        attempt__question_id=change.question_id,
        attempt__status=AttemptStatus.COMPLETED,
        attempt__latest_submission_id=F("id"),
        result__created_at__lt=change.created_at,
    )


@dataclass(frozen=True)
class RegradeProgress:
    """How far a change's regrade has gone: its regrades by verdict and their jobs by status."""

    regrades: int
    verdicts: dict[str, int] = field(default_factory=dict)
    jobs: dict[str, int] = field(default_factory=dict)

    @property
    def done(self) -> int:
        """Regrades whose job is over, whatever it ended with."""
        return sum(count for status, count in self.jobs.items() if status in ("succeeded", "discarded", "dead"))


def regrade_progress(*, change: QuestionChange) -> RegradeProgress:
    verdicts = dict(
        Regrade.objects.filter(change=change).values_list("status").annotate(n=Count("id")).values_list("status", "n")
    )
    ids = list(Regrade.objects.filter(change=change).values_list("pk", flat=True))
    return RegradeProgress(
        regrades=len(ids),
        verdicts={status: verdicts.get(status, 0) for status in RegradeStatus.values},
        jobs=jobs_status_counts(kind=REGRADE, subject_ids=ids),
    )


def score_change_payload(result: Result) -> dict | None:
    """What the candidate is told of a regrade that changed this result's score, or None."""
    if result.regrade_id is None:
        return None
    # The job's own write has it in hand; a read of a stored result fetches it, with its change.
    regrade = (
        result.regrade
        if Result.regrade.is_cached(result)
        else Regrade.objects.select_related("change").get(pk=result.regrade_id)
    )
    return {
        "previous_outcome": regrade.previous_outcome,
        "previous_score": regrade.previous_score,
        "previous_max_score": regrade.previous_max_score,
        "changed_at": regrade.finished_at.isoformat() if regrade.finished_at else None,
        "reason": regrade.change.summary,
    }
