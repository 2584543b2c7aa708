"""GET /healthz: database, Redis and broker, each checked for real with a short timeout; the
sweeper's last pass and every worker's liveness (evaluation/jobs/liveness.py); the sandbox's
mode, each language's toolchain version and the prose grader's model are information, never a failure."""

from __future__ import annotations

import time

import redis
from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from kombu import Connection

from evaluation.evaluators.minilm import unavailable_reason
from evaluation.jobs.liveness import sweeper_state, workers_state
from evaluation.jobs.queue_depths import queue_depths
from evaluation.languages import language_versions
from evaluation.sandbox import current_mode


def _check_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return "ok"


def _check_redis() -> str:
    client = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"], socket_timeout=1, socket_connect_timeout=1)
    try:
        client.ping()
    finally:
        client.close()
    return "ok"


def _check_broker() -> str:
    with Connection(settings.CELERY_BROKER_URL, connect_timeout=1, transport_options={"socket_timeout": 1}) as conn:
        conn.ensure_connection(max_retries=1, timeout=1)
    return "ok"


def liveness(depths: dict[str, int]) -> dict:
    """Whether the sweeper and the workers do their part. Shown, never a 503: a load balancer
    reads the status code of this web process, and must not drop every web for a stalled worker."""
    sweeper = sweeper_state()
    if sweeper.age_seconds is None:
        sweeper_status = "never: no pass recorded (is the relay running?)"
    elif sweeper.overdue:
        sweeper_status = f"overdue: last pass {sweeper.age_seconds:.0f} s ago (is the relay running?)"
    else:
        sweeper_status = "ok"
    workers = workers_state(depths=depths)
    stalled = [w.name for w in workers if w.stalled]
    return {
        "status": "ok" if sweeper_status == "ok" and not stalled else "degraded",
        "sweeper": {
            "status": sweeper_status,
            "last_pass_age_s": None if sweeper.age_seconds is None else round(sweeper.age_seconds, 1),
        },
        "workers": [
            {
                "name": w.name,
                "queues": list(w.queues),
                "status": w.describe(),
                "idle_s": round(w.idle_seconds, 1),
                "beat_age_s": round(w.beat_age_seconds, 1),
            }
            for w in workers
        ],
        "stalled": stalled,
    }


CHECKS = {"database": _check_database, "redis": _check_redis, "broker": _check_broker}


@never_cache
def healthz(request):
    checks: dict[str, str] = {}
    timings: dict[str, float] = {}
    for name, check in CHECKS.items():
        started = time.perf_counter()
        try:
            checks[name] = check()
        except Exception as exc:  # noqa: BLE001 - any failure is the answer
            checks[name] = f"error: {type(exc).__name__}: {exc}"[:300]
        timings[name] = round((time.perf_counter() - started) * 1000, 1)
    failed = [name for name, value in checks.items() if value != "ok"]
    body = {"status": "ok" if not failed else "error", "checks": checks, "timings_ms": timings}
    if "database" not in failed:
        # A broker that does not answer leaves the depths unknown: no worker is called stalled.
        body["liveness"] = liveness({} if "broker" in failed else queue_depths())
    body["sandbox"] = current_mode()
    # Information, never a 503: written answers wait for a worker that has the model. This is the
    # model's files and hashes as this host sees them (checked once per process, nothing loaded).
    why = unavailable_reason()
    body["prose_grader"] = {"status": "ok" if why is None else f"unavailable: {why}"}
    # Asked once per process; a missing toolchain (null) only refuses answers in that language.
    body["languages"] = dict(language_versions())
    if failed:
        body["failed"] = failed
    return JsonResponse(body, status=503 if failed else 200)
