"""What one regrade job writes, run in this process with the instant evaluator (which scores
what the answer asks for): the same score is recorded as checked and shows nothing; a failing
regrade leaves the candidate's result and attempt as they were."""

from __future__ import annotations

import pytest

from attempts.models import Attempt, Regrade, Result
from attempts.selectors.payloads import attempt_payload_from_db
from attempts.services.regrades import regrade_start
from evaluation.jobs import job_run
from evaluation.models import DeadLetter, EvaluationJob
from tests.attempts.regrade_helpers import grading_changed, scored_attempt
from tests.factories import QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db


def _regrade(answer: str, *, score: float = 60) -> tuple[Attempt, str]:
    question = QuestionFactory()
    attempt = scored_attempt(question, score=score, answer=answer)
    regrade_start(change_id=grading_changed(question).pk, user=UserFactory(is_staff=True))
    outcome = ""
    for _ in range(10):  # a transient failure is retried: the job's own tries, run here
        job = EvaluationJob.objects.get(kind="regrade")
        EvaluationJob.objects.filter(pk=job.pk).update(next_retry_at=None)
        outcome = job_run(job_id=job.pk, worker="test")
        if outcome in ("succeeded", "discarded", "dead"):
            break
    return attempt, outcome


def test_the_same_score_is_recorded_as_checked_and_changes_nothing_shown():
    attempt, outcome = _regrade("score=60")
    assert outcome == "succeeded"
    regrade = Regrade.objects.get()
    assert (regrade.status, regrade.previous_score, regrade.score) == ("unchanged", 60, 60)
    assert regrade.finished_at is not None
    result = Result.objects.get(submission_id=attempt.latest_submission_id)
    assert (result.score, result.feedback, result.regrade_id) == (60, "graded", None)
    assert Attempt.objects.get(pk=attempt.pk).version == attempt.version
    assert attempt_payload_from_db(attempt_id=attempt.pk)["result"]["score_change"] is None


def test_a_changed_score_names_the_old_one_in_the_payload():
    attempt, outcome = _regrade("score=80")
    assert outcome == "succeeded"
    payload = attempt_payload_from_db(attempt_id=attempt.pk)
    assert payload["version"] == attempt.version + 1
    assert payload["result"]["score"] == 80
    assert payload["result"]["score_change"]["previous_score"] == 60
    assert payload["result"]["score_change"]["reason"] == "the question's rubric changed"


def test_a_regrade_that_fails_for_good_leaves_the_candidates_result_and_attempt_alone():
    attempt, outcome = _regrade("permanent")
    assert outcome == "dead"
    assert Regrade.objects.get().status == "failed"
    assert DeadLetter.objects.get().context["question_change_id"] == Regrade.objects.get().change_id
    after = Attempt.objects.get(pk=attempt.pk)
    assert (after.status, after.version) == ("completed", attempt.version)
    assert Result.objects.get(submission_id=attempt.latest_submission_id).score == 60
