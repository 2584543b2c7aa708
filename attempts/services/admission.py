"""Overload protection: refuse new queued work (503 + Retry-After, nothing written) while its
queue cannot keep up, instead of queueing without bound. One rule for every kind a candidate
can ask for (an evaluation, a run): the kind's backlog at or over its limit refuses."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from django.conf import settings

from evaluation.breaker import remote_model_breaker
from evaluation.jobs import jobs_waiting
from interviewprep import metrics
from interviewprep.errors import Overloaded
from interviewprep.per_process import PerProcess

# The backlog is counted at most this often per process and kind: a count per request would be
# the most expensive query of the submit path.
BACKLOG_CACHE_SECONDS = 1.0
BACKLOG_RETRY_AFTER = 5


@dataclass(frozen=True)
class _Admitted:
    limit_setting: str  # the Config field holding the limit; 0 turns the check off
    refused_reason: str  # the label of interviewprep_submits_refused_total
    refusal: str  # the detail, with {depth} and {retry_after}


ADMITTED: dict[str, _Admitted] = {
    "evaluate": _Admitted(
        "evaluate_queue_limit",
        "backlog",
        "Evaluation is behind ({depth} answers waiting). Nothing was saved; "
        "please submit again in {retry_after} seconds.",
    ),
    "run": _Admitted(
        "run_queue_limit",
        "run_backlog",
        "Runs are behind ({depth} waiting). Nothing was saved; please run again in {retry_after} seconds.",
    ),
}


class _Backlog:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counted: dict[str, tuple[float, int]] = {}


_backlog = PerProcess(_Backlog)


def queue_backlog(*, kind: str, fresh: bool = False) -> int:
    """Jobs of `kind` waiting to run (published or not): the queue's depth, as PostgreSQL knows it."""
    backlog = _backlog.get()
    now = time.monotonic()
    with backlog.lock:
        counted = backlog.counted.get(kind)
        if not fresh and counted is not None and now - counted[0] < BACKLOG_CACHE_SECONDS:
            return counted[1]
    depth = jobs_waiting(kind=kind)
    with backlog.lock:
        backlog.counted[kind] = (now, depth)
    return depth


def queue_backlog_forget() -> None:
    """Forget this process's recent backlog counts, so the next check counts afresh (for tests)."""
    backlog = _backlog.get()
    with backlog.lock:
        backlog.counted.clear()


def evaluate_backlog(*, fresh: bool = False) -> int:
    return queue_backlog(kind="evaluate", fresh=fresh)


def queue_over_limit(*, kind: str) -> int | None:
    """The backlog of `kind` when it is at or over its limit (where new work is refused), else None."""
    limit = getattr(settings.CONFIG, ADMITTED[kind].limit_setting)
    if not limit:
        return None
    depth = queue_backlog(kind=kind)
    return depth if depth >= limit else None


def fair_share(user) -> str:
    """The share a user's jobs are counted in: the relay keeps at most JOBS_IN_FLIGHT_PER_USER
    of one user's jobs of a kind in flight, so a flood waits behind no one but itself."""
    return f"user:{user.pk}"


def remote_grader_open() -> bool:
    """Whether the remote model's breaker refuses calls now (one Redis round trip)."""
    return remote_model_breaker().state() == "open"


def admission_check(*, kind: str, evaluator: str | None = None) -> None:
    """Raise Overloaded when new work of `kind` must wait for the queue to drain, or when the
    remote model that would grade it is failing."""
    depth = queue_over_limit(kind=kind)
    if depth is not None:
        admitted = ADMITTED[kind]
        metrics.incr("interviewprep_submits_refused_total", {"reason": admitted.refused_reason})
        raise Overloaded(
            admitted.refusal.format(depth=depth, retry_after=BACKLOG_RETRY_AFTER),
            retry_after=BACKLOG_RETRY_AFTER,
        )
    if evaluator == "remote" and remote_grader_open():
        retry_after = max(1, int(remote_model_breaker().retry_after()))
        metrics.incr("interviewprep_submits_refused_total", {"reason": "breaker"})
        raise Overloaded(
            "The grading service is failing right now. Nothing was saved; "
            f"please submit again in {retry_after} seconds.",
            retry_after=retry_after,
        )


# Read-only, for pages that say why a result is slow; the rules are the admission check's own.
EVALUATION_BEHIND = "Evaluation is running behind: many answers are waiting, so your result may take longer than usual."
GRADER_FAILING = (
    "The service that grades written answers is failing right now; "
    "answers it grades wait until it recovers, and new ones cannot be submitted."
)


def evaluation_degraded(*, evaluator: str | None = None) -> str | None:
    """Why evaluation is slow right now, in a candidate's words, or None. The breaker counts
    for answers the remote model grades, or for any when `evaluator` is not given."""
    if queue_over_limit(kind="evaluate") is not None:
        return EVALUATION_BEHIND
    if evaluator in (None, "remote") and remote_grader_open():
        return GRADER_FAILING
    return None
