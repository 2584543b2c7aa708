"""Samples for the staff dashboard of what keeps no history: taken by one beat task
(`evaluation.tasks.take_ops_sample`, every 30 s: CELERY_BEAT_SCHEDULE), which also purges the
samples older than SAMPLE_RETENTION. The dashboard charts the differences between samples."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from evaluation.dashboard import CACHE_OUTCOMES, oldest_waiting_ages
from evaluation.jobs.queue_depths import queue_depths
from evaluation.metrics_view import MultiProcessCounters
from evaluation.models import OpsSample

# The dashboard shows one hour; the second hour is slack for a late or paused beat.
SAMPLE_RETENTION = timedelta(hours=2)


def merged_counters() -> dict[str, float]:
    """The counter totals the dashboard charts, over every process, from one read of the folder;
    empty if it cannot be read (the dashboard shows a gap, not a zero)."""
    counters = MultiProcessCounters()
    totals = {f"cache_{outcome}": 0.0 for outcome in CACHE_OUTCOMES}
    for family in counters.collect():
        for sample in family.samples:
            key = f"cache_{sample.labels.get('outcome')}"
            if sample.name == "interviewprep_cache_requests_total" and key in totals:
                totals[key] += sample.value
    return totals if counters.up else {}


def ops_sample_take(*, now: datetime | None = None) -> OpsSample:
    now = now or timezone.now()
    sample = OpsSample.objects.create(
        taken_at=now,
        counters=merged_counters(),
        queue_depths=queue_depths(),
        oldest_waiting=oldest_waiting_ages(now=now),
    )
    OpsSample.objects.filter(taken_at__lt=now - SAMPLE_RETENTION).delete()
    return sample
