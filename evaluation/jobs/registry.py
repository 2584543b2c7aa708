"""Kinds of work register a handler here; the machinery runs jobs through it and knows nothing
else of them.

A handler's methods are called in a fixed order per try: `lock` (inside the claim's
transaction, before the job's row is locked, so every path takes the subject's locks first),
`discard_reason`, `start`, then `run` outside any transaction, then `record` inside the fenced
transaction that writes the outcome, and `recorded` after its commit. `start` and `record` get
the step's `writes` (interviewprep/writes.py): what they queue there goes to PostgreSQL in one
statement with the machinery's own writes of that step (the try, the job's fenced swap).
`failed` and `requeue` run when the job is dead-lettered and when staff replay it; a replay (and
its dry run) asks `discard_reason` first, and skips the letter when its subject is no longer
wanted.
"""

from __future__ import annotations

from typing import Any, Protocol

from interviewprep.writes import Writes


class JobHandler(Protocol):
    queue: str

    def lock(self, subject_id: int) -> Any:
        """Lock the subject's rows for this transaction and return them (the `subject`)."""

    def lock_key(self, subject: Any) -> str:
        """The Redis lock that keeps two runs from working on the same thing at once."""

    def describe(self, subject: Any) -> dict[str, Any]:
        """Ids that a dead letter keeps so staff can find what it was about; its "question"
        (a slug, or None) is what staff group dead letters by."""

    def discard_reason(self, subject: Any) -> str | None:
        """Why the job is no longer wanted (e.g. a newer submission), or None."""

    def start(self, subject: Any, *, actor: str, try_number: int, writes: Writes) -> Any:
        """The subject moves to processing; returns the plain data `run` needs."""

    def run(self, work: Any) -> Any:
        """The work itself, outside any transaction; may raise TransientJobError or
        PermanentJobError. Returns what `record` writes."""

    def record(self, subject: Any, output: Any, *, actor: str, writes: Writes) -> str | None:
        """Write the outcome; None when written, else why it was discarded."""

    def recorded(self, subject: Any) -> None:
        """After the outcome's commit, before the notifications its writes queued (best effort:
        a cache copy, say)."""

    def failed(self, subject: Any, *, actor: str, reason: str) -> None:
        """The job was dead-lettered: the subject fails."""

    def requeue(self, subject: Any, *, actor: str, reason: str) -> None:
        """Staff replay a dead letter: the subject goes back to waiting."""


_HANDLERS: dict[str, JobHandler] = {}


def register_handler(kind: str, handler: JobHandler) -> None:
    _HANDLERS[kind] = handler


def handler_for(kind: str) -> JobHandler:
    try:
        return _HANDLERS[kind]
    except KeyError:
        raise LookupError(f"no job handler registered for kind {kind!r}") from None


def queues() -> dict[str, str]:
    """Kind -> queue, for every registered kind."""
    return {kind: handler.queue for kind, handler in _HANDLERS.items()}
