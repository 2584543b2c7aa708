from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

import pytest
import redis
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings
from pytest_django.plugin import blocking_manager_key

from tests.stack import shared_stack

# The tests that take longest start first, so that under pytest-xdist (`make test`) none of them
# begins last and holds the run open alone: the 2,000-job drain, the chaos drill, the run
# command, then the browser.
_START_FIRST = ("tests/evaluation/test_drain.py", "tests/test_chaos.py", "tests/test_run_command.py", "tests/browser/")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items):
    def rank(item) -> tuple[int, bool]:
        path = item.nodeid.split("::", 1)[0]
        first = next((i for i, prefix in enumerate(_START_FIRST) if path.startswith(prefix)), len(_START_FIRST))
        # The browser tests that use the shared stack in a row, the ones that start their own after.
        return first, "stack" not in item.fixturenames

    items.sort(key=rank)  # stable: the rest keep their order
    for item in items:
        if item.nodeid.startswith("tests/browser/"):
            # One test process runs them all in a row (`--dist loadgroup`): one start of their
            # shared stack (tests/stack.py, about 9 CPU-s), not one per process and interruption.
            item.add_marker(pytest.mark.xdist_group("browser"))


def pytest_runtest_setup(item):
    # The browser tests' stack lives while the tests that use it run one after another
    # (tests/stack.py): its relay and worker would take any other test's jobs.
    if "stack" not in item.fixturenames and shared_stack.stop():
        # Its relay and worker kept writing after the last browser test's flush (the sweeper's
        # pass, liveness rows): flushed again, as a transactional test's end does, so that no
        # later test finds their rows.
        with item.config.stash[blocking_manager_key].unblock():
            call_command("flush", interactive=False, verbosity=0)


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


@dataclass(frozen=True)
class Broker:
    kind: str  # "redis" or "amqp"
    url: str
    vhost: str = ""


@pytest.fixture(scope="session")
def rabbitmq_vhost():
    """This test process's virtual host on the machine's RabbitMQ: named after its test database
    and xdist worker, so no other run's messages meet its own; deleted at the end."""
    from tests.rabbitmq import vhost_create, vhost_delete

    vhost = f"ip-test-{settings.DATABASES['default']['NAME']}-{os.environ.get('PYTEST_XDIST_WORKER') or 'main'}"
    vhost_create(vhost)
    yield vhost
    vhost_delete(vhost)


def _amqp_settings(url: str):
    return override_settings(CELERY_BROKER_URL=url, CONFIG=dataclasses.replace(settings.CONFIG, broker_url=url))


@pytest.fixture
def broker(request):
    """The broker the test's processes use: the test process's Redis database, or (param
    "amqp") its RabbitMQ virtual host with the app's queues emptied. Settings point there for the
    test, so the processes it starts and what it reads in-process (queue depths) agree."""
    if getattr(request, "param", "redis") == "redis":
        yield Broker("redis", settings.CELERY_BROKER_URL)
        return
    from evaluation.jobs.queue_depths import broker_queues
    from tests.rabbitmq import queues_purge, rabbitmq_url

    vhost = request.getfixturevalue("rabbitmq_vhost")
    url = rabbitmq_url(vhost)
    queues_purge(url, broker_queues())
    with _amqp_settings(url):
        yield Broker("amqp", url, vhost)


@pytest.fixture
def pausable_broker(request, transactional_db):
    """A broker the test may pause, resume and restart, touching nobody else: a redis-server of
    its own, or (param "amqp") a proxy of its own in front of its RabbitMQ virtual host."""
    from tests.processes import RedisServer

    if getattr(request, "param", "redis") == "redis":
        server = RedisServer()
        yield server
        server.stop()
        return
    from evaluation.jobs.queue_depths import broker_queues
    from tests.rabbitmq import BrokerProxy, queues_purge, rabbitmq_url

    vhost = request.getfixturevalue("rabbitmq_vhost")
    queues_purge(rabbitmq_url(vhost), broker_queues())
    proxy = BrokerProxy(vhost)
    with _amqp_settings(proxy.url()):
        yield proxy
    proxy.stop()


@pytest.fixture
def workers(transactional_db, tmp_path, broker, request):
    """Start real Celery worker processes against the test database, with a relay to publish
    their jobs unless `relay=False` or the test has the `relay` fixture's; all stopped afterwards."""
    from tests.processes import start_relay, start_worker

    started = []
    has_relay = "relay" in request.fixturenames

    def start(*, relay: bool = True, **kwargs):
        if relay and not has_relay and not started:
            started.append(start_relay(tmp_path))
        worker = start_worker(tmp_path, **kwargs)
        started.append(worker)
        return worker

    yield start
    for process in started:
        process.stop()


@pytest.fixture
def relay(transactional_db, tmp_path, broker):
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
