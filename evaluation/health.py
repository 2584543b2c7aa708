"""GET /healthz: database, Redis and broker, each checked for real with a short timeout; the
sandbox's mode and each language's toolchain version are information, never a failure."""

from __future__ import annotations

import time

import redis
from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from kombu import Connection

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
    body["sandbox"] = current_mode()
    # Asked once per process; a missing toolchain (null) only refuses answers in that language.
    body["languages"] = dict(language_versions())
    if failed:
        body["failed"] = failed
    return JsonResponse(body, status=503 if failed else 200)
