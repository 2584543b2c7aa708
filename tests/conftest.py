from __future__ import annotations

import time

import pytest
import redis
from django.conf import settings


@pytest.fixture(scope="session", autouse=True)
def _quick_idle_close():
    """The fast path's thread keeps its connection between bursts; tests end sooner than its
    idle timeout, and the test database cannot be dropped while it holds one."""
    from evaluation.services import outbox

    outbox.IDLE_CLOSE_SECONDS = 0.2


@pytest.fixture
def state_redis():
    client = redis.Redis.from_url(settings.REDIS_STATE_URL)
    yield client
    client.close()


@pytest.fixture(autouse=True)
def _clean_redis(request):
    """Each test starts with empty cache and state databases (the test ones, never the app's)."""
    if request.node.get_closest_marker("nodb"):
        yield
        return
    from attempts.selectors import cache
    from tests.metrics_helpers import start_from_zero

    start_from_zero()
    # Cache floors an earlier test's writers could not raise would land in this test's Redis otherwise.
    owed = cache._owed.made()
    if owed is not None:
        owed.clear()
    for url in (settings.CACHES["default"]["LOCATION"], settings.REDIS_STATE_URL, settings.CELERY_BROKER_URL):
        client = redis.Redis.from_url(url, socket_timeout=2)
        try:
            client.flushdb()
        except redis.RedisError:
            pass
        finally:
            client.close()
    yield


@pytest.fixture(autouse=True)
def _fast_path_settled(request):
    """A transactional test's database is flushed (TRUNCATE) after it; the outbox fast path's
    thread may still be publishing that test's last submits, and the two then deadlock. Wait
    for it first (this fixture is torn down before the database is)."""
    marker = request.node.get_closest_marker("django_db")
    if not ((marker and marker.kwargs.get("transaction")) or "transactional_db" in request.fixturenames):
        yield
        return
    request.getfixturevalue("transactional_db")
    yield
    from django.utils import timezone

    from evaluation.models import Outbox

    deadline = time.monotonic() + 5
    waiting = Outbox.objects.filter(published_at=None, publish_attempts=0, available_at__lte=timezone.now())
    while waiting.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


@pytest.fixture
def api_client_for():
    """A DRF client authenticated with the user's token, as a REST client would be."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    def make(user):
        token, _ = Token.objects.get_or_create(user=user)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    return make


@pytest.fixture
def workers(transactional_db, tmp_path):
    """Start real Celery worker processes against the test database; all stopped afterwards."""
    from tests.processes import start_worker

    started = []

    def start(**kwargs):
        worker = start_worker(tmp_path, **kwargs)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def relay(transactional_db, tmp_path):
    """The relay process, publishing what the fast path missed and retries that came due."""
    from tests.processes import start_relay

    process = start_relay(tmp_path)
    yield process
    process.stop()


@pytest.fixture
def assert_invariants():
    def check(outbox_bound_seconds: float = 60.0):
        from evaluation.services.invariants import invariants_check

        violations = invariants_check(outbox_bound_seconds=outbox_bound_seconds)
        assert not violations, "\n".join(f"{v.check}: {v.rows}" for v in violations)

    return check
