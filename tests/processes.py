"""Real processes for tests: Celery workers, the relay, a Redis server of the test's own, all
through the one process manager (interviewprep/processes.py)."""

from __future__ import annotations

import functools
import os
import sys
import uuid
from pathlib import Path

from django.conf import settings
from django.db import connection

from interviewprep import processes
from interviewprep.processes import ROOT, RedisServer, free_port

__all__ = [
    "ROOT",
    "RedisServer",
    "Worker",
    "free_port",
    "process_env",
    "start_relay",
    "start_worker",
    "test_database_url",
    "wait_for",
]

# A worker or relay: .proc (its Popen), .log, .output(), .children(), .kill(sig) to its group, .stop().
Worker = processes.Process
wait_for = functools.partial(processes.wait_for, error=AssertionError)


def test_database_url(application_name: str | None = None) -> str:
    """The test database's URL; with `application_name`, its sessions are named so in
    pg_stat_activity."""
    db = connection.settings_dict
    host = db["HOST"] or "127.0.0.1"
    port = db["PORT"] or "5432"
    if host.startswith("/"):
        url = f"postgres://{db['USER']}@/{db['NAME']}?host={host}"
    else:
        url = f"postgres://{db['USER']}:{db['PASSWORD']}@{host}:{port}/{db['NAME']}"
    if application_name:
        url += f"{'&' if '?' in url else '?'}application_name={application_name}"
    return url


def process_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "DATABASE_URL": test_database_url(),
            "REDIS_URL": settings.CACHES["default"]["LOCATION"],
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "HEARTBEAT_INTERVAL": str(settings.CONFIG.heartbeat_interval),
            "RETRY_BASE_DELAY": str(settings.CONFIG.retry_base_delay),
            "JOB_MAX_TRIES": str(settings.CONFIG.job_max_tries),
            "STALE_JOB_AFTER": str(settings.CONFIG.stale_job_after),
            "PYTHONPATH": str(ROOT),
        }
    )
    # The browser tests allow Django's sync calls beside Playwright's loop; the processes they
    # start must keep Django's check.
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    env.update(extra)
    # The process takes this REDIS_URL as it is (a test's own server, when the settings point
    # there), not the per-test-process databases tests/settings.py would pick.
    env["IP_TEST_REDIS_URL_EXACT"] = env["REDIS_URL"]
    return env


def start_worker(
    tmp_path: Path, *, concurrency: int = 2, queues: str = "evaluate,generate,run,ops", **env: str
) -> Worker:
    name = f"w{uuid.uuid4().hex[:8]}"
    log = tmp_path / f"{name}.log"
    ready = tmp_path / f"{name}.ready"
    env = {"CELERY_READY_FILE": str(ready), **env}
    argv = [sys.executable, "-m", "celery", "-A", "interviewprep", "worker", "--queues", queues]
    argv += ["--concurrency", str(concurrency), "--hostname", f"{name}@%h", "--loglevel", "INFO"]
    argv += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
    worker = Worker.start(name, argv, env=process_env(**env), log=log)
    try:
        wait_for(ready.exists, timeout=60, interval=0.1, message="the worker to be ready", process=worker)
    except AssertionError:
        worker.stop()
        raise
    return worker


def start_relay(tmp_path: Path, *, interval: float = 0.2, **env: str) -> Worker:
    log = tmp_path / f"relay-{uuid.uuid4().hex[:6]}.log"
    argv = [sys.executable, "manage.py", "outbox_relay", "--interval", str(interval)]
    return Worker.start("relay", argv, env=process_env(**env), log=log)
