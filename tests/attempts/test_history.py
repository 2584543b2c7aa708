import pytest

from attempts.models import Result, ResultOutcome, Submission, SubmissionStatus
from attempts.selectors.history import question_records_for_user, scored_answers
from tests.factories import AttemptFactory, QuestionFactory, UserFactory

pytestmark = pytest.mark.django_db


def _scored(attempt, score, outcome=ResultOutcome.SCORED, reason=""):
    submission = Submission.objects.create(attempt=attempt, answer="a", status=SubmissionStatus.COMPLETED)
    Result.objects.create(submission=submission, score=score, max_score=100, outcome=outcome, reason=reason)
    return submission


def test_best_score_never_goes_down_when_a_later_answer_scores_less():
    user = UserFactory()
    attempt = AttemptFactory(user=user)
    _scored(attempt, 100)
    _scored(attempt, 45.5)
    record = question_records_for_user(user_id=user.pk)[attempt.question_id]
    assert (record.best_percent, record.last_percent, record.scored_count) == (100.0, 45.5, 2)
    assert record.solved


def test_best_score_spans_every_attempt_of_the_question_and_only_the_users_own():
    user, other = UserFactory(), UserFactory()
    question = QuestionFactory()
    _scored(AttemptFactory(user=user, question=question), 60)
    _scored(AttemptFactory(user=user, question=question), 80)
    _scored(AttemptFactory(user=other, question=question), 100)
    record = question_records_for_user(user_id=user.pk)[question.pk]
    assert (record.best_percent, record.last_percent, record.solved) == (80.0, 80.0, False)


def test_a_not_scored_result_is_never_a_score():
    user = UserFactory()
    attempt = AttemptFactory(user=user)
    _scored(attempt, 70)
    _scored(attempt, None, outcome=ResultOutcome.NOT_SCORED, reason="off_topic")
    assert [a.percent for a in scored_answers(user_id=user.pk)] == [70.0]
    assert question_records_for_user(user_id=user.pk)[attempt.question_id].last_percent == 70.0
