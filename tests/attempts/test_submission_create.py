"""Promise 1: one user action is one submission, however many identical requests arrive."""

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from attempts.models import Attempt, AttemptStatus, IdempotencyRecord, StateChange, Submission, SubmissionStatus
from evaluation.models import EvaluationJob, Outbox
from tests.factories import AttemptFactory, UserFactory

# The token comes from the cache. Finished-key read, key insert, attempt lock, backlog count,
# submission, older ones read, then one statement for their superseding, the attempt's update
# and the state changes (interviewprep/writes.py), job, outbox row, NOTIFY, response stored, and
# the savepoints of the test's own transaction: a query more here should be a decision.
FRESH_SUBMIT_QUERIES = 14


def submit(client, attempt_id, answer="print(1)", key=None, **extra):
    headers = {} if key is False else {"HTTP_IDEMPOTENCY_KEY": key or uuid.uuid4().hex}
    return client.post(
        f"/api/v1/attempts/{attempt_id}/submissions/", {"answer": answer}, format="json", **headers, **extra
    )


@pytest.mark.django_db
def test_repeated_key_returns_first_response_byte_for_byte(api_client_for):
    attempt = AttemptFactory()
    client = api_client_for(attempt.user)
    first = submit(client, attempt.pk, key="k-1")
    second = submit(client, attempt.pk, key="k-1")
    assert first.status_code == 202
    assert second.status_code == 202
    assert second.content == first.content
    assert second["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first
    assert Submission.objects.filter(attempt=attempt).count() == 1
    body = first.json()
    attempt.refresh_from_db()
    assert body == {
        "attempt_id": attempt.pk,
        "submission_id": attempt.latest_submission_id,
        "language": "python",
        "status": "queued",
        "version": attempt.version,
    }
    assert attempt.status == AttemptStatus.QUEUED


@pytest.mark.django_db
def test_same_key_with_another_body_is_refused_and_changes_nothing(api_client_for):
    attempt = AttemptFactory()
    client = api_client_for(attempt.user)
    submit(client, attempt.pk, answer="a", key="k-2")
    attempt.refresh_from_db()
    version = attempt.version
    response = submit(client, attempt.pk, answer="b", key="k-2")
    assert response.status_code == 422
    assert response["Content-Type"] == "application/problem+json"
    assert "different request" in response.json()["detail"]
    attempt.refresh_from_db()
    assert attempt.version == version
    assert Submission.objects.count() == 1


@pytest.mark.django_db
def test_same_key_from_another_user_is_independent(api_client_for):
    mine, theirs = AttemptFactory(), AttemptFactory()
    a = submit(api_client_for(mine.user), mine.pk, key="shared")
    b = submit(api_client_for(theirs.user), theirs.pk, key="shared")
    assert a.status_code == b.status_code == 202
    assert a.json()["submission_id"] != b.json()["submission_id"]
    assert "Idempotent-Replayed" not in b


@pytest.mark.django_db
@pytest.mark.parametrize("key", [False, "", "has space", "x" * 256, "tab\there", "é"])
def test_missing_or_malformed_key_is_400_and_writes_nothing(api_client_for, key):
    attempt = AttemptFactory()
    response = submit(api_client_for(attempt.user), attempt.pk, key=key if key != "" else False)
    assert response.status_code == 400
    assert response.json()["status"] == 400
    assert "Idempotency-Key" in response.json()["detail"]
    assert not Submission.objects.exists()
    assert not IdempotencyRecord.objects.exists()


@pytest.mark.django_db
def test_answer_over_64_kib_is_413_and_writes_nothing(api_client_for):
    attempt = AttemptFactory()
    client = api_client_for(attempt.user)
    assert submit(client, attempt.pk, answer="x" * 65536).status_code == 202
    response = submit(client, attempt.pk, answer="x" * 65537)
    assert response.status_code == 413
    assert "65536" in response.json()["detail"]
    huge = submit(client, attempt.pk, answer="x" * 400_000)
    assert huge.status_code == 413
    assert Submission.objects.count() == 1
    assert IdempotencyRecord.objects.count() == 1


@pytest.mark.django_db
def test_another_users_attempt_is_indistinguishable_from_a_missing_one(api_client_for):
    attempt = AttemptFactory()
    stranger = api_client_for(UserFactory())
    theirs = submit(stranger, attempt.pk, key="k")
    missing = submit(stranger, 999_999, key="k")
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json()["title"] == missing.json()["title"]
    assert stranger.get(f"/api/v1/attempts/{attempt.pk}/").status_code == 404
    assert stranger.get(f"/api/v1/attempts/{attempt.pk}/submissions/").status_code == 404
    assert not Submission.objects.exists()
    assert not IdempotencyRecord.objects.exists()


@pytest.mark.django_db
def test_malformed_json_and_fields_are_400(api_client_for):
    attempt = AttemptFactory()
    client = api_client_for(attempt.user)
    url = f"/api/v1/attempts/{attempt.pk}/submissions/"
    bad_json = client.post(url, data=b"{not json", content_type="application/json", HTTP_IDEMPOTENCY_KEY="k1")
    assert bad_json.status_code == 400
    assert bad_json["Content-Type"] == "application/problem+json"
    wrong_type = client.post(url, {"answer": 5}, format="json", HTTP_IDEMPOTENCY_KEY="k2")
    assert wrong_type.status_code == 400
    missing = client.post(url, {}, format="json", HTTP_IDEMPOTENCY_KEY="k3")
    assert missing.status_code == 400
    assert "answer" in missing.json()["errors"]
    not_object = client.post(url, [1, 2], format="json", HTTP_IDEMPOTENCY_KEY="k4")
    assert not_object.status_code == 400
    assert not Submission.objects.exists()


@pytest.mark.django_db
def test_unauthenticated_submit_is_401():
    attempt = AttemptFactory()
    response = submit(APIClient(), attempt.pk)
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"


@pytest.mark.django_db
def test_submit_writes_submission_job_outbox_and_history_in_one_go(api_client_for):
    attempt = AttemptFactory()
    response = submit(api_client_for(attempt.user), attempt.pk)
    submission = Submission.objects.get()
    job = EvaluationJob.objects.get()
    assert (job.kind, job.subject_id) == ("evaluate", submission.pk)
    assert submission.pk == response.json()["submission_id"]
    assert Outbox.objects.filter(job=job).count() == 1
    change = StateChange.objects.get(entity="attempt")
    assert (change.from_status, change.to_status) == ("draft", "queued")


def _submit_queries(ctx) -> list[str]:
    # The token's lookup is the token cache's: a cache read that times out on a loaded machine
    # falls back to one query of the token, which is not the submit's. Nor is the backlog's count,
    # made at most once a second per process (attempts/services/admission.py): on a loaded
    # machine the second submit here can come after that second.
    return [
        q["sql"]
        for q in ctx.captured_queries
        if '"authtoken_token"' not in q["sql"]
        and not q["sql"].startswith('SELECT COUNT(*) AS "__count" FROM "evaluation_evaluationjob"')
    ]


@pytest.mark.django_db
def test_submit_issues_a_fixed_small_number_of_queries(api_client_for):
    attempt = AttemptFactory()
    client = api_client_for(attempt.user)
    submit(client, attempt.pk)  # a previous submission, so the superseding runs too
    with CaptureQueriesContext(connection) as ctx:
        assert submit(client, attempt.pk).status_code == 202
    assert len(_submit_queries(ctx)) == FRESH_SUBMIT_QUERIES, _submit_queries(ctx)
    submit(client, attempt.pk, key="replayed")
    # a finished key is answered from one read, without a transaction or a lock
    with CaptureQueriesContext(connection) as ctx:
        response = submit(client, attempt.pk, key="replayed")
    assert len(_submit_queries(ctx)) == 1, _submit_queries(ctx)
    assert response["Idempotent-Replayed"] == "true"


def _threaded_submits(attempt_id, token, keys_and_answers, barrier):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    results = []
    try:
        for key, answer in keys_and_answers:
            barrier.wait()
            response = submit(client, attempt_id, answer=answer, key=key)
            results.append((response.status_code, response.content))
    finally:
        connection.close()
    return results


@pytest.mark.django_db(transaction=True)
def test_fifty_identical_concurrent_submits_make_one_submission_over_many_rounds():
    from rest_framework.authtoken.models import Token

    attempt = AttemptFactory()
    token = Token.objects.create(user=attempt.user).key
    threads, rounds = 50, 100
    keys = [uuid.uuid4().hex for _ in range(rounds)]
    barrier = threading.Barrier(threads)
    with ThreadPoolExecutor(threads) as pool:
        futures = [
            pool.submit(_threaded_submits, attempt.pk, token, [(k, f"answer {k}") for k in keys], barrier)
            for _ in range(threads)
        ]
        per_thread = [f.result() for f in futures]
    for round_index in range(rounds):
        answers = {per_thread[t][round_index] for t in range(threads)}
        assert len(answers) == 1, f"round {round_index}: {len(answers)} different answers"
        status_code, body = answers.pop()
        assert status_code == 202
    assert Submission.objects.filter(attempt=attempt).count() == rounds
    assert EvaluationJob.objects.count() == rounds
    assert Outbox.objects.count() == rounds
    attempt.refresh_from_db()
    latest = Submission.objects.filter(attempt=attempt, status=SubmissionStatus.QUEUED)
    assert list(latest.values_list("pk", flat=True)) == [attempt.latest_submission_id]
    assert Submission.objects.filter(status=SubmissionStatus.SUPERSEDED).count() == rounds - 1


@pytest.mark.django_db(transaction=True)
def test_two_different_submits_racing_on_one_attempt_both_stored_one_latest():
    from rest_framework.authtoken.models import Token

    for _ in range(20):
        attempt = AttemptFactory()
        token = Token.objects.create(user=attempt.user).key
        barrier = threading.Barrier(2)
        with ThreadPoolExecutor(2) as pool:
            futures = [
                pool.submit(_threaded_submits, attempt.pk, token, [(uuid.uuid4().hex, f"answer {i}")], barrier)
                for i in range(2)
            ]
            results = [f.result()[0] for f in futures]
        assert [status for status, _ in results] == [202, 202]
        attempt.refresh_from_db()
        assert attempt.version == 1 + 2
        submissions = list(Submission.objects.filter(attempt=attempt))
        assert len(submissions) == 2
        statuses = sorted(s.status for s in submissions)
        assert statuses == ["queued", "superseded"]
        latest = next(s for s in submissions if s.status == "queued")
        assert attempt.latest_submission_id == latest.pk
        assert Attempt.objects.get(pk=attempt.pk).status == AttemptStatus.QUEUED


@pytest.mark.django_db
def test_creating_an_attempt_honours_an_idempotency_key_when_sent(api_client_for):
    from tests.factories import QuestionFactory

    user, question = UserFactory(), QuestionFactory()
    client = api_client_for(user)
    first = client.post("/api/v1/attempts/", {"question_id": question.pk}, format="json", HTTP_IDEMPOTENCY_KEY="a1")
    again = client.post("/api/v1/attempts/", {"question_id": question.pk}, format="json", HTTP_IDEMPOTENCY_KEY="a1")
    assert first.status_code == again.status_code == 201
    assert again.content == first.content and again["Idempotent-Replayed"] == "true"
    assert Attempt.objects.filter(user=user).count() == 1
    plain = client.post("/api/v1/attempts/", {"question_id": question.pk}, format="json")
    assert plain.status_code == 201 and plain.json()["status"] == "draft"
    assert Attempt.objects.filter(user=user).count() == 2
    assert client.post("/api/v1/attempts/", {"question_id": 999999}, format="json").status_code == 404


@pytest.mark.django_db
def test_submits_are_throttled_per_user(api_client_for, monkeypatch):
    from attempts.apis import SubmitThrottle

    monkeypatch.setattr(SubmitThrottle, "THROTTLE_RATES", {"submit": "2/min"})
    mine, theirs = AttemptFactory(), AttemptFactory()
    client = api_client_for(mine.user)
    assert [submit(client, mine.pk).status_code for _ in range(3)] == [202, 202, 429]
    refused = submit(client, mine.pk)
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert refused["Content-Type"] == "application/problem+json"
    assert Submission.objects.filter(attempt=mine).count() == 2
    assert submit(api_client_for(theirs.user), theirs.pk).status_code == 202
