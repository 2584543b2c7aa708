from __future__ import annotations

import pytest
import redis
from django.conf import settings

# The tests that take longest start first, so that under pytest-xdist (`make test`) none of them
# begins last and holds the run open alone: the 2,000-job drain, the chaos drill, the run
# command, then the browser.
_START_FIRST = ("tests/evaluation/test_drain.py", "tests/test_chaos.py", "tests/test_run_command.py", "tests/browser/")


def pytest_collection_modifyitems(items):
    def rank(item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return next((i for i, prefix in enumerate(_START_FIRST) if path.startswith(prefix)), len(_START_FIRST))

    items.sort(key=rank)  # stable: the rest keep their order


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
    from attempts.cache import attempt_cache_forget_process_state
    from tests.metrics_helpers import start_from_zero

    start_from_zero()
    # Neither an earlier test's owed cache floors nor its cache error may reach this test.
    attempt_cache_forget_process_state()
    for url in (settings.CACHES["default"]["LOCATION"], settings.REDIS_STATE_URL, settings.CELERY_BROKER_URL):
        client = redis.Redis.from_url(url, socket_timeout=2)
        try:
            client.flushdb()
        except redis.RedisError:
            pass
        finally:
            client.close()
    yield


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
    """Start real Celery worker processes against the test database, with a relay to publish
    their jobs unless `relay=False`; all stopped afterwards."""
    from tests.processes import start_relay, start_worker

    started = []

    def start(*, relay: bool = True, **kwargs):
        if relay and not started:
            started.append(start_relay(tmp_path))
        worker = start_worker(tmp_path, **kwargs)
        started.append(worker)
        return worker

    yield start
    for process in started:
        process.stop()


@pytest.fixture
def relay(transactional_db, tmp_path):
    """The relay process, publishing outbox rows as they commit and retries as they come due."""
    from tests.processes import start_relay

    process = start_relay(tmp_path)
    yield process
    process.stop()


@pytest.fixture
def assert_invariants():
    def check(outbox_bound_seconds: float = 60.0):
        from attempts.services.invariants import invariants_check

        violations = invariants_check(outbox_bound_seconds=outbox_bound_seconds)
        assert not violations, "\n".join(f"{v.check}: {v.rows}" for v in violations)

    return check
