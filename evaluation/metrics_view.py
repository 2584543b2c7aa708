"""GET /metrics: Prometheus text for anyone on the host (the scraper) or a staff user.

Counters and histograms are every process's, merged from the multiprocess folder by
prometheus_client (interviewprep.metrics); the gauges are read at scrape time from where the truth
lives: queue depths from the broker, jobs, outbox and dead letters from PostgreSQL, the breaker's
state from Redis, the invariants' last outcome from its row. A broker that
does not answer shows as depth -1, and an unreadable folder as `interviewprep_metrics_store_up 0`,
rather than failing the scrape.
"""

from __future__ import annotations

import logging

from django.db.models import Count
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_PLAIN_0_0_4, CollectorRegistry, Metric, generate_latest
from prometheus_client.core import GaugeMetricFamily
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from evaluation.breaker import remote_model_breaker
from evaluation.check_outcomes import check_outcome_get
from evaluation.dashboard import oldest_waiting_ages
from evaluation.jobs.liveness import sweeper_state, workers_state
from evaluation.jobs.queue_depths import queue_depths
from evaluation.jobs.registry import queues
from evaluation.models import DeadLetter, EvaluationJob, JobStatus, Outbox
from interviewprep.client import client_on_host
from interviewprep.metrics_files import metrics_files_compact, metrics_files_read

logger = logging.getLogger(__name__)

JOBS_HELP = "Jobs by kind and status."
QUEUE_DEPTH_HELP = "Messages waiting in the broker, by queue (-1: the broker did not answer)."
STORE_UP_HELP = "Whether the counters could be read from the multiprocess folder."

Gauge = tuple[str, dict[str, str], float, str]


def _allowed(request: HttpRequest) -> bool:
    if client_on_host(request):
        return True
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return bool(user.is_staff)
    # A scraper elsewhere authenticates like an API client, with a staff user's token.
    try:
        found = TokenAuthentication().authenticate(request)
    except AuthenticationFailed:
        return False
    return found is not None and bool(found[0].is_staff)


def database_gauges() -> list[Gauge]:
    counts = {
        (row["kind"], row["status"]): row["n"]
        for row in EvaluationJob.objects.order_by().values("kind", "status").annotate(n=Count("id"))
    }
    # Every kind and status is shown, zeros too: a series that vanishes breaks rate() and alerts.
    gauges: list[Gauge] = [
        ("interviewprep_jobs", {"kind": kind, "status": status}, counts.get((kind, status), 0), JOBS_HELP)
        for kind in sorted(queues())
        for status in JobStatus.values
    ]
    gauges.append(
        (
            "interviewprep_outbox_unpublished",
            {},
            Outbox.objects.filter(published_at__isnull=True).count(),
            "Outbox rows not yet published to the broker.",
        )
    )
    gauges.append(
        (
            "interviewprep_dead_letters_pending",
            {},
            DeadLetter.objects.filter(replayed_at__isnull=True).count(),
            "Dead letters not replayed.",
        )
    )
    gauges.extend(
        (
            "interviewprep_oldest_waiting_job_age_seconds",
            {"kind": kind},
            age,
            "Seconds the oldest pending or queued job of each kind has waited (0: none waits).",
        )
        for kind, age in oldest_waiting_ages().items()
    )
    # The invariants' row, written by check_invariants (command or beat task); -1: never run.
    invariants = check_outcome_get(name="invariants")
    gauges.append(
        (
            "interviewprep_invariant_violations",
            {},
            -1 if invariants is None else invariants.failures,
            "Invariants broken at the last check_invariants run (-1: none recorded).",
        )
    )
    gauges.append(
        (
            "interviewprep_invariant_check_age_seconds",
            {},
            -1 if invariants is None else (timezone.now() - invariants.checked_at).total_seconds(),
            "Seconds since the last check_invariants run (-1: none recorded).",
        )
    )
    return gauges


def breaker_gauges() -> list[Gauge]:
    breaker = remote_model_breaker()
    state = breaker.state()
    # One series per state, 1 for the current one, so "open" can be alerted on by itself.
    return [
        (
            "interviewprep_breaker_state",
            {"breaker": breaker.name, "state": name},
            1 if name == state else 0,
            "The circuit breaker's state: 1 for the current one (Redis unreachable reads closed).",
        )
        for name in ("closed", "open", "half_open")
    ]


def liveness_gauges(depths: dict[str, int]) -> list[Gauge]:
    sweeper = sweeper_state()
    workers = workers_state(depths=depths)
    return [
        (
            "interviewprep_sweeper_last_pass_age_seconds",
            {},
            -1 if sweeper.age_seconds is None else sweeper.age_seconds,
            "Seconds since the sweeper's last pass (-1: none yet); alert above twice SWEEP_INTERVAL.",
        ),
        ("interviewprep_workers_alive", {}, len(workers), "Workers that reported within WORKER_STALL_AFTER."),
        (
            "interviewprep_workers_stalled",
            {},
            sum(1 for worker in workers if worker.stalled),
            "Workers with room and messages waiting that took none for longer than WORKER_STALL_AFTER.",
        ),
    ]


class MultiProcessCounters:
    """Every process's counters and histograms, merged by prometheus_client's MultiProcessCollector
    (dead processes' files merged first, interviewprep/metrics_files.py).
    A folder it cannot read gives none and sets `up` False instead of failing the scrape: the
    gauges are needed most during an outage."""

    def __init__(self) -> None:
        self.up = True

    def collect(self) -> list[Metric]:
        try:
            # The scrape merges: it is what reads the whole folder, on the host whose folder it
            # is, and it needs no thread or schedule of its own.
            metrics_files_compact()
        except Exception as exc:  # noqa: BLE001 - an unmerged folder is only slower to read
            logger.warning("metric files not merged", extra={"error": f"{type(exc).__name__}: {exc}"})
        try:
            return metrics_files_read()
        except Exception as exc:  # noqa: BLE001 - no folder, or a file gone or torn while read
            logger.warning("metrics store unavailable", extra={"error": f"{type(exc).__name__}: {exc}"})
            self.up = False
            return []


class ScrapeGauges:
    """The gauges read at scrape time, and whether the counters (collected first) could be read."""

    def __init__(self, counters: MultiProcessCounters) -> None:
        self.counters = counters

    def collect(self) -> list[Metric]:
        depths = queue_depths()
        gauges: list[Gauge] = [
            ("interviewprep_queue_depth", {"queue": queue}, depth, QUEUE_DEPTH_HELP) for queue, depth in depths.items()
        ]
        gauges.extend(database_gauges())
        gauges.extend(liveness_gauges(depths))
        gauges.extend(breaker_gauges())
        gauges.append(("interviewprep_metrics_store_up", {}, 1 if self.counters.up else 0, STORE_UP_HELP))
        families: dict[str, GaugeMetricFamily] = {}
        for name, labels, value, help_text in gauges:
            if name not in families:
                families[name] = GaugeMetricFamily(name, help_text, labels=list(labels))
            families[name].add_metric(list(labels.values()), value)
        return list(families.values())


def render() -> bytes:
    # A fresh registry per scrape, so nothing of this process's own is exported beside the merge.
    registry = CollectorRegistry()
    counters = MultiProcessCounters()
    registry.register(counters)
    registry.register(ScrapeGauges(counters))  # after the counters: it reports whether they were read
    return generate_latest(registry)


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    if not _allowed(request):
        return HttpResponseForbidden("Metrics are for this host or staff.", content_type="text/plain")
    return HttpResponse(render(), content_type=CONTENT_TYPE_PLAIN_0_0_4)
