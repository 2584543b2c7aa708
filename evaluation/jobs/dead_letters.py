"""What staff read of dead letters: the list, its groups and the audit of replays."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, F, Max, Q, QuerySet
from django.db.models.fields.json import KT

from evaluation.models import DeadLetter, DeadLetterReplay

# What letters group by: the error's class, or the question the handler named in its context.
GROUP_KEYS = {"error_class": F("error_class"), "question": KT("context__question")}


@dataclass(frozen=True)
class DeadLetterFilters:
    kind: str | None = None
    error_class: str | None = None
    question: str | None = None
    replayed: bool | None = None
    since: datetime | None = None


def dead_letter_list(filters: DeadLetterFilters | None = None) -> QuerySet[DeadLetter]:
    """Newest first."""
    filters = filters or DeadLetterFilters()
    letters = DeadLetter.objects.all()
    if filters.kind:
        letters = letters.filter(kind=filters.kind)
    if filters.error_class:
        letters = letters.filter(error_class=filters.error_class)
    if filters.question:
        letters = letters.filter(context__question=filters.question)
    if filters.replayed is not None:
        letters = letters.filter(replayed_at__isnull=not filters.replayed)
    if filters.since:
        letters = letters.filter(created_at__gte=filters.since)
    return letters.order_by("-created_at", "-id")


def dead_letter_groups(*, by: str, filters: DeadLetterFilters | None = None) -> list[dict]:
    """Per error class or per question: how many letters, how many wait for a replay, and the
    newest; the group with the newest letter first. A letter that names no question groups
    under None."""
    return list(
        dead_letter_list(filters)
        .order_by()
        .annotate(key=GROUP_KEYS[by])
        .values("key")
        .annotate(count=Count("id"), waiting=Count("id", filter=Q(replayed_at__isnull=True)), newest=Max("created_at"))
        .order_by("-newest", "key")
    )


def dead_letter_replays(*, dead_letter_id: int | None = None) -> QuerySet[DeadLetterReplay]:
    replays = DeadLetterReplay.objects.select_related("user")
    if dead_letter_id is not None:
        replays = replays.filter(dead_letter_id=dead_letter_id)
    return replays.order_by("-created_at", "-id")
