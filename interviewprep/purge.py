"""The one way old rows are deleted: a batch at a time, each batch its own short transaction.

A single DELETE of a month of rows would hold its locks (and a connection) for as long as it
takes, and every writer touching those rows would queue behind it. A batch locks its rows with
SKIP LOCKED, so a row another transaction is writing is left for the next run instead of waited
for, and walks on by primary key, so a row skipped (locked, or kept by `delete`) is never read
again in the same run and the run always ends.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet


def purge_in_batches(candidates: QuerySet, *, delete: Callable[[list[int]], int] | None = None) -> int:
    """Delete the rows of `candidates` (a queryset of the rows past their retention), in
    batches of PURGE_BATCH_SIZE; the count deleted. `delete`, given a batch's ids (locked),
    deletes them with what goes with them and returns how many it deleted; by default the rows
    alone are."""
    size = settings.CONFIG.purge_batch_size
    model = candidates.model
    total = 0
    after = 0
    while True:
        with transaction.atomic():
            ids = list(
                candidates.filter(pk__gt=after)
                .select_for_update(skip_locked=True, of=("self",))
                .order_by("pk")
                .values_list("pk", flat=True)[:size]
            )
            if not ids:
                return total
            if delete is None:
                total += model.objects.filter(pk__in=ids).delete()[1].get(model._meta.label, 0)
            else:
                total += delete(ids)
        after = ids[-1]
