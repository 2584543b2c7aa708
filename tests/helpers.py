import time

import pytest

from attempts.services.attempts import submission_create
from evaluation.models import EvaluationJob


def submit_via_service(attempt, answer: str) -> tuple[int, int]:
    """A submit through the service, as the API makes it: (submission id, its job id)."""
    submission = submission_create(user=attempt.user, attempt_id=attempt.pk, answer=answer)
    return submission.pk, job_of(submission.pk).pk


def job_of(submission_id: int) -> EvaluationJob:
    """The newest evaluation job of a submission."""
    return EvaluationJob.objects.filter(kind="evaluate", subject_id=submission_id).order_by("id").last()


class Clock:
    """Seconds that move only when the test says so."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def _every_starter_written() -> bool:
    from evaluation.languages import LANGUAGES, signature_parse
    from tests.factories import ADD_SIGNATURE

    signature = signature_parse(ADD_SIGNATURE)
    try:
        for language in LANGUAGES.values():
            language.starter(signature)
    except NotImplementedError:
        return False
    return True


# For a test that needs every language's starter: expected to fail only while an adapter's
# starter() is still unwritten on this branch, and held strictly to pass once all five are.
EVERY_STARTER_WRITTEN = _every_starter_written()
needs_every_starter = pytest.mark.xfail(
    not EVERY_STARTER_WRITTEN, reason="adapter lands from lang-* branch", raises=NotImplementedError, strict=False
)
# The same, for a test that sees the unwritten starter as a live server's 500, not an exception.
needs_every_starter_served = pytest.mark.xfail(
    not EVERY_STARTER_WRITTEN, reason="adapter lands from lang-* branch", strict=False
)


def wait_while_progressing(count, target: int, *, stall: float = 120.0, what: str = "jobs finished") -> None:
    """Until `count()` reaches `target`; fails only when it stops growing for `stall` seconds,
    so a slow machine takes longer but never fails for its speed."""
    best, best_at = -1, time.monotonic()
    while (done := count()) < target:
        if done > best:
            best, best_at = done, time.monotonic()
        assert time.monotonic() - best_at < stall, f"stuck at {done} of {target} {what}"
        time.sleep(0.5)  # a poll's pace; the deadline is the stall, not this
