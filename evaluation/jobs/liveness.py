"""Liveness: each process says it does its part, in a row of its own, and readers judge the rows.

The sweeper writes its row after every pass. Each worker writes its row on a timer from its
consumer's event loop: whether it has a free child, and when it last took a job. A worker that
has had room and taken nothing for longer than `worker_stall_after`, while its queues hold
messages, has stopped consuming though alive: /healthz names it and a supervisor restarts it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from evaluation.models import ProcessBeat

SWEEPER = "sweeper"
# Rows of workers silent this long are gone (killed, scaled down): the sweeper forgets them.
FORGET_AFTER = timedelta(hours=1)


def sweeper_beat_record(*, now: datetime | None = None) -> None:
    now = now or timezone.now()
    _upsert(ProcessBeat(name=SWEEPER, role=ProcessBeat.Role.SWEEPER, beat_at=now))


def worker_beat_record(
    *, name: str, queues: list[str], room_since: datetime | None, took_job_at: datetime | None
) -> None:
    row = ProcessBeat(
        name=name,
        role=ProcessBeat.Role.WORKER,
        queues=",".join(queues),
        beat_at=timezone.now(),
        room_since=room_since,
        took_job_at=took_job_at,
    )
    _upsert(row)


def worker_beat_forget(*, name: str) -> None:
    ProcessBeat.objects.filter(name=name, role=ProcessBeat.Role.WORKER).delete()


def beats_forget_gone(*, now: datetime | None = None) -> int:
    now = now or timezone.now()
    deleted, _ = ProcessBeat.objects.filter(role=ProcessBeat.Role.WORKER, beat_at__lt=now - FORGET_AFTER).delete()
    return deleted


def _upsert(row: ProcessBeat) -> None:
    # One statement whether the row exists or not.
    ProcessBeat.objects.bulk_create(
        [row],
        update_conflicts=True,
        unique_fields=["name"],
        update_fields=["queues", "beat_at", "room_since", "took_job_at"],
    )


def sweep_allowance() -> float:
    """How long a job may stay stuck before the sweeper must have sent it again: its threshold
    plus one interval between passes."""
    return settings.CONFIG.stale_job_after + settings.CONFIG.sweep_interval


@dataclass(frozen=True)
class SweeperState:
    age_seconds: float | None  # None before the first pass
    overdue: bool  # no pass for more than two intervals


def sweeper_state(*, now: datetime | None = None) -> SweeperState:
    now = now or timezone.now()
    last = ProcessBeat.objects.filter(name=SWEEPER).values_list("beat_at", flat=True).first()
    if last is None:
        return SweeperState(None, True)
    age = (now - last).total_seconds()
    return SweeperState(age, age > 2 * settings.CONFIG.sweep_interval)


@dataclass(frozen=True)
class WorkerState:
    name: str
    queues: tuple[str, ...]
    beat_age_seconds: float
    idle_seconds: float  # with room and nothing taken
    stalled: bool

    def describe(self) -> str:
        if self.stalled:
            return f"stalled: room for a job and messages waiting, none taken for {self.idle_seconds:.0f} s"
        return "ok"


def workers_state(*, depths: dict[str, int], now: datetime | None = None) -> list[WorkerState]:
    """Every worker heard from within `worker_stall_after`, judged against the broker's depths
    (`depths[queue] > 0`: messages wait there; -1 or missing: unknown, so never a stall)."""
    now = now or timezone.now()
    bound = settings.CONFIG.worker_stall_after
    states = []
    rows = ProcessBeat.objects.filter(role=ProcessBeat.Role.WORKER, beat_at__gte=now - timedelta(seconds=bound))
    for row in rows:
        queues = tuple(q for q in row.queues.split(",") if q)
        idle = 0.0
        if row.room_since is not None:
            since = max(row.room_since, row.took_job_at) if row.took_job_at else row.room_since
            idle = max(0.0, (now - since).total_seconds())
        waiting = any(depths.get(queue, 0) > 0 for queue in queues)
        states.append(
            WorkerState(
                name=row.name,
                queues=queues,
                beat_age_seconds=(now - row.beat_at).total_seconds(),
                idle_seconds=idle,
                stalled=waiting and idle > bound,
            )
        )
    return states
