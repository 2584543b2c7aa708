"""How many queued jobs of each queue have lost their message: the sweeper sends a queued job
again only within that count, so a job that merely waits in a long backlog is never duplicated.

A queued job's message is in the broker (ready), or in a worker's hands between delivery and
claim (milliseconds: the claim moves the job to running), or lost. So the queued jobs whose
messages were all published, less the messages ready in the queue, is what was lost. Extra
messages (a retry's, a duplicate's) only hide a loss until the backlog drains; they never cause
a re-send.
"""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from evaluation.jobs.queue_depths import queue_depths
from evaluation.models import EvaluationJob, JobStatus, Outbox


def lost_messages_per_queue() -> dict[str, int]:
    """Queue -> how many of its queued jobs have no message left; a queue whose depth the
    broker did not give is left out (nothing is known lost there)."""
    # The broker is read after this moment, and a job counts only if every message of its was
    # published before it: a message published meanwhile is never taken for a lost one.
    before = timezone.now()
    depths = queue_depths()
    lost = {}
    for queue, depth in depths.items():
        if depth < 0:
            continue
        published = Outbox.objects.filter(job=OuterRef("pk"), queue=queue, published_at__lt=before)
        unsettled = Outbox.objects.filter(job=OuterRef("pk")).filter(
            Q(published_at__isnull=True) | Q(published_at__gte=before)
        )
        waiting = EvaluationJob.objects.filter(Exists(published), status=JobStatus.QUEUED).exclude(Exists(unsettled))
        missing = waiting.count() - depth
        if missing > 0:
            lost[queue] = missing
    return lost
