"""Waits as the tests see them: the wait counters merged over this process and the servers it
starts (they share its metrics folder)."""

from __future__ import annotations

from tests.metrics_helpers import counter_value

OUTCOMES = ("ready", "deadline", "cancelled", "error")


def open_waits() -> int:
    """Waits that found nothing at their first check and have not ended yet."""
    started = counter_value("interviewprep_waits_started_total")
    ended = sum(counter_value("interviewprep_waits_ended_total", {"outcome": o}) for o in OUTCOMES)
    return int(started - ended)


def ended_waits(outcome: str) -> int:
    return int(counter_value("interviewprep_waits_ended_total", {"outcome": outcome}))
