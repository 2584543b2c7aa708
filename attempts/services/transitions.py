"""The state machines of attempts, submissions, practice requests and runs: one table of legal
moves per entity and one function that moves.

`transition()` expects the row to be locked by the caller (it runs inside the caller's
`transaction.atomic()` after a `select_for_update`); `transition_locked()` locks it itself.
An illegal move is counted, logged with the ids and refused with `IllegalTransition`, which
rolls the caller's transaction back: the row stays as it was. Every new version of an attempt
and every new status of a run are announced on their channels (`attempt_channel`, `run_channel`)
once the transaction commits (`Machine.moved`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import models, transaction

from attempts.cache import attempt_cache_restamp
from attempts.models import (
    Attempt,
    AttemptStatus,
    PracticeRequest,
    PracticeRequestStatus,
    Run,
    RunStatus,
    StateChange,
    Submission,
    SubmissionStatus,
)
from interviewprep import metrics
from interviewprep.errors import IllegalTransition
from interviewprep.notify import notify_on_commit
from interviewprep.writes import Writes, writes_into

logger = logging.getLogger(__name__)

A, S, P, R = AttemptStatus, SubmissionStatus, PracticeRequestStatus, RunStatus

# A new submission moves an attempt from any state back to queued (latest submission wins).
ATTEMPT_MOVES: dict[str, set[str]] = {
    A.DRAFT: {A.QUEUED},
    A.QUEUED: {A.QUEUED, A.PROCESSING, A.FAILED},
    A.PROCESSING: {A.QUEUED, A.COMPLETED, A.FAILED},
    A.COMPLETED: {A.QUEUED},
    A.FAILED: {A.QUEUED},
}
SUBMISSION_MOVES: dict[str, set[str]] = {
    S.QUEUED: {S.PROCESSING, S.SUPERSEDED, S.FAILED},
    S.PROCESSING: {S.COMPLETED, S.FAILED, S.SUPERSEDED},
    # A dead-lettered submission may be replayed by staff.
    S.FAILED: {S.QUEUED},
    S.COMPLETED: set(),
    S.SUPERSEDED: set(),
}
PRACTICE_REQUEST_MOVES: dict[str, set[str]] = {
    P.QUEUED: {P.PROCESSING, P.FAILED},
    P.PROCESSING: {P.COMPLETED, P.FAILED},
    P.FAILED: {P.QUEUED},
    P.COMPLETED: set(),
}

RUN_MOVES: dict[str, set[str]] = {
    # A job dead-lettered before its first try started fails a queued run.
    R.QUEUED: {R.PROCESSING, R.FAILED},
    R.PROCESSING: {R.COMPLETED, R.FAILED},
    # A dead-lettered run may be replayed by staff.
    R.FAILED: {R.QUEUED},
    R.COMPLETED: set(),
}


def attempt_channel(attempt_id: int) -> str:
    """Where an attempt's new version is published after each commit (`interviewprep.notify`)."""
    return f"attempt:{attempt_id}"


def run_channel(run_id: int) -> str:
    """Where a run's new status is published after each commit (`interviewprep.notify`)."""
    return f"run:{run_id}"


def _attempt_moved(attempt: Attempt) -> list[str]:
    # Every move of an attempt is a new version: its cache floor rises before the commit, so
    # once this commits no older copy is served, and a wait on it looks again after the commit
    # (best effort: a lost notification times out).
    attempt.version += 1
    notify_on_commit(attempt_channel(attempt.pk), str(attempt.version))
    return ["version", attempt_cache_restamp(attempt)]


def _run_moved(run: Run) -> list[str]:
    notify_on_commit(run_channel(run.pk), run.status)
    return []


@dataclass(frozen=True)
class Machine:
    """One entity's legal moves, and what else each move of one of its rows does (the fields it
    adds to the save)."""

    entity: str
    moves: dict[str, set[str]]
    moved: Callable[[Any], list[str]] = lambda obj: []


MACHINES: dict[type[models.Model], Machine] = {
    Attempt: Machine("attempt", ATTEMPT_MOVES, _attempt_moved),
    Submission: Machine("submission", SUBMISSION_MOVES),
    PracticeRequest: Machine("practice_request", PRACTICE_REQUEST_MOVES),
    Run: Machine("run", RUN_MOVES, _run_moved),
}


def is_legal(model: type[models.Model], from_status: str, to_status: str) -> bool:
    return to_status in MACHINES[model].moves.get(from_status, set())


def _current(obj: models.Model, field: str, value: Any) -> Any:
    # Compare a relation by its id: reading the related object would cost a query.
    if isinstance(value, models.Model):
        current_id = getattr(obj, obj._meta.get_field(field).attname)
        return value if current_id == value.pk else None
    return getattr(obj, field)


def transition(
    obj: Attempt | Submission | PracticeRequest | Run,
    to: str,
    *,
    actor: str,
    reason: str = "",
    changes: dict[str, Any] | None = None,
    writes: Writes | None = None,
) -> bool:
    """Move a locked row to `to`. Returns False when it already is there and nothing else
    changes. `changes` are other fields set in the same save (an attempt's latest submission).
    The save and its state-change row join the caller's `writes`, else go now, as one statement.
    """
    model = type(obj)
    machine = MACHINES[model]
    entity = machine.entity
    from_status = obj.status
    changes = changes or {}
    unchanged = all(_current(obj, field, value) == value for field, value in changes.items())
    if from_status == to and unchanged:
        return False
    if not is_legal(model, from_status, to):
        metrics.incr("interviewprep_invalid_transitions_total", {"entity": entity, "from": from_status, "to": to})
        logger.warning(
            "illegal transition refused",
            extra={"entity": entity, "object_id": obj.pk, "from": from_status, "to": to, "actor": actor},
        )
        raise IllegalTransition(
            f"{entity} {obj.pk} cannot go from {from_status} to {to}",
            entity=entity,
            object_id=obj.pk,
            from_status=from_status,
            to_status=to,
        )
    obj.status = to
    for field, value in changes.items():
        setattr(obj, field, value)
    change = StateChange(
        entity=entity, object_id=obj.pk, from_status=from_status, to_status=to, actor=actor, reason=reason[:200]
    )
    _write(obj, ["status", "updated_at", *changes, *machine.moved(obj)], change, writes)
    return True


def _write(obj: Any, fields: list[str], change: StateChange, writes: Writes | None) -> None:
    """The row's save and its state change: in the caller's `writes`, else one statement now."""
    with writes_into(writes) as step:
        step.save(obj, fields)
        step.insert([change])


def attempt_renew(
    attempt: Attempt,
    *,
    actor: str,
    reason: str,
    changes: dict[str, Any] | None = None,
    writes: Writes | None = None,
) -> None:
    """What a read shows of a locked attempt changed under the same status (a regrade replaced
    its result): a new version, restamped and announced as a move is, and a state change from
    its status to itself. Not a move of the machine: its table is untouched."""
    changes = changes or {}
    for field, value in changes.items():
        setattr(attempt, field, value)
    change = StateChange(
        entity="attempt",
        object_id=attempt.pk,
        from_status=attempt.status,
        to_status=attempt.status,
        actor=actor,
        reason=reason[:200],
    )
    _write(attempt, ["updated_at", *changes, *MACHINES[Attempt].moved(attempt)], change, writes)


def transition_locked(
    model: type[Attempt] | type[Submission] | type[PracticeRequest] | type[Run],
    pk: int,
    to: str,
    *,
    actor: str,
    reason: str = "",
) -> bool:
    with transaction.atomic():
        obj = model.objects.select_for_update().get(pk=pk)
        return transition(obj, to, actor=actor, reason=reason)
