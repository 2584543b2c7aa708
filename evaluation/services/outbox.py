"""The transactional outbox: rows written with their job, published after commit.

Two roads publish a row, and both claim it with `SELECT .. FOR UPDATE SKIP LOCKED` so a row is
published by one of them: the fast path, a thread of the process that committed (so a hung
broker never holds up the request), and the relay process, which publishes whatever the fast
path missed (the process died after commit, the broker was down) and every delayed retry.
Delivery is at least once; the task's compare-and-swap claim makes a duplicate a no-op.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterable
from datetime import datetime

from django.db import close_old_connections, connection, transaction
from django.db.models import F
from django.utils import timezone

from evaluation.models import EvaluationJob, JobKind, JobStatus, Outbox
from interviewprep import metrics
from interviewprep.background import PerProcess
from interviewprep.db import run_prepared

logger = logging.getLogger(__name__)

TASKS = {
    JobKind.EVALUATE: ("evaluation.tasks.run_evaluate_job", "evaluate"),
    JobKind.GENERATE: ("evaluation.tasks.run_generate_job", "generate"),
}


def outbox_add(*, job: EvaluationJob, available_at: datetime | None = None) -> Outbox:
    """Inside the caller's transaction: a message for `job`, published after commit."""
    task_name, queue_name = TASKS[JobKind(job.kind)]
    now = timezone.now()
    row = Outbox.objects.create(job=job, queue=queue_name, task_name=task_name, available_at=available_at or now)
    if row.available_at <= now:
        outbox_publish_after_commit(outbox_id=row.pk)
    return row


def outbox_publish_after_commit(*, outbox_id: int) -> None:
    """Inside the transaction that wrote the row: the fast path publishes it once that commits."""
    transaction.on_commit(lambda: _fast_publisher.get().submit([outbox_id]))


def _publish(row: Outbox, producer) -> None:
    from interviewprep.celery import app

    app.send_task(
        row.task_name,
        args=[row.job_id],
        queue=row.queue,
        task_id=f"job-{row.job_id}-msg-{row.pk}",
        producer=producer,
        retry=True,
        retry_policy={"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2},
    )


def outbox_publish(*, ids: Iterable[int] | None = None, limit: int = 200, path: str = "relay") -> int:
    """Publish available, unpublished rows (the given ids, or any), each by one publisher.

    Two prepared statements around the publishing: the fast path runs this once per submit, and
    through the ORM its three statements cost more CPU than the submit's own transaction."""
    now = timezone.now()
    published = 0
    with transaction.atomic():
        if ids is None:
            found = run_prepared(_CLAIM_ANY, [now, limit])
        else:
            found = run_prepared(_CLAIM_THESE, [now, list(ids), limit])
        rows = [Outbox(id=i, job_id=j, queue=q, task_name=t, publish_attempts=n) for i, j, q, t, n in found]
        done: list[Outbox] = []
        if rows:
            from interviewprep.celery import app

            try:
                # One Redis pipeline for the whole batch (kombu's Producer.batch): a client and a
                # round trip per message were most of a publish's cost.
                with app.producer_or_acquire() as producer, producer.batch(max_size=len(rows) + 1):
                    for row in rows:
                        _publish(row, producer)
            except Exception as exc:  # noqa: BLE001 - any broker failure leaves the rows for later
                # None is marked: the relay publishes them all again (a message the broker got
                # twice is harmless, the claim being idempotent).
                Outbox.objects.filter(pk__in=[row.pk for row in rows]).update(
                    publish_attempts=F("publish_attempts") + 1, last_error=f"{type(exc).__name__}: {exc}"[:300]
                )
                logger.warning("outbox publish failed", extra={"outbox_ids": [r.pk for r in rows], "error": str(exc)})
            else:
                done = rows
        if done:
            # A mark lost in a database crash only means the relay publishes the row again, and
            # a duplicate message is harmless (the claim is idempotent): no fsync to wait for.
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit TO OFF")
            stamp = timezone.now()
            run_prepared(_MARK_PUBLISHED, [stamp, [r.pk for r in done], JobStatus.QUEUED, stamp, JobStatus.PENDING])
            published = len(done)
    if published:
        metrics.incr_buffered("interviewprep_outbox_published_total", {"path": path}, published)
    return published


_OUTBOX, _JOB = Outbox._meta.db_table, EvaluationJob._meta.db_table
_CLAIM = f"""
    SELECT id, job_id, queue, task_name, publish_attempts FROM {_OUTBOX}
     WHERE published_at IS NULL AND available_at <= %s {{these}}
     ORDER BY available_at, id LIMIT %s
       FOR UPDATE SKIP LOCKED
"""  # noqa: S608 - the table names are ours, every value is a parameter
_CLAIM_ANY = _CLAIM.format(these="")
_CLAIM_THESE = _CLAIM.format(these="AND id = ANY(%s)")
# A published job moves from pending to queued with its row (the sweeper's "never picked up").
_MARK_PUBLISHED = f"""
    WITH published AS (UPDATE {_OUTBOX} SET published_at = %s WHERE id = ANY(%s) RETURNING job_id)
    UPDATE {_JOB} SET status = %s, updated_at = %s
     WHERE id IN (SELECT job_id FROM published) AND status = %s
"""  # noqa: S608 - the table names are ours, every value is a parameter


# Reconnecting per burst cost a new PostgreSQL session for most submits (measured: 0.7 per
# submit, 6-9 ms of CPU each); a connection idle this long is closed.
IDLE_CLOSE_SECONDS = 5.0
BATCH_WINDOW_SECONDS = 0.002


class FastPublisher:
    """A daemon thread per process that publishes rows right after their commit."""

    def __init__(self) -> None:
        self.queue: queue.SimpleQueue[list[int]] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="outbox-fast-path", daemon=True)
        self.thread.start()

    def submit(self, ids: list[int]) -> None:
        self.queue.put(ids)

    def _loop(self) -> None:
        while True:
            try:
                ids = self.queue.get(timeout=IDLE_CLOSE_SECONDS)
            except queue.Empty:
                # Idle for a while: give the connection back rather than hold it between bursts.
                connection.close()
                continue
            # Gather what else comes within a moment: one transaction and one producer for a
            # burst of submits (measured: publishing is most of a fresh submit's cost).
            until = time.monotonic() + BATCH_WINDOW_SECONDS
            while len(ids) < 200 and (left := until - time.monotonic()) > 0:
                try:
                    ids.extend(self.queue.get(timeout=left))
                except queue.Empty:
                    break
            try:
                close_old_connections()
                outbox_publish(ids=ids, path="fast")
            except Exception:  # noqa: BLE001 - the relay publishes what this misses
                logger.exception("fast-path publish failed; the relay will publish it")


_fast_publisher = PerProcess(FastPublisher)


def outbox_relay_loop(*, interval: float = 0.5, stop: threading.Event | None = None) -> None:
    """The relay process: publish what the fast path missed and every retry that came due."""
    stop = stop or threading.Event()
    backoff = interval
    while not stop.is_set():
        try:
            close_old_connections()
            count = outbox_publish(path="relay")
            backoff = interval
            if count:
                continue
        except Exception:  # noqa: BLE001 - database or broker down: wait and try again
            logger.exception("relay pass failed")
            backoff = min(backoff * 2, 10.0)
        stop.wait(backoff)
