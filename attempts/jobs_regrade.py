"""The regrade job's handler: one scored latest submission re-evaluated, after its question
changed, with the question's current tests or rubric. Importing this module registers it;
apps.py does once the app registry is ready.

It evaluates as the evaluate handler does (`evaluation_work`, `evaluation_run`) but moves
nothing to processing: the candidate's attempt stays completed with its score until the fenced
record replaces it. Its Redis lock is its own, not the attempt's, so a candidate's submit is
never deferred behind a regrade; the attempt's row lock and the latest-submission check at the
record decide, as the fence does for every writer.
"""

from __future__ import annotations

import logging
from typing import Any

from attempts.cache import attempt_cache_store
from attempts.jobs import Evaluation, evaluation_run, evaluation_work
from attempts.models import Regrade, RegradeStatus
from attempts.selectors.payloads import attempt_payload
from attempts.selectors.regrades import REGRADE
from attempts.services.regrades import (
    regrade_lock,
    regrade_mark_failed,
    regrade_record,
    regrade_requeue,
    regrade_superseded,
)
from evaluation.evaluators import EvaluationOutcome
from evaluation.jobs import register_handler
from interviewprep.writes import Writes

logger = logging.getLogger(__name__)

SUPERSEDED = "superseded by a newer submission"


class SubmissionRegrade:
    """Re-evaluate a submission for a question change; its new score replaces the old one only
    while it is still its attempt's latest."""

    queue = "regrade"

    def lock(self, subject_id: int) -> Regrade:
        regrade = regrade_lock(regrade_id=subject_id)
        regrade.replaced_result = None
        return regrade

    def lock_key(self, regrade: Regrade) -> str:
        return f"regrade:{regrade.pk}"

    def describe(self, regrade: Regrade) -> dict[str, Any]:
        return {
            "attempt_id": regrade.submission.attempt_id,
            "submission_id": regrade.submission_id,
            "question": regrade.submission.attempt.question.slug,
            "question_change_id": regrade.change_id,
        }

    def discard_reason(self, regrade: Regrade) -> str | None:
        if regrade.status not in (RegradeStatus.WAITING, RegradeStatus.FAILED):
            return "the regrade was recorded already"
        if regrade_superseded(regrade):
            return SUPERSEDED
        return None

    def start(self, regrade: Regrade, *, actor: str, try_number: int, writes: Writes) -> Evaluation:
        return evaluation_work(regrade.submission, try_number=try_number)

    def run(self, work: Evaluation) -> EvaluationOutcome:
        return evaluation_run(work)

    def record(self, regrade: Regrade, outcome: EvaluationOutcome, *, actor: str, writes: Writes) -> str | None:
        regrade.replaced_result = regrade_record(
            regrade=regrade,
            score=outcome.score,
            max_score=outcome.max_score,
            feedback=outcome.feedback,
            details=outcome.details,
            actor=actor,
            outcome=outcome.outcome,
            reason=outcome.reason,
        )
        return SUPERSEDED if regrade.status == RegradeStatus.SUPERSEDED else None

    def recorded(self, regrade: Regrade) -> None:
        # As after an evaluation: the committed copy into the cache, best effort.
        if regrade.replaced_result is None:
            return
        try:
            attempt_cache_store(payload=attempt_payload(regrade.submission.attempt, regrade.replaced_result))
        except Exception:  # noqa: BLE001 - the cache may lag, never lie
            logger.warning("cache write after regrade failed", exc_info=True)

    def failed(self, regrade: Regrade, *, actor: str, reason: str) -> None:
        # The candidate's submission and attempt are not the job's: they keep their result.
        regrade_mark_failed(regrade=regrade)

    def requeue(self, regrade: Regrade, *, actor: str, reason: str) -> None:
        regrade_requeue(regrade=regrade)


register_handler(REGRADE, SubmissionRegrade())
