"""Reads of runs, shaped as the API shows them."""

from __future__ import annotations

from typing import Any

from attempts.models import Run, RunStatus
from interviewprep.errors import NotFound


def run_get_for_user(*, user, run_id: int) -> Run:
    """One run of this user. Another user's run is 'not found', indistinguishable from a
    missing one."""
    run = Run.objects.filter(pk=run_id, user=user).defer("answer").first()
    if run is None:
        raise NotFound(f"There is no run {run_id}.")
    return run


def run_accepted_payload(run: Run) -> dict[str, Any]:
    """The answer to a run's creation, before it ran."""
    return {"id": run.pk, "status": run.status, "language": run.language}


def run_payload(run: Run) -> dict[str, Any]:
    result = run.result if run.status == RunStatus.COMPLETED and run.result else {}
    return {
        "id": run.pk,
        "attempt_id": run.attempt_id,
        "status": run.status,
        "language": run.language,
        "cases": result.get("cases", []),
        "load_error": result.get("load_error"),
        "stopped": result.get("stopped"),
        "error": run.error if run.status == RunStatus.FAILED else None,
        "created_at": run.created_at.isoformat(),
    }
