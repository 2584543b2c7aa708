"""Hints and "I give up": what a candidate asks to see before finishing an attempt.

Neither is a state change of the attempt (its status and version stay), but both are in its
cached copy, whose stamp each moves. Each is recorded as a StateChange row that keeps the
attempt's status, so the attempt's timeline says when the candidate asked.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from attempts.cache import attempt_cache_restamp
from attempts.models import Attempt, StateChange
from interviewprep.errors import InvalidInput, NotFound


class NoSuchHint(InvalidInput):
    """A hint the question does not have: 409, the request is right but the question has fewer
    hints. An InvalidInput, so a page shows its words."""

    status_code = 409
    code = "no-such-hint"


def _attempt_lock(*, user, attempt_id: int) -> Attempt:
    attempt = (
        Attempt.objects.select_for_update(of=("self",))
        .select_related("question")
        .only("status", "stamp", "hints_revealed", "gave_up_at", "question__hints")
        .filter(pk=attempt_id, user=user)
        .first()
    )
    if attempt is None:
        raise NotFound(f"There is no attempt {attempt_id}.")
    return attempt


def _record(attempt: Attempt, *, actor: str, reason: str) -> None:
    StateChange.objects.create(
        entity="attempt",
        object_id=attempt.pk,
        from_status=attempt.status,
        to_status=attempt.status,
        actor=actor,
        reason=reason,
    )


def attempt_hint_reveal(*, user, attempt_id: int, count: int | None = None) -> Attempt:
    """Reveal the question's hints in order: up to `count` of them, or one more without it.
    Asking for hints already revealed changes nothing, so a retried or double-clicked "show the
    second hint" (`count=2`) reveals one hint, never two. The count never goes down."""
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise InvalidInput("count must be a whole number from 1.", field="count")
    with transaction.atomic():
        attempt = _attempt_lock(user=user, attempt_id=attempt_id)
        total = len(attempt.question.hints)
        if total == 0:
            raise NoSuchHint("This question has no hints.")
        wanted = attempt.hints_revealed + 1 if count is None else count
        if wanted > total:
            if count is not None:
                raise NoSuchHint(f"This question has {total} hint{'s' if total != 1 else ''}.")
            return attempt  # every hint is shown already
        if wanted <= attempt.hints_revealed:
            return attempt
        attempt.hints_revealed = wanted
        attempt.save(update_fields=["hints_revealed", attempt_cache_restamp(attempt)])
        _record(attempt, actor=f"user:{user.pk}", reason=f"hint {wanted} of {total} revealed")
    return attempt


def attempt_give_up(*, user, attempt_id: int, now: datetime | None = None) -> Attempt:
    """ "I give up": the reference answer and its explanation open for this attempt. Giving up
    again keeps the first time."""
    with transaction.atomic():
        attempt = _attempt_lock(user=user, attempt_id=attempt_id)
        if attempt.gave_up_at is not None:
            return attempt
        attempt.gave_up_at = now or timezone.now()
        attempt.save(update_fields=["gave_up_at", attempt_cache_restamp(attempt)])
        _record(attempt, actor=f"user:{user.pk}", reason="gave up: the reference answer opened")
    return attempt
