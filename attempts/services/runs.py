"""Runs: an answer tried against its question's visible examples or custom inputs, without
submitting it. A `run` job executes it on the `run` queue (its handler: attempts/jobs.py).

A run is not a submission: creating or finishing one never moves its attempt's state,
version, submissions or result. A run in another language makes it the attempt's: only then
is the attempt's row locked and written (its language and its cached copy's stamp).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from attempts.cache import attempt_cache_restamp
from attempts.models import Attempt, QuestionKind, Run, RunStatus
from attempts.services.admission import admission_check, fair_share
from attempts.services.attempts import answer_validate
from attempts.services.languages import answer_language_validate
from attempts.services.transitions import transition
from evaluation.evaluators.code import MAX_INPUTS, code_inputs_validate
from evaluation.jobs import job_enqueue
from interviewprep.errors import InvalidInput, NotFound
from interviewprep.writes import Writes

# The job kind that executes a run (its handler is in attempts/jobs.py).
RUN = "run"
RUN_MAX_INPUTS = MAX_INPUTS  # the code runner's limit, named here for the API's schema


def run_inputs_validate(inputs: Any) -> list[list] | None:
    """None runs the examples; custom inputs are checked by the code runner's own rule before
    anything is stored."""
    return None if inputs is None else code_inputs_validate(inputs)


def run_create(
    *,
    user,
    attempt_id: int,
    answer: str,
    inputs: list[list] | None = None,
    language: str | None = None,
    correlation_id: str = "",
) -> Run:
    """A run and the job that executes it, in one transaction (the caller's, when it has one
    open). Without a language, the attempt's. A refusal (not found, not a coding question, bad
    input or language, overload) writes nothing."""
    answer_validate(answer)
    inputs = run_inputs_validate(inputs)
    # The attempt is only read, never locked: runs must not queue behind its submits.
    found = Attempt.objects.filter(pk=attempt_id, user=user).values_list("question__kind", "language").first()
    if found is None:
        raise NotFound(f"There is no attempt {attempt_id}.")
    kind, attempt_language = found
    if kind != QuestionKind.CODING:
        raise InvalidInput("Run is only for coding questions.")
    language = answer_language_validate(language=attempt_language if language is None else language, question_kind=kind)
    with transaction.atomic():
        admission_check(kind=RUN)
        run = Run.objects.create(user=user, attempt_id=attempt_id, answer=answer, language=language, inputs=inputs)
        if language != attempt_language:
            # Only the language and the cached copy's stamp, and only when the language changes:
            # the attempt's row is locked just then, and its state and version stay as they are.
            attempt = Attempt.objects.select_for_update().only("language", "stamp").get(pk=attempt_id)
            if attempt.language != language:
                attempt.language = language
                attempt.save(update_fields=["language", attempt_cache_restamp(attempt)])
        job_enqueue(kind=RUN, subject_id=run.pk, share_key=fair_share(user), correlation_id=correlation_id)
    return run


def run_lock(*, run_id: int) -> Run:
    """Inside the caller's transaction: the run, its row locked, with its attempt and question
    read (not locked)."""
    return Run.objects.select_related("attempt__question").select_for_update(of=("self",)).get(pk=run_id)


def run_start_processing(*, run: Run, actor: str, writes: Writes | None = None) -> None:
    """Inside the caller's transaction, the run locked (a retry finds it processing already);
    the move joins the caller's `writes`, else goes now."""
    transition(run, RunStatus.PROCESSING, actor=actor, writes=writes)


def run_complete(*, run: Run, result: dict[str, Any], actor: str, writes: Writes | None = None) -> str | None:
    """Inside the caller's fenced transaction, the run locked: the runner's answer is the run's
    result. None when written, else why not (a redelivered job finds it recorded already)."""
    if run.status == RunStatus.COMPLETED:
        return "the run's outcome was already recorded"
    transition(
        run, RunStatus.COMPLETED, actor=actor, changes={"result": result, "finished_at": timezone.now()}, writes=writes
    )
    return None


def run_mark_failed(*, run: Run, actor: str, reason: str, writes: Writes | None = None) -> None:
    """Inside the caller's transaction, the run locked: an unfinished run fails with the reason."""
    if run.status in (RunStatus.QUEUED, RunStatus.PROCESSING):
        transition(
            run,
            RunStatus.FAILED,
            actor=actor,
            reason=reason,
            changes={"error": reason, "finished_at": timezone.now()},
            writes=writes,
        )


def run_requeue(*, run: Run, actor: str, reason: str) -> None:
    """Inside the caller's transaction, the run locked: a failed run waits again (staff replay)."""
    if run.status == RunStatus.FAILED:
        transition(run, RunStatus.QUEUED, actor=actor, reason=reason, changes={"error": "", "finished_at": None})
