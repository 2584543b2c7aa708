"""One attempt's timeline for staff: the requests that made its submissions and runs, the
regrades of its submissions, every state change, every try of their jobs, and the writes of its
cached copy, in time order."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db.models import Q

from attempts.cache import attempt_cache_writes
from attempts.models import Attempt, Regrade, Run, StateChange, Submission
from attempts.selectors.regrades import REGRADE
from attempts.services.attempts import EVALUATE
from attempts.services.runs import RUN
from evaluation.jobs import jobs_of_subjects

# Within one instant, the request first, then what it changed, then the tries it caused, and the
# cache writes that follow a change.
_ORDER = {"request": 0, "state": 1, "try": 2, "cache": 3}


@dataclass(frozen=True)
class TimelineEvent:
    at: datetime
    type: str  # "request", "state", "try" or "cache"
    summary: str
    request_id: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Timeline:
    events: list[TimelineEvent]
    # The cache writes come from Redis, best effort: False when it did not answer (the rest stands).
    cache_writes_shown: bool


def attempt_timeline(*, attempt_id: int) -> Timeline | None:
    """None when there is no such attempt. Seven database reads however long the attempt's
    history, and one Redis read for the cache writes (the last `WRITES_KEPT` of them)."""
    if not Attempt.objects.filter(pk=attempt_id).exists():
        return None
    submissions = list(
        Submission.objects.filter(attempt_id=attempt_id).values("pk", "created_at", "language", "idempotency_key")
    )
    runs = list(Run.objects.filter(attempt_id=attempt_id).values("pk", "created_at", "language"))
    regrades = list(Regrade.objects.filter(submission__attempt_id=attempt_id))
    jobs = jobs_of_subjects(
        [
            (EVALUATE, [s["pk"] for s in submissions]),
            (RUN, [r["pk"] for r in runs]),
            (REGRADE, [regrade.pk for regrade in regrades]),
        ]
    )
    # The request that made a submission or run is the one its first job keeps.
    made_by = {}
    for job in jobs:
        made_by.setdefault((job.kind, job.subject_id), job.request_id)
    events = [
        TimelineEvent(
            at=s["created_at"],
            type="request",
            summary=f"submit: submission {s['pk']} ({s['language']})",
            request_id=made_by.get((EVALUATE, s["pk"]), ""),
            details={"submission_id": s["pk"], "idempotency_key": s["idempotency_key"]},
        )
        for s in submissions
    ]
    events += [
        TimelineEvent(
            at=r["created_at"],
            type="request",
            summary=f"run: run {r['pk']} ({r['language']})",
            request_id=made_by.get((RUN, r["pk"]), ""),
            details={"run_id": r["pk"]},
        )
        for r in runs
    ]
    events += [event for regrade in regrades for event in _regrade_events(regrade)]
    events += [_state_event(change) for change in _state_changes(attempt_id, submissions, runs)]
    events += [_try_event(job, job_try) for job in jobs for job_try in job.job_tries.all()]
    writes = attempt_cache_writes(attempt_id=attempt_id)
    events += [_cache_event(write) for write in writes or ()]
    events.sort(key=lambda event: (event.at, _ORDER[event.type]))
    return Timeline(events=events, cache_writes_shown=writes is not None)


def _state_changes(attempt_id: int, submissions: list[dict], runs: list[dict]) -> list[StateChange]:
    wanted = Q(entity="attempt", object_id=attempt_id)
    if submissions:
        wanted |= Q(entity="submission", object_id__in=[s["pk"] for s in submissions])
    if runs:
        wanted |= Q(entity="run", object_id__in=[r["pk"] for r in runs])
    return list(StateChange.objects.filter(wanted).order_by("id"))


def _state_event(change: StateChange) -> TimelineEvent:
    return TimelineEvent(
        at=change.created_at,
        type="state",
        summary=f"{change.entity} {change.object_id}: {change.from_status} → {change.to_status}",
        details={"actor": change.actor, "reason": change.reason},
    )


def _regrade_events(regrade: Regrade) -> list[TimelineEvent]:
    """Its start (a staff member's request, made for a question change) and, once over, its verdict."""
    details = {
        "regrade_id": regrade.pk,
        "submission_id": regrade.submission_id,
        "question_change_id": regrade.change_id,
    }
    events = [
        TimelineEvent(
            at=regrade.created_at,
            type="request",
            summary=f"regrade: submission {regrade.submission_id}, question change {regrade.change_id}",
            details=details,
        )
    ]
    if regrade.finished_at is not None:
        scores = f"{_score(regrade.previous_score)} → {_score(regrade.score)} " if regrade.score is not None else ""
        events.append(
            TimelineEvent(
                at=regrade.finished_at,
                type="state",
                summary=f"regrade {regrade.pk}: {scores}({regrade.status})",
                details=details,
            )
        )
    return events


def _score(score: float | None) -> str:
    return "none" if score is None else f"{score:g}"


def _try_event(job, job_try) -> TimelineEvent:
    return TimelineEvent(
        at=job_try.started_at,
        type="try",
        summary=f"{job.kind} job {job.pk}, try {job_try.number}: {job_try.outcome}",
        request_id=job_try.request_id,
        details={
            "job_id": job.pk,
            "subject_id": job.subject_id,
            "worker": job_try.worker,
            "finished_at": job_try.finished_at,
            "duration_ms": job_try.duration_ms,
            "error": job_try.error,
        },
    )


def _cache_event(write: dict[str, Any]) -> TimelineEvent:
    return TimelineEvent(
        at=datetime.fromtimestamp(write["at"], tz=UTC),
        type="cache",
        summary=f"cache write, stamp {write['stamp']} (version {write['version']}, {write['status']}): "
        f"{write['outcome']}",
        request_id=write["request_id"],
        details={key: write[key] for key in ("stamp", "version", "status", "outcome", "process")},
    )


def timeline_payload(timeline: Timeline) -> dict[str, Any]:
    """The API's body without the attempt id: the events, and `cache_writes` "shown" or
    "unavailable"."""
    return {
        "events": [asdict(event) for event in timeline.events],
        "cache_writes": "shown" if timeline.cache_writes_shown else "unavailable",
    }
