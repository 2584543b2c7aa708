"""Scored attempts made directly, and a change of their question, for the regrade tests."""

from __future__ import annotations

from attempts.models import Attempt, AttemptStatus, Question, QuestionChange, Result, Submission, SubmissionStatus
from attempts.services.regrades import question_change_record
from tests.factories import AttemptFactory


def scored_attempt(question: Question, *, score: float = 60, answer: str = "score=60") -> Attempt:
    """An attempt whose latest submission is completed with a result, as an evaluation leaves it."""
    attempt = AttemptFactory(question=question)
    submission = Submission.objects.create(attempt=attempt, answer=answer, status=SubmissionStatus.COMPLETED)
    Result.objects.create(submission=submission, score=score, max_score=100, feedback="graded")
    Attempt.objects.filter(pk=attempt.pk).update(
        status=AttemptStatus.COMPLETED, latest_submission=submission, scored_submission=submission, version=3
    )
    attempt.refresh_from_db()
    return attempt


def grading_changed(question: Question) -> QuestionChange:
    """What a load that changed the question's tests or rubric records."""
    change = question_change_record(question=question, changed=["evaluation_spec"])
    assert change is not None
    return change
