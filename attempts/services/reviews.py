"""The per-user due count the home page shows, rebuilt from the review schedule by a beat task."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q
from django.utils import timezone

from attempts.models import Result, ResultOutcome, ReviewDueCount
from attempts.selectors.history import scored_answers_by_user
from attempts.selectors.reviews import active_question_ids, review_next_upcoming, review_schedule

# Users per query of their history: bounds the memory of one step, not the work.
DUE_COUNT_BATCH = 200


def review_due_counts_refresh(*, now: datetime | None = None, batch_size: int = DUE_COUNT_BATCH) -> int:
    """Recompute every user's `ReviewDueCount` as of `now`: the users with a scored answer, and
    those with a count but no scored answer left (a regrade took it), whose count drops to 0.
    Returns how many users were counted. Each row is an upsert: two runs at once write the same."""
    now = now or timezone.now()
    active = active_question_ids()
    user_ids = _users_to_count()
    for start in range(0, len(user_ids), batch_size):
        batch = user_ids[start : start + batch_size]
        history = scored_answers_by_user(user_ids=batch)
        rows = []
        for user_id in batch:
            schedule = review_schedule(history.get(user_id, []), active_question_ids=active)
            upcoming = review_next_upcoming(schedule, now=now)
            rows.append(
                ReviewDueCount(
                    user_id=user_id,
                    due=sum(1 for review in schedule if review.is_due(now)),
                    next_due_at=upcoming.due_at if upcoming else None,
                    computed_at=now,
                )
            )
        ReviewDueCount.objects.bulk_create(
            rows, update_conflicts=True, unique_fields=["user"], update_fields=["due", "next_due_at", "computed_at"]
        )
    return len(user_ids)


def _users_to_count() -> list[int]:
    scored = Result.objects.filter(outcome=ResultOutcome.SCORED).values_list("submission__attempt__user_id", flat=True)
    counted = ReviewDueCount.objects.filter(~Q(due=0) | Q(next_due_at__isnull=False)).values_list("user_id", flat=True)
    return sorted(set(scored.distinct()) | set(counted))
