"""Counters and histograms shared by every process (gunicorn workers, Celery children).

Per-process counters would be wrong behind gunicorn's several workers, so every increment goes
to one Redis hash on the state database. A metric write never fails its caller: a lost
increment is better than a failed submit.
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import threading
import time
from collections.abc import Iterable

import redis

from interviewprep.redis_state import state_redis

logger = logging.getLogger(__name__)

COUNTERS_KEY = "metrics:counters"
HISTOGRAM_KEY = "metrics:histograms"

# Seconds; for job latency (created -> finished) and similar.
LATENCY_BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)

HELP = {
    "interviewprep_jobs_retried_total": "Job tries that ended in a transient error and were scheduled again.",
    "interviewprep_dead_letters_total": "Jobs moved to the dead-letter table.",
    "interviewprep_lock_contention_total": "Runs that could not take the per-attempt lock and were deferred.",
    "interviewprep_invalid_transitions_total": "Refused state transitions.",
    "interviewprep_jobs_finished_total": "Jobs that reached a final state.",
    "interviewprep_cache_requests_total": "Cached reads by outcome (hit, miss, stale, error).",
    "interviewprep_cache_computations_total": "Database computations of cached payloads.",
    "interviewprep_submits_refused_total": "Submits refused because evaluation cannot keep up.",
    "interviewprep_jobs_swept_total": "Stuck jobs sent again by the sweeper.",
    "interviewprep_outbox_published_total": "Outbox rows published, by path (fast, relay).",
}


def _field(name: str, labels: dict[str, str] | None) -> str:
    if not labels:
        return name
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return f"{name}{{{inner}}}"


def incr(name: str, labels: dict[str, str] | None = None, amount: int = 1) -> None:
    try:
        state_redis().hincrby(COUNTERS_KEY, _field(name, labels), amount)
    except redis.RedisError as exc:
        logger.warning("metric lost", extra={"metric": name, "error": str(exc)})


_buffer: dict[tuple[str, str], float] = {}
_buffer_lock = threading.Lock()
_flusher_pid = [0]
FLUSH_SECONDS = 1.0


def _buffer_add(key: str, *amounts: tuple[str, float]) -> None:
    """Add each (field, amount) to the buffer, under one lock."""
    with _buffer_lock:
        for field, amount in amounts:
            _buffer[(key, field)] = _buffer.get((key, field), 0) + amount
    if _flusher_pid[0] != os.getpid():
        _start_flusher()


def _start_flusher() -> None:
    # One thread per process (a forked child starts its own) writes the sums once a second.
    with _buffer_lock:
        if _flusher_pid[0] == os.getpid():
            return
        _flusher_pid[0] = os.getpid()

    def loop() -> None:
        while True:
            time.sleep(FLUSH_SECONDS)
            flush()

    threading.Thread(target=loop, name="metrics-flush", daemon=True).start()


def incr_buffered(name: str, labels: dict[str, str] | None = None, amount: int = 1) -> None:
    """For counters on hot paths: summed in the process, written once a second. At most the
    last second of counts is lost when a process is killed."""
    _buffer_add(COUNTERS_KEY, (_field(name, labels), amount))


def flush() -> None:
    with _buffer_lock:
        pending = dict(_buffer)
        _buffer.clear()
    if not pending:
        return
    try:
        pipe = state_redis().pipeline(transaction=False)
        for (key, field), amount in pending.items():
            if float(amount).is_integer():
                pipe.hincrby(key, field, int(amount))
            else:
                pipe.hincrbyfloat(key, field, amount)
        pipe.execute()
    except redis.RedisError as exc:
        logger.warning("metrics lost", extra={"count": len(pending), "error": str(exc)})


atexit.register(flush)


def observe(name: str, value: float, labels: dict[str, str] | None = None) -> None:
    """Record one observation in a cumulative histogram (Prometheus semantics), buffered."""
    buckets, total_fields = _histogram_fields(name, tuple(sorted((labels or {}).items())))
    # Every bucket is written, by 0 when the value is above it: a histogram missing its lower
    # buckets gives histogram_quantile() wrong answers.
    amounts = [(field, 1 if value <= bound else 0) for bound, field in zip(LATENCY_BUCKETS, buckets, strict=True)]
    inf, count, total = total_fields
    _buffer_add(HISTOGRAM_KEY, *amounts, (inf, 1), (count, 1), (total, value))


@functools.lru_cache(maxsize=1024)
def _histogram_fields(name: str, labels: tuple[tuple[str, str], ...]) -> tuple[tuple[str, ...], tuple[str, str, str]]:
    """The hash fields of one histogram, made once (formatting them was most of a job's metrics
    cost): the buckets', then +Inf's, the count's and the sum's."""
    plain = dict(labels)
    buckets = tuple(_field(f"{name}_bucket", {**plain, "le": str(bound)}) for bound in LATENCY_BUCKETS)
    inf = _field(f"{name}_bucket", {**plain, "le": "+Inf"})
    return buckets, (inf, _field(f"{name}_count", plain), _field(f"{name}_sum", plain))


def counters() -> dict[str, float]:
    flush()
    raw = state_redis().hgetall(COUNTERS_KEY)
    return {k.decode(): float(v) for k, v in raw.items()}


def counter_value(name: str, labels: dict[str, str] | None = None) -> float:
    flush()
    raw = state_redis().hget(COUNTERS_KEY, _field(name, labels))
    return float(raw) if raw is not None else 0.0


def histograms() -> dict[str, float]:
    flush()
    raw = state_redis().hgetall(HISTOGRAM_KEY)
    return {k.decode(): float(v) for k, v in raw.items()}


def _number(value: float) -> str:
    # `:g` keeps 6 significant digits: a counter past a million would be shown rounded, and
    # Prometheus would see it move in steps (or backwards after a reset of one process).
    if value == int(value):
        return str(int(value))
    return repr(float(value))


def render(gauges: Iterable[tuple[str, dict[str, str], float, str]] = ()) -> str:
    """Prometheus text exposition of every counter and histogram, plus the given gauges.

    The gauges are shown even when the state Redis cannot be read, with
    `interviewprep_metrics_store_up 0`: an outage is when they are needed most.
    """
    lines: list[str] = []
    seen: set[str] = set()

    def head(base: str, kind: str, help_text: str | None = None) -> None:
        if base in seen:
            return
        seen.add(base)
        lines.append(f"# HELP {base} {help_text or HELP.get(base, base)}")
        lines.append(f"# TYPE {base} {kind}")

    try:
        stored_counters, stored_histograms, store_up = counters(), histograms(), 1
    except redis.RedisError as exc:
        logger.warning("metrics store unavailable", extra={"error": str(exc)})
        stored_counters, stored_histograms, store_up = {}, {}, 0
    all_gauges = [
        *gauges,
        ("interviewprep_metrics_store_up", {}, store_up, "Whether the counters could be read from Redis."),
    ]
    for name, labels, value, help_text in sorted(all_gauges, key=lambda g: g[0]):
        head(name, "gauge", help_text)
        lines.append(f"{_field(name, labels)} {_number(value)}")
    for field, value in sorted(stored_counters.items()):
        head(field.split("{", 1)[0], "counter")
        lines.append(f"{field} {_number(value)}")
    for field, value in sorted(stored_histograms.items()):
        base = field.split("{", 1)[0].rsplit("_", 1)[0]
        head(base, "histogram", "Seconds from a job's creation to its final state.")
        lines.append(f"{field} {_number(value)}")
    return "\n".join(lines) + "\n"
