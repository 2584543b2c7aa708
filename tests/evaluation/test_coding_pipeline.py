"""Candidate code through the real pipeline: an attack ends contained, the worker lives on, and
the next submission is scored normally."""

import uuid

import pytest
from django.core.management import call_command

from attempts.models import Attempt, Question, Result
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
