"""Regrading after a question changes: what a load records, the start staff make, and what each
regrade job writes under the fence.

A regrade re-evaluates a scored latest submission with its question's current tests or rubric,
through the evaluate handler's evaluator path, on a queue of its own. Its result replaces the
old one in place (same row, same time), so the history, the best score and the review schedule,
all replayed from the results, see the new score at the time the answer was given: never as a
review of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from attempts.models import (
    Attempt,
    AttemptStatus,
    Question,
    QuestionChange,
    QuestionKind,
    Regrade,
    RegradeStatus,
    Result,
    ResultOutcome,
)
from attempts.selectors.history import percent_of, solves
from attempts.selectors.regrades import REGRADE, regrade_candidates
from attempts.services.transitions import attempt_renew
from evaluation.jobs import job_enqueue
from interviewprep.errors import NotFound

# What the candidate is told changed, per part, in this order.
_PART_WORDS = {"tests": "hidden tests", "rubric": "rubric", "reference": "reference answer"}


def question_change_parts(*, question: Question, changed: list[str]) -> list[str]:
    """Which parts that grade answers a load changed: "tests" (a coding question's
    evaluation_spec), "rubric" (a written one's) and "reference" (the reference answer)."""
    parts = []
    if "evaluation_spec" in changed:
        parts.append("tests" if question.kind == QuestionKind.CODING else "rubric")
    if "reference_answer" in changed:
        parts.append("reference")
    return parts


def question_change_summary(parts: list[str]) -> str:
    words = [_PART_WORDS[part] for part in _PART_WORDS if part in parts]
    joined = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
    return f"the question's {joined} changed"


def question_change_record(*, question: Question, changed: list[str]) -> QuestionChange | None:
    """Inside the loader's transaction, the question's row locked and `changed` the fields its
    load really changed: a change row when they include what grades answers, else None."""
    parts = question_change_parts(question=question, changed=changed)
    if not parts:
        return None
    return QuestionChange.objects.create(question=question, fields=parts, summary=question_change_summary(parts))


@dataclass(frozen=True)
class RegradeStart:
    change: QuestionChange
    jobs: int  # made by this start: 0 when the change's regrade was started already
    regrades: int  # the change's regrades in all
    first: bool  # this call started it


def question_change_latest(*, slug: str) -> QuestionChange:
    change = QuestionChange.objects.filter(question__slug=slug).order_by("-created_at", "-id").first()
    if change is None:
        raise NotFound(f"The question {slug!r} has no change to regrade for.")
    return change


def regrade_start(*, change_id: int, user) -> RegradeStart:
    """One regrade and its job per scored latest submission the change would touch, once: the
    change's row is locked and stamped by the first start, and a second start makes nothing."""
    with transaction.atomic():
        change = QuestionChange.objects.select_for_update().filter(pk=change_id).first()
        if change is None:
            raise NotFound(f"There is no question change {change_id}.")
        if change.regrade_started_at is not None:
            return RegradeStart(change=change, jobs=0, regrades=change.regrades.count(), first=False)
        regrades = Regrade.objects.bulk_create(
            Regrade(
                change=change,
                submission_id=submission_id,
                previous_outcome=outcome,
                previous_score=score,
                previous_max_score=max_score,
            )
            for submission_id, outcome, score, max_score in regrade_candidates(change=change).values_list(
                "pk", "result__outcome", "result__score", "result__max_score"
            )
        )
        for regrade in regrades:
            job_enqueue(kind=REGRADE, subject_id=regrade.pk, correlation_id=f"regrade:{change.pk}")
        change.regrade_started_at = timezone.now()
        change.regrade_started_by = user
        change.save(update_fields=["regrade_started_at", "regrade_started_by"])
    return RegradeStart(change=change, jobs=len(regrades), regrades=len(regrades), first=True)


def regrade_lock(*, regrade_id: int) -> Regrade:
    """Inside the caller's transaction: the regrade with its change, submission, attempt,
    question and result, the attempt's row locked first (as every path locks it), then the
    regrade's."""
    attempt_id = Regrade.objects.filter(pk=regrade_id).values_list("submission__attempt_id", flat=True).get()
    Attempt.objects.select_for_update().filter(pk=attempt_id).values_list("pk").get()
    return (
        Regrade.objects.select_related("change", "submission__attempt__question", "submission__result")
        .select_for_update(of=("self",))
        .get(pk=regrade_id)
    )


def regrade_superseded(regrade: Regrade) -> bool:
    """The attempt moved on from the regraded submission: a newer one is its latest, or it is
    no longer completed with it."""
    attempt = regrade.submission.attempt
    return attempt.latest_submission_id != regrade.submission_id or attempt.status != AttemptStatus.COMPLETED


def _finish(regrade: Regrade, status: str, **fields: Any) -> None:
    for name, value in fields.items():
        setattr(regrade, name, value)
    regrade.status = status
    regrade.finished_at = timezone.now()
    regrade.save(update_fields=["status", "finished_at", *fields])


def regrade_record(
    *,
    regrade: Regrade,
    score: float | None,
    max_score: float,
    feedback: str,
    details: dict,
    actor: str,
    outcome: str = ResultOutcome.SCORED,
    reason: str = "",
) -> Result | None:
    """Inside the fenced transaction (regrade_lock's locks held): the new evaluation replaces
    the submission's result when it is still its attempt's latest and its score changed. The
    attempt then moves to a new version (cache restamped, waiters told) and the result points at
    the regrade, which keeps the old score. Returns the replaced result; None when nothing the
    candidate sees changed (the same score: recorded as checked; or superseded)."""
    if regrade_superseded(regrade):
        _finish(regrade, RegradeStatus.SUPERSEDED)
        return None
    submission = regrade.submission
    attempt = submission.attempt
    result = submission.result
    verdict = {"outcome": outcome, "score": score, "max_score": max_score}
    before = {"outcome": result.outcome, "score": result.score, "max_score": result.max_score}
    if verdict == before:
        # The score the candidate saw stands, with its feedback: nothing shown changes.
        _finish(regrade, RegradeStatus.UNCHANGED, **verdict)
        return None
    _finish(regrade, RegradeStatus.CHANGED, **verdict, **{f"previous_{name}": value for name, value in before.items()})
    result.outcome, result.score, result.max_score = outcome, score, max_score
    result.reason, result.feedback, result.details = reason, feedback, details
    result.regrade = regrade
    result.save(update_fields=["outcome", "score", "max_score", "reason", "feedback", "details", "regrade"])
    changes: dict[str, Any] = {}
    if attempt.solved_at is None and outcome == ResultOutcome.SCORED and solves(percent_of(score, max_score)):
        changes["solved_at"] = timezone.now()  # the reference answer opens
    attempt_renew(attempt, actor=actor, reason=f"regrade {regrade.pk}: {regrade.change.summary}", changes=changes)
    return result


def regrade_mark_failed(*, regrade: Regrade) -> None:
    """Its job was dead-lettered: the regrade failed, and the submission's result stands."""
    _finish(regrade, RegradeStatus.FAILED)


def regrade_requeue(*, regrade: Regrade) -> None:
    """Staff replay its dead letter: it waits for its job again."""
    regrade.status = RegradeStatus.WAITING
    regrade.finished_at = None
    regrade.save(update_fields=["status", "finished_at"])
