"""The transactional outbox: a message row written with its job, published after commit.

One road to the broker: the relay process (evaluation/jobs/relay.py). The transaction that writes a row also sends a
NOTIFY, which PostgreSQL delivers only on commit, so the relay wakes at once and publishes the
row, or learns when to wake for a row due later (a retry); a poll every `interval` catches
whatever it missed (it was down, the broker was). Rows are claimed with SKIP LOCKED, so several
relays publish each row once. Delivery is at least once; the claim's compare-and-swap makes a duplicate message a no-op.

Fair share: of one share's jobs of one kind (a user's submits, say) at most
JOBS_IN_FLIGHT_PER_USER are in flight (published and not finished) at a time. The rest wait here,
unpublished, and go as the share's earlier jobs finish, so a flood queues behind itself while
anyone else's job goes to the broker at once. Jobs with a blank share are never held.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.db.models.expressions import RawSQL
from django.utils import timezone

from evaluation.jobs.registry import handler_for
from evaluation.jobs.transitions import jobs_mark_published
from evaluation.models import EvaluationJob, Outbox
from interviewprep import metrics
from interviewprep.celery import REQUEST_ID_HEADER, app
from interviewprep.logging import log_context
from interviewprep.rabbitmq import broker_connection_drop

logger = logging.getLogger(__name__)

CHANNEL = "interviewprep_outbox"
TASK_NAME = "evaluation.tasks.run_job"


def outbox_add(*, job: EvaluationJob, available_at: datetime | None = None) -> Outbox:
    """Inside the caller's transaction: a message for `job`, published once that commits."""
    now = timezone.now()
    row = Outbox.objects.create(
        job=job, queue=handler_for(job.kind).queue, task_name=TASK_NAME, available_at=available_at or now
    )
    # A row due later notifies too: the relay then knows when to wake for it.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_notify(%s, '')", [CHANNEL])
    return row


# The rows a pass may publish: due, and within their share's room. One query, the only place the
# rule is written. `busy` counts a share's jobs in flight (the partial index job_share_in_flight);
# `turn` is a row's place among its share's due rows that would add one. A row whose job is in
# flight already (the sweeper's re-send of a lost message) adds none and always goes: holding it
# could hold its share for ever. A limit of 0 holds nothing back.
_PUBLISHABLE = """
    WITH due AS (
        SELECT o.id, o.available_at, j.share_key, j.kind, j.status IN ('queued', 'running') AS resent,
               row_number() OVER (
                   PARTITION BY j.share_key, j.kind, j.status IN ('queued', 'running') ORDER BY o.available_at, o.id
               ) AS turn
        FROM evaluation_outbox o JOIN evaluation_evaluationjob j ON j.id = o.job_id
        WHERE o.published_at IS NULL AND o.available_at <= %s
    ), busy AS (
        SELECT share_key, kind, count(*) AS n FROM evaluation_evaluationjob
        WHERE status IN ('queued', 'running') AND share_key <> ''
          AND (share_key, kind) IN (SELECT share_key, kind FROM due WHERE share_key <> '')
        GROUP BY share_key, kind
    )
    SELECT due.id FROM due LEFT JOIN busy USING (share_key, kind)
    WHERE due.share_key = '' OR %s = 0 OR due.resent OR due.turn <= %s - coalesce(busy.n, 0)
    ORDER BY due.available_at, due.id LIMIT %s
"""


def _send(row: Outbox, producer) -> None:
    app.send_task(
        row.task_name,
        args=[row.job_id],
        # What the claim would otherwise read first; a job's kind and subject never change.
        kwargs={"kind": row.job.kind, "subject_id": row.job.subject_id},
        queue=row.queue,
        task_id=f"job-{row.job_id}-msg-{row.pk}",
        # The worker binds it to every line it writes for the job; "-" keeps the publish hook from making one.
        headers={REQUEST_ID_HEADER: row.job.request_id or "-"},
        producer=producer,
        # The retry policy and the publish's time bounds are every publisher's (interviewprep/rabbitmq.py).
        retry=True,
    )


class OutboxPublishFailed(Exception):
    """The broker refused or did not answer; the rows stay for a later pass."""


def outbox_publish(*, limit: int = 200) -> int:
    """Publish up to `limit` rows that are due, each by one publisher; the count published.
    Raises OutboxPublishFailed, once the failure is written on the rows, if the broker failed."""
    failure: Exception | None = None
    room = settings.CONFIG.jobs_in_flight_per_user
    publishable = RawSQL(_PUBLISHABLE, (timezone.now(), room, room, limit))  # noqa: S611 - a constant, bound parameters
    with transaction.atomic():
        rows = list(
            Outbox.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("job")
            .only("job_id", "queue", "task_name", "job__kind", "job__subject_id", "job__request_id")
            .filter(pk__in=publishable, published_at__isnull=True)
            .order_by("available_at", "id")
        )
        if not rows:
            return 0
        try:
            # One broker round trip for the batch rather than one per message.
            with app.producer_or_acquire() as producer:
                try:
                    with producer.batch(max_size=len(rows) + 1):
                        for row in rows:
                            _send(row, producer)
                except Exception:
                    broker_connection_drop(producer.connection)
                    raise
        except Exception as exc:  # noqa: BLE001 - any broker failure leaves the rows for the next pass
            failure = exc
            Outbox.objects.filter(pk__in=[row.pk for row in rows]).update(
                publish_attempts=F("publish_attempts") + 1, last_error=f"{type(exc).__name__}: {exc}"[:300]
            )
        else:
            Outbox.objects.filter(pk__in=[row.pk for row in rows]).update(published_at=timezone.now())
            jobs_mark_published([row.job_id for row in rows])
    if failure is not None:
        raise OutboxPublishFailed(f"{len(rows)} rows left for later: {type(failure).__name__}: {failure}") from failure
    metrics.incr("interviewprep_outbox_published_total", amount=len(rows))
    for row in rows:
        with log_context(request_id=row.job.request_id, job_id=row.job_id):
            logger.info("job message published", extra={"queue": row.queue, "outbox_id": row.pk})
    return len(rows)
