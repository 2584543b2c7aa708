"""The staff dashboard's figures: the last hour of the job machinery, read from where each truth
lives. Jobs, tries and dead letters are rows with their times, so their series are bucketed SQL
(one query per series, bounded by the hour and served by an index); what has no history of its
own (cache counters, queue depths, the oldest job's age) comes from the beat task's samples
(evaluation/ops_samples.py); the breaker's state from Redis. The page, its live fragment and the
ops API all show this one selector's answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

from evaluation.breaker import remote_model_breaker
from evaluation.jobs.queue import WAITING
from evaluation.jobs.queue_depths import queue_depths
from evaluation.jobs.registry import queues
from evaluation.models import DeadLetter, EvaluationJob, JobStatus, JobTry, OpsSample

WINDOW = timedelta(hours=1)
BUCKET = timedelta(minutes=1)
# A retrying job waits on purpose (its backoff): the oldest job's age counts only those that
# could run now.
READY_STATUSES = (JobStatus.PENDING, JobStatus.QUEUED)
CACHE_OUTCOMES = ("hit", "miss", "stale", "error")
PERCENTILES = (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))

Point = tuple[datetime, float | None]


@dataclass(frozen=True)
class KindWork:
    """One registered kind's jobs: waiting and processing now, finished within the hour."""

    kind: str
    queue: str
    waiting: int
    processing: int
    succeeded: int
    dead: int
    discarded: int
    oldest_waiting_seconds: float | None

    @property
    def finished(self) -> int:
        return self.succeeded + self.dead + self.discarded


@dataclass(frozen=True)
class Dashboard:
    now: datetime
    since: datetime
    bucket_seconds: int
    kinds: list[KindWork]
    queue_depths: dict[str, int]
    breaker: dict[str, object]
    # Per-minute series over the hour, oldest first; None where nothing was measured.
    throughput: list[Point]
    latency: dict[str, list[Point]]
    retries: list[Point]
    dead_letters: list[Point]
    lock_contention: list[Point]
    # From the samples: at each sample's time (the ratio over the interval ending there).
    cache_hit_ratio: list[Point]
    queue_depth_history: dict[str, list[Point]]
    oldest_waiting_history: dict[str, list[Point]]
    # Cached reads by outcome over the hour (summed from the samples).
    cache_requests: dict[str, int]


def _bucket_starts(since: datetime) -> list[datetime]:
    return [since + i * BUCKET for i in range(int(WINDOW / BUCKET))]


def _bucketed(sql: str, params: dict, since: datetime, *, fill: float | None = 0) -> list[tuple]:
    """Rows of (bucket start, values...) for a query whose first column is
    `date_bin(%(bucket)s, <time>, %(since)s)`, with every bucket of the hour present."""
    with connection.cursor() as cursor:
        cursor.execute(sql, {"bucket": BUCKET, "since": since, **params})
        found = {row[0]: row[1:] for row in cursor.fetchall()}
    width = len(next(iter(found.values()))) if found else 1
    return [(start, *found.get(start, (fill,) * width)) for start in _bucket_starts(since)]


def _count_series(table: str, column: str, where: str, params: dict, since: datetime, now: datetime) -> list[Point]:
    sql = (
        f"SELECT date_bin(%(bucket)s, {column}, %(since)s) AS b, count(*) FROM {table} "  # noqa: S608 - names are ours
        f"WHERE {column} >= %(since)s AND {column} < %(now)s {where} GROUP BY b"
    )
    return [(start, float(n)) for start, n in _bucketed(sql, {"now": now, **params}, since)]


def _throughput(since: datetime, now: datetime) -> list[Point]:
    return _count_series(EvaluationJob._meta.db_table, "finished_at", "", {}, since, now)


def _latency(since: datetime, now: datetime) -> dict[str, list[Point]]:
    sql = (
        f"SELECT date_bin(%(bucket)s, finished_at, %(since)s) AS b, "  # noqa: S608 - names are ours
        "percentile_cont(%(fractions)s::float8[]) WITHIN GROUP "
        "(ORDER BY extract(epoch FROM finished_at - created_at)) "
        f"FROM {EvaluationJob._meta.db_table} "
        "WHERE finished_at >= %(since)s AND finished_at < %(now)s AND status = %(status)s GROUP BY b"
    )
    params = {"now": now, "status": JobStatus.SUCCEEDED, "fractions": [fraction for _, fraction in PERCENTILES]}
    rows = _bucketed(sql, params, since, fill=None)
    return {
        name: [(start, None if values is None else round(float(values[index]), 3)) for start, values in rows]
        for index, (name, _) in enumerate(PERCENTILES)
    }


def _tries_ending(outcome: str, since: datetime, now: datetime) -> list[Point]:
    return _count_series(
        JobTry._meta.db_table, "finished_at", "AND outcome = %(outcome)s", {"outcome": outcome}, since, now
    )


def _dead_letters(since: datetime, now: datetime) -> list[Point]:
    return _count_series(DeadLetter._meta.db_table, "created_at", "", {}, since, now)


def oldest_waiting_ages(*, now: datetime | None = None) -> dict[str, float]:
    """Kind -> seconds its oldest pending or queued job has waited (0 when none waits), for every
    registered kind."""
    now = now or timezone.now()
    sql = (
        f"SELECT kind, min(created_at) FROM {EvaluationJob._meta.db_table} "  # noqa: S608 - names are ours
        "WHERE status = ANY(%(statuses)s) GROUP BY kind"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, {"statuses": list(READY_STATUSES)})
        oldest = dict(cursor.fetchall())
    return {
        kind: round(max(0.0, (now - oldest[kind]).total_seconds()), 3) if kind in oldest else 0.0
        for kind in sorted(set(queues()) | set(oldest))
    }


def _kinds(since: datetime, now: datetime) -> list[KindWork]:
    # Unfinished jobs by status, finished ones by their time: a bitmap OR of two indexes.
    sql = (
        f"SELECT kind, status, count(*) FROM {EvaluationJob._meta.db_table} "  # noqa: S608 - names are ours
        "WHERE status = ANY(%(unfinished)s) OR (finished_at >= %(since)s AND finished_at < %(now)s) "
        "GROUP BY kind, status"
    )
    unfinished = [*WAITING, JobStatus.RUNNING]
    with connection.cursor() as cursor:
        cursor.execute(sql, {"unfinished": unfinished, "since": since, "now": now})
        counts = {(kind, status): n for kind, status, n in cursor.fetchall()}
    ages = oldest_waiting_ages(now=now)
    registered = queues()
    kinds = sorted(set(registered) | {kind for kind, _ in counts})
    ready = {kind: sum(counts.get((kind, status), 0) for status in READY_STATUSES) for kind in kinds}
    return [
        KindWork(
            kind=kind,
            queue=registered.get(kind, "?"),
            waiting=sum(counts.get((kind, status), 0) for status in WAITING),
            processing=counts.get((kind, JobStatus.RUNNING), 0),
            succeeded=counts.get((kind, JobStatus.SUCCEEDED), 0),
            dead=counts.get((kind, JobStatus.DEAD), 0),
            discarded=counts.get((kind, JobStatus.DISCARDED), 0),
            oldest_waiting_seconds=ages.get(kind) if ready[kind] else None,
        )
        for kind in kinds
    ]


def _from_samples(since: datetime, now: datetime) -> tuple[list[Point], dict, dict, dict[str, int]]:
    """The hit ratio between consecutive samples, the sampled queue depths and ages, and the
    cache requests counted over the hour. A counter that went down restarted from zero (its
    process's files were emptied): its new total is what it counted since."""
    samples = list(
        OpsSample.objects.filter(taken_at__gte=since, taken_at__lte=now)
        .order_by("taken_at")
        .values("taken_at", "counters", "queue_depths", "oldest_waiting")
    )
    ratio: list[Point] = []
    totals = dict.fromkeys(CACHE_OUTCOMES, 0)
    for before, after in zip(samples, samples[1:], strict=False):
        if not before["counters"] or not after["counters"]:
            ratio.append((after["taken_at"], None))
            continue
        deltas = {}
        for outcome in CACHE_OUTCOMES:
            key = f"cache_{outcome}"
            old, new = before["counters"].get(key, 0), after["counters"].get(key, 0)
            deltas[outcome] = new - old if new >= old else new
            totals[outcome] += int(deltas[outcome])
        requests = sum(deltas.values())
        ratio.append((after["taken_at"], round(deltas["hit"] / requests, 4) if requests else None))
    depths: dict[str, list[Point]] = {}
    ages: dict[str, list[Point]] = {}
    for sample in samples:
        for queue, depth in sample["queue_depths"].items():
            depths.setdefault(queue, []).append((sample["taken_at"], None if depth < 0 else float(depth)))
        for kind, age in sample["oldest_waiting"].items():
            ages.setdefault(kind, []).append((sample["taken_at"], float(age)))
    return ratio, depths, ages, totals


def ops_dashboard(*, now: datetime | None = None) -> Dashboard:
    now = now or timezone.now()
    since = now - WINDOW
    breaker = remote_model_breaker()
    state = breaker.state()
    ratio, depth_history, age_history, cache_totals = _from_samples(since, now)
    return Dashboard(
        now=now,
        since=since,
        bucket_seconds=int(BUCKET.total_seconds()),
        kinds=_kinds(since, now),
        queue_depths=queue_depths(),
        breaker={
            "name": breaker.name,
            "state": state,
            "retry_after": breaker.retry_after() if state != "closed" else 0,
        },
        throughput=_throughput(since, now),
        latency=_latency(since, now),
        retries=_tries_ending(JobTry.Outcome.TRANSIENT_ERROR, since, now),
        dead_letters=_dead_letters(since, now),
        lock_contention=_tries_ending(JobTry.Outcome.LOCK_CONTENDED, since, now),
        cache_hit_ratio=ratio,
        queue_depth_history=depth_history,
        oldest_waiting_history=age_history,
        cache_requests=cache_totals,
    )
