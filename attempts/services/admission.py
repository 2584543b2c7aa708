"""Overload protection: refuse a submit (503 + Retry-After, nothing written) while evaluation
cannot keep up, instead of queueing without bound."""

from __future__ import annotations

import threading
import time

from django.conf import settings

from evaluation.breaker import remote_model_breaker
from evaluation.jobs import jobs_waiting
from interviewprep import metrics
from interviewprep.errors import Overloaded

# The backlog is counted at most this often per process: a count per submit would be the most
# expensive query of the submit path.
BACKLOG_CACHE_SECONDS = 1.0
BACKLOG_RETRY_AFTER = 5

_cache_lock = threading.Lock()
_cached: tuple[float, int] | None = None


def evaluate_backlog(*, fresh: bool = False) -> int:
    """Evaluate jobs waiting to run (published or not): the queue's depth, as PostgreSQL knows it."""
    global _cached
    now = time.monotonic()
    with _cache_lock:
        if not fresh and _cached is not None and now - _cached[0] < BACKLOG_CACHE_SECONDS:
            return _cached[1]
    depth = jobs_waiting(kind="evaluate")
    with _cache_lock:
        _cached = (now, depth)
    return depth


def admission_check(*, evaluator: str) -> None:
    limit = settings.CONFIG.evaluate_queue_limit
    if limit:
        depth = evaluate_backlog()
        if depth >= limit:
            metrics.incr("interviewprep_submits_refused_total", {"reason": "backlog"})
            raise Overloaded(
                f"Evaluation is behind ({depth} answers waiting). Nothing was saved; "
                f"please submit again in {BACKLOG_RETRY_AFTER} seconds.",
                retry_after=BACKLOG_RETRY_AFTER,
            )
    if evaluator == "remote":
        breaker = remote_model_breaker()
        if breaker.state() == "open":
            retry_after = max(1, int(breaker.retry_after()))
            metrics.incr("interviewprep_submits_refused_total", {"reason": "breaker"})
            raise Overloaded(
                "The grading service is failing right now. Nothing was saved; "
                f"please submit again in {retry_after} seconds.",
                retry_after=retry_after,
            )
