"""Reads of runs, shaped as the API shows them."""

from __future__ import annotations

from typing import Any

from attempts.models import Run, RunStatus
from evaluation.languages import language_about
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


def run_language(run: Run, result: dict[str, Any]) -> dict[str, Any]:
    """{"id", "name", "version"} of the language the run is in: what the worker reports it ran
    (its result's `language`, as a submission's `details.language`) once it has, else the run's
    language as this web process finds its toolchain (version null when it has none)."""
    ran = result.get("language")
    if isinstance(ran, dict) and isinstance(ran.get("id"), str):
        return {"id": ran["id"], "name": ran.get("name") or ran["id"], "version": ran.get("version")}
    return language_about(run.language)


def run_time(result: dict[str, Any]) -> dict[str, Any] | None:
    """{"compile_ms", "run_ms", "compile_cached"} of a finished run, as a submission's
    `details.time`; None before then, or for a result recorded before workers reported it."""
    time = result.get("time")
    if not isinstance(time, dict):
        return None
    return {
        "compile_ms": time.get("compile_ms"),
        "run_ms": time.get("run_ms"),
        "compile_cached": time.get("compile_cached") is True,
    }


def run_payload(run: Run) -> dict[str, Any]:
    result = run.result if run.status == RunStatus.COMPLETED and run.result else {}
    return {
        "id": run.pk,
        "attempt_id": run.attempt_id,
        "status": run.status,
        "language": run_language(run, result),
        "time": run_time(result),
        "cases": result.get("cases", []),
        "load_error": result.get("load_error"),
        "stopped": result.get("stopped"),
        "error": run.error if run.status == RunStatus.FAILED else None,
        "created_at": run.created_at.isoformat(),
    }
