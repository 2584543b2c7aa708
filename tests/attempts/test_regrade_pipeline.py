"""Regrades through real workers: a changed score replaces the old one through the fence, the
attempt's version moves and the candidate is told why; an answer submitted meanwhile wins; the
history, best score and review schedule stay one story."""

from __future__ import annotations

import html
import re

import pytest

from attempts.cache import attempt_cached
from attempts.models import Attempt, Question, Regrade, Result, StateChange
from attempts.selectors.history import question_records_for_user, scored_answers
from attempts.selectors.reviews import review_schedule
from attempts.services.regrades import question_change_record, regrade_start
from evaluation.models import FINAL_JOB_STATUSES, EvaluationJob
from tests.factories import ADD_SPEC, AttemptFactory, CodingQuestionFactory, UserFactory
from tests.helpers import submit_via_service
from tests.processes import wait_for

# Passes the two visible tests and fails the hidden one (a big first argument).
PARTLY = "def add(a, b):\n    return a + b if a < 1000 else 0\n"
# The hidden test the change brings: small numbers, which PARTLY adds right.
NEW_SPEC = {**ADD_SPEC, "tests": [*ADD_SPEC["tests"][:2], {"name": "hidden small", "args": [5, 5], "expected": 10}]}
REASON = "the question's hidden tests changed"


def _result(submission_id: int, timeout: float = 90) -> Result:
    return wait_for(lambda: Result.objects.filter(submission_id=submission_id).first(), timeout=timeout)


def _change_hidden_tests(question: Question):
    question.evaluation_spec = NEW_SPEC
    question.save(update_fields=["evaluation_spec", "updated_at"])
    # What the loader records for such a load (its own tests: tests/questions/test_question_changes.py).
    return question_change_record(question=question, changed=["evaluation_spec"])


def _regrade_job(timeout: float = 90) -> EvaluationJob:
    return wait_for(
        lambda: EvaluationJob.objects.filter(kind="regrade", status__in=FINAL_JOB_STATUSES).first(), timeout=timeout
    )


@pytest.fixture
def scored(workers):
    """A candidate's attempt at a coding question, scored below full by a real worker."""
    workers(concurrency=1, queues="evaluate,regrade")
    user = UserFactory()
    attempt = AttemptFactory(question=CodingQuestionFactory(), user=user)
    submission_id, _ = submit_via_service(attempt, PARTLY)
    before = _result(submission_id)
    assert 0 < before.score < before.max_score
    attempt.refresh_from_db()
    return attempt, before


def test_a_regrade_replaces_the_score_moves_the_version_and_says_why(scored, api_client_for, client, assert_invariants):
    attempt, before = scored
    api = api_client_for(attempt.user)
    assert api.get(f"/api/v1/attempts/{attempt.pk}/").json()["result"]["score_change"] is None
    change = _change_hidden_tests(attempt.question)

    staff = api_client_for(UserFactory(is_staff=True, is_superuser=True))
    started = staff.post(f"/api/v1/ops/questions/{attempt.question.slug}/regrade/")
    assert started.status_code == 202 and started.json()["jobs_created"] == 1
    job = _regrade_job()
    assert job.status == "succeeded"

    after = Result.objects.get(submission_id=before.submission_id)
    assert after.pk == before.pk and after.created_at == before.created_at
    assert after.score == after.max_score == 100
    regrade = Regrade.objects.get(change=change)
    assert (regrade.status, regrade.previous_score, regrade.score) == ("changed", before.score, 100)
    assert after.regrade_id == regrade.pk
    renewed = Attempt.objects.get(pk=attempt.pk)
    assert renewed.status == "completed" and renewed.version == attempt.version + 1
    assert renewed.solved_at is not None  # a full score opens the reference answer
    assert StateChange.objects.filter(
        entity="attempt", object_id=attempt.pk, from_status="completed", to_status="completed"
    ).exists()

    # The cached copy, the API and the pages all say it.
    cached = attempt_cached(attempt_id=attempt.pk, min_version=renewed.version)
    assert cached["result"]["score"] == 100 and cached["result"]["score_change"]["reason"] == REASON
    shown = api.get(f"/api/v1/attempts/{attempt.pk}/?min_version={renewed.version}").json()
    assert shown["version"] == renewed.version
    assert shown["result"]["score_change"] == {
        "previous_outcome": "scored",
        "previous_score": before.score,
        "previous_max_score": 100,
        "changed_at": regrade.finished_at.isoformat(),
        "reason": REASON,
    }
    submission = api.get(f"/api/v1/submissions/{before.submission_id}/").json()
    assert submission["result"]["score_change"]["previous_score"] == before.score
    client.force_login(attempt.user)
    page = html.unescape(client.get(f"/attempts/{attempt.pk}/").content.decode())
    old = f"{round(before.score, 2):g}/100"
    assert re.search(rf"Your score changed from {old} to 100/100 on <time[^>]*>[^<]+</time>: {REASON}\.", page)

    # One scored answer still: the regrade is no review of its own, and the best is the new score.
    records = question_records_for_user(user_id=attempt.user_id)
    record = records[attempt.question_id]
    assert (record.scored_count, record.best_percent, record.last_percent) == (1, 100.0, 100.0)
    assert record.last_scored_at == before.created_at
    [review] = review_schedule(scored_answers(user_id=attempt.user_id), active_question_ids={attempt.question_id})
    assert (review.reviews, review.best_score, review.last_score) == (1, 100.0, 100.0)
    assert_invariants()


def test_a_submission_made_while_the_regrade_waits_wins(workers, assert_invariants):
    evaluate = workers(concurrency=1, queues="evaluate")
    attempt = AttemptFactory(question=CodingQuestionFactory())
    first_id, _ = submit_via_service(attempt, PARTLY)
    first = _result(first_id)
    change = _change_hidden_tests(attempt.question)
    assert regrade_start(change_id=change.pk, user=UserFactory(is_staff=True)).jobs == 1
    # No regrade worker yet: the candidate's new answer is scored first.
    second_id, _ = submit_via_service(attempt, PARTLY + "# again\n")
    second = _result(second_id)
    evaluate.stop()
    workers(concurrency=1, queues="regrade")

    job = _regrade_job()
    assert (job.status, job.discard_reason) == ("discarded", "superseded by a newer submission")
    assert Result.objects.get(pk=first.pk).score == first.score and Result.objects.get(pk=first.pk).regrade is None
    assert Result.objects.get(pk=second.pk).score == second.score == 100
    assert Attempt.objects.get(pk=attempt.pk).latest_submission_id == second_id
    assert attempt_cached(attempt_id=attempt.pk)["result"]["score_change"] is None
    assert_invariants()


def test_a_submission_made_while_the_regrade_runs_wins_at_the_fence(workers, assert_invariants):
    workers(concurrency=1, queues="evaluate")
    attempt = AttemptFactory(question=CodingQuestionFactory())
    first_id, _ = submit_via_service(attempt, PARTLY)
    first = _result(first_id)
    change = _change_hidden_tests(attempt.question)
    # The regrade is claimed, then held before its run while the candidate submits again.
    workers(concurrency=1, queues="regrade", EVALUATOR_FAULTS="delay=4")
    regrade_start(change_id=change.pk, user=UserFactory(is_staff=True))
    wait_for(lambda: EvaluationJob.objects.filter(kind="regrade", status="running").exists(), timeout=60)
    second_id, _ = submit_via_service(attempt, PARTLY + "# again\n")
    second = _result(second_id)

    job = _regrade_job()
    assert (job.status, job.discard_reason) == ("discarded", "superseded by a newer submission")
    assert Regrade.objects.get(change=change).status == "superseded"
    assert Result.objects.get(pk=first.pk).score == first.score and Result.objects.get(pk=first.pk).regrade is None
    assert Result.objects.get(pk=second.pk).regrade is None
    assert_invariants()
