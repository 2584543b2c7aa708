"""`GET /api/v1/attempts/{id}/?min_version=N&wait=S`: answers once the attempt reaches version N,
or after S seconds with its current state, and holds no worker thread while it waits."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test import override_settings
from rest_framework.authtoken.models import Token

from attempts.models import Attempt, AttemptStatus
from attempts.selectors.attempts import attempt_get_for_user
from attempts.services.transitions import transition
from interviewprep.api import PROBLEM_CONTENT_TYPE
from tests.factories import AttemptFactory, UserFactory
from tests.notify_helpers import ended_waits, open_waits
from tests.processes import RedisServer, wait_for
from tests.web_server import WebServer, start_web

# A wait that answered before this had not sat out its 30 s: generous, for a loaded machine.
WELL_BEFORE_30_S = 20


def _url(attempt_id: int) -> str:
    return f"/api/v1/attempts/{attempt_id}/"


def _timed_get(client, attempt_id: int, **params):
    began = time.monotonic()
    response = client.get(_url(attempt_id), params)
    return response, time.monotonic() - began


def _commit_move(attempt_id: int, to: str = AttemptStatus.QUEUED) -> int:
    """Another writer: one committed state change; returns the new version."""
    with transaction.atomic():
        attempt = Attempt.objects.select_for_update().get(pk=attempt_id)
        transition(attempt, to, actor="test:writer")
    return attempt.version


class Waiting:
    """One request on a thread of its own (its own database connection, closed at its end)."""

    def __init__(self, client, attempt_id: int, **params):
        self.response = None
        self.elapsed: float | None = None

        def run() -> None:
            try:
                self.response, self.elapsed = _timed_get(client, attempt_id, **params)
            finally:
                connection.close()

        self.thread = threading.Thread(target=run)
        self.thread.start()

    def join(self):
        self.thread.join(timeout=120)
        assert not self.thread.is_alive(), "the wait never answered"
        return self.response


@pytest.mark.django_db
def test_without_wait_the_attempt_reads_as_before(api_client_for):
    attempt = AttemptFactory()
    response = api_client_for(attempt.user).get(_url(attempt.pk), {"min_version": 0})
    assert response.status_code == 200
    assert response.json() == attempt_get_for_user(user=attempt.user, attempt_id=attempt.pk)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"wait": "5"}, "wait"),
        ({"min_version": "1", "wait": "0"}, "wait"),
        ({"min_version": "1", "wait": "-1"}, "wait"),
        ({"min_version": "1", "wait": "30.5"}, "wait"),
        ({"min_version": "1", "wait": "soon"}, "wait"),
        ({"min_version": "1", "wait": "nan"}, "wait"),
        ({"min_version": "1", "wait": "inf"}, "wait"),
        ({"min_version": "1", "wait": ""}, "wait"),
        ({"min_version": "-1", "wait": "1"}, "min_version"),
        ({"min_version": "two", "wait": "1"}, "min_version"),
    ],
)
def test_bad_wait_parameters_are_400_problems_at_once(api_client_for, params, field):
    attempt = AttemptFactory()
    response, elapsed = _timed_get(api_client_for(attempt.user), attempt.pk, **params)
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == PROBLEM_CONTENT_TYPE
    assert field in response.json()["errors"]
    assert elapsed < WELL_BEFORE_30_S


@pytest.mark.django_db
def test_a_version_already_reached_answers_at_once(api_client_for):
    attempt = AttemptFactory()
    response, elapsed = _timed_get(api_client_for(attempt.user), attempt.pk, min_version=attempt.version, wait=30)
    assert response.status_code == 200
    assert response.json()["version"] == attempt.version
    assert elapsed < WELL_BEFORE_30_S


@pytest.mark.django_db
def test_another_users_attempt_is_404_without_waiting(api_client_for):
    attempt = AttemptFactory()
    response, elapsed = _timed_get(api_client_for(UserFactory()), attempt.pk, min_version=attempt.version + 1, wait=30)
    assert response.status_code == 404
    assert elapsed < WELL_BEFORE_30_S


@pytest.mark.django_db
def test_nothing_changes_it_answers_the_current_state_after_the_wait(api_client_for):
    attempt = AttemptFactory()
    response, elapsed = _timed_get(api_client_for(attempt.user), attempt.pk, min_version=attempt.version + 1, wait=0.5)
    assert response.status_code == 200
    assert response.json()["version"] == attempt.version
    assert response.json()["status"] == AttemptStatus.DRAFT
    assert elapsed >= 0.5


@pytest.mark.django_db(transaction=True)
def test_it_answers_as_soon_as_another_transaction_reaches_the_version(api_client_for):
    attempt = AttemptFactory()
    waiting = Waiting(api_client_for(attempt.user), attempt.pk, min_version=attempt.version + 1, wait=30)
    wait_for(lambda: open_waits() == 1, timeout=60, message="the request to wait")

    new_version = _commit_move(attempt.pk)
    response = waiting.join()

    assert response.status_code == 200
    assert response.json()["version"] == new_version == attempt.version + 1
    assert response.json()["status"] == AttemptStatus.QUEUED
    assert waiting.elapsed < WELL_BEFORE_30_S


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_s_result_wakes_the_wait(workers, api_client_for):
    workers()
    attempt = AttemptFactory()
    client = api_client_for(attempt.user)
    accepted = client.post(
        f"/api/v1/attempts/{attempt.pk}/submissions/",
        {"answer": "score=64"},
        format="json",
        HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex,
    ).json()
    # processing is version + 1; the result, version + 2
    response, elapsed = _timed_get(client, attempt.pk, min_version=accepted["version"] + 2, wait=30)

    body = response.json()
    assert response.status_code == 200
    assert body["status"] == AttemptStatus.COMPLETED
    assert body["result"]["submission_id"] == accepted["submission_id"]
    assert body["result"]["score"] == 64
    assert elapsed < WELL_BEFORE_30_S


@pytest.fixture
def paused_redis() -> Iterator[RedisServer]:
    """The cache's Redis, which carries the notifications too, on a server the test can pause."""
    from attempts import cache

    server = RedisServer()
    caches = {"default": {**settings.CACHES["default"], "LOCATION": server.url(0)}}
    with override_settings(CACHES=caches):
        try:
            yield server
        finally:
            cache.attempt_cache_forget_process_state()
            server.stop()


@pytest.mark.django_db(transaction=True)
def test_redis_paused_a_state_change_still_commits_and_a_wait_answers_at_its_deadline(
    paused_redis, api_client_for, caplog
):
    attempt = AttemptFactory()
    client = api_client_for(attempt.user)
    paused_redis.pause()

    with caplog.at_level(logging.WARNING):
        new_version = _commit_move(attempt.pk)
    assert Attempt.objects.get(pk=attempt.pk).version == new_version == attempt.version + 1
    # The first call to the paused server (the floor's raise) waited its timeout; the publish
    # after it was skipped by the back-off the two share.
    warned = [r.getMessage() for r in caplog.records]
    assert any(m.startswith(("cache unavailable", "notify failed")) for m in warned), warned

    response, elapsed = _timed_get(client, attempt.pk, min_version=new_version + 1, wait=0.5)
    assert response.status_code == 200
    assert response.json()["version"] == new_version
    assert elapsed >= 0.5


# --- the real web line --------------------------------------------------------------------------


@pytest.fixture
def web(transactional_db, tmp_path) -> Iterator[WebServer]:
    server = start_web(tmp_path, workers=1)
    yield server
    server.process.stop()


def test_fifty_waits_hold_no_thread_of_the_one_web_process(web: WebServer):
    """One process serves its sync views on one thread: were each wait holding it, the plain
    request below would queue behind 50 waits of 30 s."""
    attempt = AttemptFactory()
    token = Token.objects.create(user=attempt.user).key
    path = f"{_url(attempt.pk)}?min_version={attempt.version + 1}&wait=30"
    answers: list[tuple[int, dict, float]] = []
    lock = threading.Lock()

    def wait() -> None:
        status, body, _ = web.request(path, token=token)
        with lock:
            answers.append((status, body, time.monotonic()))

    threads = [threading.Thread(target=wait) for _ in range(50)]
    for thread in threads:
        thread.start()
    wait_for(lambda: open_waits() == 50, timeout=90, message="50 requests to wait")

    status, body, _ = web.request("/api/v1/questions/", token=token)
    assert status == 200, body
    status, body, _ = web.request(_url(attempt.pk), token=token)  # no wait: the sync view, at once
    assert (status, body["version"]) == (200, attempt.version)
    assert open_waits() == 50, "the waits ended before the plain requests were answered"

    moved_at = time.monotonic()
    new_version = _commit_move(attempt.pk)
    for thread in threads:
        thread.join(timeout=120)
    assert len(answers) == 50
    assert {(status, body["version"]) for status, body, _ in answers} == {(200, new_version)}
    assert max(answered_at for _, _, answered_at in answers) - moved_at < WELL_BEFORE_30_S
    assert ended_waits("ready") == 50
