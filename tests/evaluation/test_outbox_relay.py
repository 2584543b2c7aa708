"""The relay publishes a row when the transaction that wrote it commits (its NOTIFY), and a
delayed row when it comes due: never only when a poll comes round."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from evaluation.jobs.outbox import outbox_add
from evaluation.models import EvaluationJob, Outbox
from tests.factories import AttemptFactory
from tests.helpers import submit_via_service
from tests.processes import start_relay, wait_for

# Far longer than the waits below: a row published within them was not published by a poll.
SLEEPY = 600


def _published(outbox_id: int) -> bool:
    return Outbox.objects.filter(pk=outbox_id, published_at__isnull=False).exists()


@pytest.mark.django_db(transaction=True)
def test_a_committed_submit_wakes_the_relay_and_a_delayed_row_is_published_when_due(tmp_path):
    relay = start_relay(tmp_path, interval=SLEEPY)
    try:
        attempt = AttemptFactory()
        # The first one may be published by the relay's first pass; once it is, the relay sleeps.
        _, first_job = submit_via_service(attempt, "score=1")
        wait_for(lambda: _published(Outbox.objects.get(job_id=first_job).pk), timeout=60, message="first row")
        _, second_job = submit_via_service(attempt, "score=2")
        second = Outbox.objects.get(job_id=second_job).pk
        wait_for(lambda: _published(second), timeout=30, message="the row whose commit notified the relay")

        with transaction.atomic():
            delayed = outbox_add(
                job=EvaluationJob.objects.get(pk=second_job), available_at=timezone.now() + timedelta(seconds=1)
            )
        wait_for(lambda: _published(delayed.pk), timeout=30, message="the delayed row once due")
        assert relay.proc.poll() is None, relay.output()
    finally:
        relay.stop()
