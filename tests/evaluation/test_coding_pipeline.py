"""Candidate code through the real pipeline: an attack ends contained, the worker lives on, and
the next submission is scored normally."""

import os
import signal
import uuid
from pathlib import Path

import pytest
from django.core.management import call_command

from attempts.models import Attempt, Question, Result
from attempts.services.attempts import submission_create
from evaluation.models import EvaluationJob, JobTry
from tests.factories import AttemptFactory
from tests.processes import wait_for

FORK_BOMB = """
import os
def brackets_balanced(text):
    while True:
        os.fork()
"""
NETWORK = """
import socket
def brackets_balanced(text):
    socket.create_connection(("127.0.0.1", 5432), timeout=1)
    return True
"""
GOOD = """
def brackets_balanced(text):
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    for ch in text:
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs:
            if not stack or stack.pop() != pairs[ch]:
                return False
    return not stack
"""


@pytest.mark.parametrize("attack", [FORK_BOMB, NETWORK], ids=["fork-bomb", "network"])
def test_attack_is_contained_and_the_next_submission_is_scored(workers, api_client_for, attack, assert_invariants):
    call_command("load_questions", verbosity=0)
    worker = workers(concurrency=1)
    question = Question.objects.get(slug="brackets-balanced")
    from tests.factories import UserFactory

    user = UserFactory()
    client = api_client_for(user)
    attempt_id = client.post("/api/v1/attempts/", {"question_id": question.pk}, format="json").json()["id"]

    def submit(answer):
        response = client.post(
            f"/api/v1/attempts/{attempt_id}/submissions/",
            {"answer": answer},
            format="json",
            HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex,
        )
        assert response.status_code == 202
        submission_id = response.json()["submission_id"]
        return wait_for(lambda: Result.objects.filter(submission_id=submission_id).first(), timeout=60)

    bad = submit(attack)
    assert bad.score < bad.max_score
    assert all(test["outcome"] != "passed" for test in bad.details["tests"])
    assert bad.details["load_error"] is None
    assert worker.proc.poll() is None
    good = submit(GOOD)
    assert good.score == good.max_score == 100
    assert Attempt.objects.get(pk=attempt_id).status == "completed"
    assert worker.proc.poll() is None
    assert_invariants()


# About two seconds of g++'s constant evaluation: long enough to be caught compiling.
SLOW_TO_COMPILE = """
constexpr long long slowConstant() {
    long long s = 0;
    for (int i = 0; i < 120000; ++i)
        for (int j = 0; j < 10; ++j) s += (i ^ j) & 1;
    return s;
}
static_assert(slowConstant() > 0, "computed while compiling");

long long sumOfList(const vector<long long>& numbers) {
    long long total = 0;
    for (long long n : numbers) total += n;
    return total;
}
"""


def _descendants(pid: int) -> list[int]:
    try:
        children = [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (FileNotFoundError, ProcessLookupError):
        return []
    return children + [d for child in children for d in _descendants(child)]


def _compiling_under(pid: int) -> bool:
    """g++'s compiler proper is running in a box started by `pid` (not by anything else here)."""
    for descendant in _descendants(pid):
        try:
            if Path(f"/proc/{descendant}/comm").read_text().strip() == "cc1plus":
                return True
        except (FileNotFoundError, ProcessLookupError):
            continue
    return False


def test_worker_killed_during_a_cpp_compile_still_ends_in_exactly_one_result(workers, relay, assert_invariants):
    call_command("load_questions", verbosity=0)
    worker = workers(concurrency=1)
    question = Question.objects.get(slug="sum-of-list")
    attempt = AttemptFactory(question=question)
    # Text never compiled before: a compiled answer is kept by the hash of its sources.
    answer = f"{SLOW_TO_COMPILE}// {uuid.uuid4()}\n"
    submission = submission_create(user=attempt.user, attempt_id=attempt.pk, answer=answer, language="cpp")
    wait_for(lambda: len(worker.children()) == 1, timeout=30, message="the worker's child")
    (child,) = worker.children()
    wait_for(lambda: _compiling_under(child), timeout=60, interval=0.01, message="g++ compiling the answer")
    os.kill(child, signal.SIGKILL)
    result = wait_for(lambda: Result.objects.filter(submission_id=submission.pk).first(), timeout=120)
    assert result.score == 100, result.feedback
    assert result.details["language"]["id"] == "cpp"
    assert Result.objects.filter(submission_id=submission.pk).count() == 1
    job = EvaluationJob.objects.get(kind="evaluate", subject_id=submission.pk)
    outcomes = list(JobTry.objects.filter(job=job).order_by("number").values_list("outcome", flat=True))
    assert outcomes == [JobTry.Outcome.ABANDONED, JobTry.Outcome.SUCCEEDED]
    assert Attempt.objects.get(pk=attempt.pk).status == "completed"
    assert_invariants()
