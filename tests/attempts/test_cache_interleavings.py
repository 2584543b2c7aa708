"""Promise 7 under seeded interleavings: the cache may lag, never lie.

One writer (its own thread, so its own PostgreSQL connection and real transactions) bumps the
attempt's version through `transition()` on a locked row, then commits or rolls back, and
refreshes the cache after commit, late, or never (a crash). Between any two of its steps the
test thread reads (with and without `min_version`), takes database snapshots as a slow reader
would, stores them late through `_store`, lets the key expire and lets time pass beyond the
writers' floors (on a clock of the test's own). After each read: never a
version older than the last committed one, never older than `min_version`, and the payload is
the database's at that version.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction

from attempts import cache
from attempts.models import Attempt, AttemptStatus
from attempts.selectors.payloads import attempt_payload_from_db
from attempts.services.transitions import ATTEMPT_MOVES, transition
from interviewprep.redis_state import cache_redis
from tests.factories import QuestionFactory, UserFactory

SEEDS = range(1000)
STEPS_PER_RUN = 10


class _Rollback(Exception):
    pass


class Clock:
    """`time` as the cache module sees it, with wall-clock time that the test can move on."""

    def __init__(self) -> None:
        self.offset = 0.0
        self.monotonic = time.monotonic
        self.sleep = time.sleep

    def time(self) -> float:
        return time.time() + self.offset


class Writer:
    """Runs each step in its own thread and connection; a transaction stays open across steps."""

    def __init__(self) -> None:
        self._requests: queue.Queue[Callable[[], Any] | None] = queue.Queue()
        self._replies: queue.Queue[tuple[bool, Any]] = queue.Queue()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        self._atomic: transaction.Atomic | None = None
        self.open_version: int | None = None

    def _loop(self) -> None:
        # Durability is not under test here, and waiting for the WAL flush on each of thousands
        # of commits would be most of the run time; visibility on commit is unchanged.
        with connection.cursor() as cursor:
            cursor.execute("SET synchronous_commit TO OFF")
        try:
            while (work := self._requests.get()) is not None:
                try:
                    self._replies.put((True, work()))
                except BaseException as exc:  # noqa: BLE001 - handed back to the test thread
                    self._replies.put((False, exc))
        finally:
            connection.close()

    def run(self, work: Callable[[], Any]) -> Any:
        self._requests.put(work)
        ok, value = self._replies.get(timeout=30)
        if not ok:
            raise value
        return value

    def begin(self, attempt_id: int, rng: random.Random) -> int:
        def work() -> int:
            self._atomic = transaction.atomic()
            self._atomic.__enter__()
            attempt = Attempt.objects.select_for_update().get(pk=attempt_id)
            targets = sorted(t for t in ATTEMPT_MOVES[attempt.status] if t != attempt.status)
            transition(attempt, rng.choice(targets), actor="test:writer")
            return attempt.version

        self.open_version = self.run(work)
        return self.open_version

    def end(self, *, commit: bool) -> None:
        def work() -> None:
            atomic, self._atomic = self._atomic, None
            if commit:
                atomic.__exit__(None, None, None)
            else:
                atomic.__exit__(_Rollback, _Rollback(), None)

        self.run(work)
        self.open_version = None

    def stop(self) -> None:
        if self._atomic is not None:
            self.end(commit=False)
        self._requests.put(None)
        self._thread.join(timeout=10)


def _strip(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k != "user_id"}


def refresh(attempt_id: int, clock: Clock) -> None:
    """A writer's refresh after its commit: the database's copy, stored as read at the moment
    before it was read."""
    read_at = clock.time()
    cache.attempt_cache_store(payload=attempt_payload_from_db(attempt_id=attempt_id), read_at=read_at)


def run_interleaving(seed: int, attempt_id: int, writer: Writer, clock: Clock) -> list[str]:
    rng = random.Random(seed)
    initial = attempt_payload_from_db(attempt_id=attempt_id)
    committed = initial["version"]
    committed_payloads = {committed: initial}  # version -> the database's payload at that version
    seen = [committed]  # versions a client could have seen, for min_version
    snapshots: list[tuple[dict[str, Any], float]] = []  # slow readers' copies and when they read them
    refreshes_due = 0  # after-commit refreshes not run yet (run late, or lost in a crash)
    trace: list[str] = []

    def check_read(min_version: int | None) -> None:
        got = cache.attempt_cached(attempt_id=attempt_id, min_version=min_version)
        trace.append(f"read(min={min_version})->v{got['version']}")
        steps = " ".join(trace)
        assert got["version"] >= committed, f"seed {seed}: v{got['version']} after v{committed} committed: {steps}"
        assert got["version"] >= (min_version or 0), f"seed {seed}: v{got['version']} under min_version: {steps}"
        expected = committed_payloads.get(got["version"])
        assert expected is not None, f"seed {seed}: v{got['version']} was never committed: {steps}"
        assert _strip(got) == _strip(expected), f"seed {seed}: not the database's v{got['version']}: {steps}"
        seen.append(got["version"])

    for _ in range(STEPS_PER_RUN):
        moves = ["read", "read_min", "snapshot"]
        moves += ["commit", "rollback"] if writer.open_version is not None else ["begin", "begin"]
        if snapshots:
            moves += ["late_store", "late_store"]
        if refreshes_due:
            moves += ["refresh", "crash"]
        if writer.open_version is None:
            moves += ["expire", "floors_lapse"]
        move = rng.choice(moves)
        trace.append(move)
        if move == "read":
            check_read(None)
        elif move == "read_min":
            check_read(rng.choice(seen))
        elif move == "snapshot":
            read_at = clock.time()
            snapshots.append((attempt_payload_from_db(attempt_id=attempt_id), read_at))
        elif move == "late_store":
            payload, read_at = snapshots.pop(rng.randrange(len(snapshots)))
            stored = cache.attempt_cache_store(payload=payload, read_at=read_at)
            trace[-1] += f"(v{payload['version']})->{stored}"
        elif move == "begin":
            trace[-1] += f"(v{writer.begin(attempt_id, rng)})"
        elif move == "commit":
            version = writer.open_version
            writer.end(commit=True)
            committed = version
            committed_payloads[version] = attempt_payload_from_db(attempt_id=attempt_id)
            refreshes_due += 1
            if rng.random() < 0.5:
                refresh(attempt_id, clock)
                refreshes_due -= 1
        elif move == "rollback":
            writer.end(commit=False)
        elif move == "refresh":
            # Outside the writer's connection: a refresh runs after its own commit, possibly
            # while the next writer's transaction is open.
            refresh(attempt_id, clock)
            refreshes_due -= 1
        elif move == "crash":
            refreshes_due -= 1
        elif move == "expire":
            # A key expires TTL_SECONDS (an hour) after it was last touched: no slow reader
            # holds a copy that long, and no writer keeps a transaction open across it.
            cache_redis().delete(cache.attempt_cache_key(attempt_id))
            snapshots.clear()
        elif move == "floors_lapse":
            # No transaction stays open this long, but slow readers' copies are kept: a copy
            # read before a floor lapsed must still never replace a newer one.
            clock.offset += cache.FLOOR_SECONDS + 1
    if writer.open_version is not None:
        writer.end(commit=False)
    check_read(None)
    return trace


@pytest.mark.django_db(transaction=True)
def test_seeded_interleavings_never_serve_older_than_committed_or_min_version(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(cache, "time", clock)
    user, question = UserFactory(), QuestionFactory()
    attempt_ids = [Attempt.objects.create(user=user, question=question).pk for _ in SEEDS]
    writer = Writer()
    try:
        for seed, attempt_id in zip(SEEDS, attempt_ids, strict=True):
            try:
                run_interleaving(seed, attempt_id, writer, clock)
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n(reproduce with seed {seed})") from exc
    finally:
        writer.stop()
    statuses = set(Attempt.objects.filter(pk__in=attempt_ids).values_list("status", flat=True))
    assert statuses - {AttemptStatus.DRAFT}, "the writers never moved anything"
