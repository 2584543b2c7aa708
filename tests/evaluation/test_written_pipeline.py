"""Written answers through the real pipeline: a worker process grades them, a refusal completes
the attempt with outcome "not_scored" and no score, and every result says its outcome."""

from __future__ import annotations

import uuid

from attempts.models import Result
from tests.evaluation import written_questions as W
from tests.factories import AttemptFactory, QuestionFactory
from tests.processes import wait_for


def _submit_and_wait(client, attempt, answer: str) -> dict:
    response = client.post(
        f"/api/v1/attempts/{attempt.pk}/submissions/",
        {"answer": answer},
        format="json",
        HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex,
    )
    assert response.status_code == 202, response.content
    accepted = response.json()
    wait_for(lambda: Result.objects.filter(submission_id=accepted["submission_id"]).exists(), timeout=60)
    return client.get(f"/api/v1/attempts/{attempt.pk}/", {"min_version": accepted["version"]}).json()


def _written_attempt():
    question = QuestionFactory(evaluator="rubric", prompt=W.PROMPT, evaluation_spec=W.SPEC)
    return AttemptFactory(question=question)


def test_a_written_answer_is_scored_by_a_worker_with_evidence(workers, api_client_for, assert_invariants) -> None:
    workers()
    attempt = _written_attempt()
    body = _submit_and_wait(api_client_for(attempt.user), attempt, W.STRONG)
    result = body["result"]
    assert body["status"] == "completed"
    assert (result["outcome"], result["reason"], result["score"]) == ("scored", None, 100)
    assert result["details"]["grader"]["model"] == "all-MiniLM-L6-v2"
    assert all(quoted in W.STRONG for c in result["details"]["criteria"] for quoted in c["evidence"])
    assert_invariants()


def test_an_off_topic_answer_completes_not_scored_and_says_why(workers, api_client_for, assert_invariants) -> None:
    workers()
    attempt = _written_attempt()
    body = _submit_and_wait(api_client_for(attempt.user), attempt, W.OFF_TOPIC)
    result = body["result"]
    assert body["status"] == "completed"
    assert (result["outcome"], result["reason"], result["score"]) == ("not_scored", "off_topic", None)
    assert "not seem to be about this question" in result["feedback"]
    row = Result.objects.get(submission_id=body["latest_submission_id"])
    assert (row.outcome, row.reason, row.score) == ("not_scored", "off_topic", None)
    assert_invariants()


def test_an_instant_result_says_it_was_scored(workers, api_client_for) -> None:
    workers()
    attempt = AttemptFactory()
    body = _submit_and_wait(api_client_for(attempt.user), attempt, "score=40")
    assert (body["result"]["outcome"], body["result"]["reason"], body["result"]["score"]) == ("scored", None, 40)
