"""evaluation_degraded: why evaluation is slow, in a candidate's words, from the numbers the
admission check refuses submits on."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from django.conf import settings
from django.test import override_settings

from attempts.services import admission
from attempts.services.admission import EVALUATION_BEHIND, GRADER_FAILING, evaluation_degraded
from evaluation.breaker import remote_model_breaker
from evaluation.models import EvaluationJob, JobStatus

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_backlog_count() -> Iterator[None]:
    # The backlog is counted at most once a second per process: not across tests.
    admission.queue_backlog_forget()
    yield
    admission.queue_backlog_forget()


def _waiting_jobs(n: int) -> None:
    for subject in range(n):
        EvaluationJob.objects.create(kind="evaluate", subject_id=subject, status=JobStatus.QUEUED, max_tries=3)


def _limit(n: int):
    return override_settings(CONFIG=replace(settings.CONFIG, evaluate_queue_limit=n))


def _open_the_breaker() -> None:
    breaker = remote_model_breaker()
    for _ in range(breaker.failure_threshold):
        breaker.record_failure()
    assert breaker.state() == "open"


def test_nothing_to_say_when_evaluation_keeps_up():
    _waiting_jobs(2)
    with _limit(3):
        assert evaluation_degraded() is None
        assert evaluation_degraded(evaluator="remote") is None


def test_a_backlog_at_its_limit_is_said_for_every_answer():
    _waiting_jobs(3)
    with _limit(3):
        assert evaluation_degraded() == EVALUATION_BEHIND
        assert evaluation_degraded(evaluator="code") == EVALUATION_BEHIND


def test_no_limit_no_backlog_message():
    _waiting_jobs(3)
    with _limit(0):
        assert evaluation_degraded() is None


def test_an_open_breaker_is_said_for_answers_the_remote_model_grades():
    _open_the_breaker()
    assert evaluation_degraded() == GRADER_FAILING
    assert evaluation_degraded(evaluator="remote") == GRADER_FAILING
    assert evaluation_degraded(evaluator="code") is None


def test_it_says_the_same_as_the_admission_check_refuses():
    """Degraded exactly when a submit of the same answer is refused."""
    from interviewprep.errors import Overloaded

    _waiting_jobs(3)
    for limit, evaluator, breaker_open in [(3, "code", False), (4, "code", False), (4, "remote", True)]:
        admission.queue_backlog_forget()
        remote_model_breaker().reset()
        if breaker_open:
            _open_the_breaker()
        with _limit(limit):
            try:
                admission.admission_check(kind="evaluate", evaluator=evaluator)
                refused = False
            except Overloaded:
                refused = True
            assert (evaluation_degraded(evaluator=evaluator) is not None) == refused
