"""Counters and histograms shared by every process (gunicorn workers, Celery children, relay).

prometheus_client in multiprocess mode: each process writes its own values to files in
PROMETHEUS_MULTIPROC_DIR (set for every process in interviewprep/__init__.py) and `/metrics`
merges them. A process that died keeps its counts in the totals: its files are merged into
one per type by the scrape (interviewprep/metrics_files.py), never dropped; there are no live
gauges, the only thing `multiprocess.mark_process_dead` would remove.

A metric write never fails its caller: a lost increment is better than a failed submit.
"""

from __future__ import annotations

import functools
import logging

from prometheus_client import Counter, Histogram

from interviewprep.metrics_files import install_process_identifier

logger = logging.getLogger(__name__)

# Seconds; for job latency (created -> finished) and similar.
LATENCY_BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)

# name: (help, label names)
COUNTERS = {
    "interviewprep_jobs_retried_total": (
        "Job tries that ended in a transient error and were scheduled again.",
        ("kind",),
    ),
    "interviewprep_dead_letters_total": ("Jobs moved to the dead-letter table.", ("kind",)),
    "interviewprep_lock_contention_total": (
        "Runs that could not take the per-attempt lock and were deferred.",
        ("kind",),
    ),
    "interviewprep_invalid_transitions_total": ("Refused state transitions.", ("entity", "from", "to")),
    "interviewprep_jobs_finished_total": ("Jobs that reached a final state.", ("kind", "status")),
    "interviewprep_cache_requests_total": ("Cached reads by outcome (hit, miss, stale, error).", ("outcome",)),
    "interviewprep_cache_computations_total": ("Database computations of cached payloads.", ()),
    "interviewprep_submits_refused_total": ("Submits refused because evaluation cannot keep up.", ("reason",)),
    "interviewprep_jobs_swept_total": ("Stuck jobs sent again by the sweeper.", ()),
    "interviewprep_outbox_published_total": ("Outbox rows published to the broker.", ()),
    "interviewprep_waits_started_total": ("Waits (?wait=) that found nothing yet and began to wait.", ()),
    "interviewprep_waits_ended_total": (
        "Waits that began, by how they ended: ready, deadline, cancelled (client gone), error.",
        ("outcome",),
    ),
}
HISTOGRAMS = {
    "interviewprep_job_latency_seconds": ("Seconds from a job's creation to its final state.", ("kind",)),
}


def _declare() -> dict[str, Counter | Histogram]:
    declared: dict[str, Counter | Histogram] = {}
    for name, (help_text, labels) in COUNTERS.items():
        declared[name] = Counter(name, help_text, labels)
    for name, (help_text, labels) in HISTOGRAMS.items():
        declared[name] = Histogram(name, help_text, labels, buckets=LATENCY_BUCKETS)
    return declared


install_process_identifier()
try:
    _METRICS = _declare()
except OSError as exc:
    # An unlabelled metric opens its file at once: a folder that cannot be written loses the
    # counts (each write logs it), it does not stop the process from starting.
    logger.warning("metrics unavailable", extra={"error": f"{type(exc).__name__}: {exc}"})
    _METRICS = {}


@functools.lru_cache(maxsize=4096)
def _series(name: str, labels: tuple[tuple[str, str], ...]) -> Counter | Histogram:
    # Looked up once per label set: `labels()` checks and formats them on every call, which costs
    # more than the write itself.
    metric = _METRICS[name]
    return metric.labels(**dict(labels)) if labels else metric


def incr(name: str, labels: dict[str, str] | None = None, amount: int = 1) -> None:
    try:
        _series(name, tuple(labels.items()) if labels else ()).inc(amount)
    except Exception as exc:  # noqa: BLE001 - a metric write never fails its caller
        logger.warning("metric lost", extra={"metric": name, "error": f"{type(exc).__name__}: {exc}"})


def observe(name: str, value: float, labels: dict[str, str] | None = None) -> None:
    """Record one observation in a histogram (cumulative buckets, Prometheus semantics)."""
    try:
        _series(name, tuple(labels.items()) if labels else ()).observe(value)
    except Exception as exc:  # noqa: BLE001 - a metric write never fails its caller
        logger.warning("metric lost", extra={"metric": name, "error": f"{type(exc).__name__}: {exc}"})
