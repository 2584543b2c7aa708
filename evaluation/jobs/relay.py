"""The relay process: the outbox's publisher, and the sweeper.

Both only need PostgreSQL (and the broker to publish to), so they share the one loop that
consumes from no queue: a worker that stops consuming cannot hold the sweep back. Several relays
may run; each row is published, and each stuck job sent again, exactly once.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone

from evaluation.jobs.outbox import CHANNEL, OutboxPublishFailed, outbox_publish
from evaluation.jobs.sweep import jobs_sweep
from evaluation.models import Outbox

logger = logging.getLogger(__name__)

# A row still due after a pass is held back by fair share (or locked by another relay): it goes
# when a job of its share finishes, which sends no NOTIFY, so the relay looks again this often.
HELD_POLL = 0.05


def _seconds_until_next_due(ceiling: float) -> float:
    due = (
        Outbox.objects.filter(published_at__isnull=True).order_by("available_at").values_list("available_at", flat=True)
    ).first()
    if due is None:
        return ceiling
    return min(ceiling, max(HELD_POLL, (due - timezone.now()).total_seconds()))


def outbox_relay_loop(*, interval: float = 1.0, stop: threading.Event | None = None) -> None:
    """Publish what is due, sweep every `sweep_interval`, then sleep until a NOTIFY, the next
    retry's time, or `interval` (which bounds how long a row missed while the broker was down waits)."""
    stop = stop or threading.Event()
    listening_on = None
    backoff = interval
    next_sweep = 0.0
    while not stop.is_set():
        try:
            close_old_connections()
            connection.ensure_connection()
            if connection.connection is not listening_on:
                with connection.cursor() as cursor:
                    cursor.execute(f"LISTEN {CHANNEL}")
                listening_on = connection.connection
            if time.monotonic() >= next_sweep:
                jobs_sweep()
                next_sweep = time.monotonic() + settings.CONFIG.sweep_interval
            while outbox_publish() and not stop.is_set():
                pass
            # Woken by a commit's NOTIFY; those that arrived together are taken in one go.
            for _ in connection.connection.notifies(timeout=_seconds_until_next_due(interval), stop_after=1):
                pass
            list(connection.connection.notifies(timeout=0))
            backoff = interval
        except OutboxPublishFailed as exc:
            logger.warning("outbox publish failed; trying again later", extra={"error": str(exc)})
            stop.wait(backoff)
            backoff = min(backoff * 2, 10.0)
        except Exception:  # noqa: BLE001 - the database down: wait and try again
            logger.exception("relay pass failed")
            listening_on = None
            connection.close()
            stop.wait(backoff)
            backoff = min(backoff * 2, 10.0)
