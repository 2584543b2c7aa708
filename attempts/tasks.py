from celery import shared_task

from attempts.services.idempotency import idempotency_records_purge
from attempts.services.invariants import invariants_check_record
from attempts.services.retention import runs_purge, state_changes_purge
from attempts.services.reviews import review_due_counts_refresh


@shared_task(name="attempts.tasks.purge_idempotency_keys")
def purge_idempotency_keys() -> int:
    return idempotency_records_purge()


@shared_task(name="attempts.tasks.purge_runs")
def purge_runs() -> int:
    return runs_purge()


@shared_task(name="attempts.tasks.purge_state_changes")
def purge_state_changes() -> int:
    return state_changes_purge()


@shared_task(name="attempts.tasks.refresh_review_due_counts")
def refresh_review_due_counts() -> int:
    return review_due_counts_refresh()


@shared_task(name="attempts.tasks.check_invariants")
def check_invariants() -> int:
    return len(invariants_check_record())
