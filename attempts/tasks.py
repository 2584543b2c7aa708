from celery import shared_task

from attempts.services.idempotency import idempotency_records_purge


@shared_task(name="attempts.tasks.purge_idempotency_keys")
def purge_idempotency_keys() -> int:
    return idempotency_records_purge()
