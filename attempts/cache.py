"""The attempt cache: version-stamped, may lag, never lies (docs/promises.md, promise 7).

Each attempt is one Redis hash on the cache database: `stamp`, `payload`, and `floor`, the
lowest stamp a reader may trust, with `floor_until`, the writer's deadline: a copy read from
the database after it is authoritative and clears the floor (the writer committed or rolled back).
Copies are ordered by the attempt's `stamp`, which grows with its `version` and with every other
change the copy holds (its language, a hint, a give-up), so the copy is all a read needs.
- Every change of what the copy holds raises the floor *before* its transaction commits
  (`attempt_cache_restamp`, from `transition()` and the other writers), so once the writer has
  committed, no older copy is served even if the writer dies before refreshing the cache.
- Copies are only ever written by a script that sets them if their stamp is newer than the
  one cached and not below the floor: a slow writer or a reader with an old copy can never put
  it back over a newer one, and nothing is ever deleted, so delete-then-stale-set cannot happen.
- A reader passing `min_version` never gets a copy whose version is older than that.
- Each store, taken or refused, is recorded by the same script in a capped list beside the hash
  (`attempt_cache_writes`, for the staff timeline): no extra round trip.
- A cold key is computed by the reader holding a short lease; the others wait for its copy while
  the lease lives (single flight), so a slow database is asked once, not by every reader. They
  read the database themselves only when the leader is done without a copy that will do, or its
  lease ran out (it died or is slower than the lease).
- Redis slow or down: every call has a 250 ms timeout and no retry, after a failure this
  process leaves Redis alone for a second (`interviewprep/backoff.py`), and the database
  answers. A floor that could not be raised is owed: this process raises it within a second of
  Redis's return, from its ticker (`interviewprep/ticker.py`) if no call of its own comes first.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import threading
import time
from typing import Any

import redis

from attempts.models import Attempt
from attempts.selectors.payloads import attempt_payload_from_db
from interviewprep import metrics
from interviewprep.backoff import cache_backoff
from interviewprep.logging import current_request_id
from interviewprep.per_process import PerProcess
from interviewprep.redis_state import RELEASE_IF_OWNER, cache_redis
from interviewprep.ticker import ticker

logger = logging.getLogger(__name__)

_HOST = socket.gethostname()

TTL_SECONDS = 3600
FLOOR_SECONDS = 120  # a raised floor whose writer rolled back stops forcing misses after this
LEASE_MS = 2000  # also bounds how long a reader waits for another's copy
WRITES_KEPT = 50  # of each attempt's copy, for the staff timeline
PAY_EVERY = 0.5  # how often a process owing floors tries Redis again (one try waits <= 250 ms)

# KEYS[1] = hash, KEYS[2] = its list of writes; ARGV = stamp, payload, ttl, read_at (when the copy
# was read from PostgreSQL), the write's record (JSON), how many records to keep.
# Returns 1 stored, 0 not newer than the cached copy, -1 below a floor that was in force when the
# copy was read. A copy read after its floor lapsed is the database's word on a writer that has
# long committed or rolled back, so it clears that floor (else a rolled-back writer's floor would
# force misses for ever). Every call appends "<outcome> <record>" to the capped list, in the same
# round trip, for the staff timeline; the list expires no later than the copy.
_SET_IF_NEWER = """
local function recorded(outcome)
  redis.call('rpush', KEYS[2], outcome .. ' ' .. ARGV[5])
  redis.call('ltrim', KEYS[2], -tonumber(ARGV[6]), -1)
  redis.call('expire', KEYS[2], ARGV[3])
  return outcome
end
local cur = tonumber(redis.call('hget', KEYS[1], 'stamp') or '-1')
local v = tonumber(ARGV[1])
local floor = tonumber(redis.call('hget', KEYS[1], 'floor') or '-1')
local floor_until = tonumber(redis.call('hget', KEYS[1], 'floor_until') or '0')
local read_at = tonumber(ARGV[4])
if v < floor and read_at < floor_until then return recorded(-1) end
if floor >= 0 and read_at >= floor_until and v >= cur then
  redis.call('hdel', KEYS[1], 'floor', 'floor_until')
end
if v <= cur then return recorded(0) end
redis.call('hset', KEYS[1], 'stamp', ARGV[1], 'payload', ARGV[2])
redis.call('expire', KEYS[1], ARGV[3])
return recorded(1)
"""
# KEYS[1] = hash; ARGV = stamp, floor_until, ttl, now
# A live floor only ever goes up and lasts until the last writer's deadline; a lapsed one is
# replaced. (Raising only when the stamp is higher would make a writer reusing the stamp of a
# rolled-back one a no-op, leaving it with the lapsed floor: its older copies would be served.)
_RAISE_FLOOR = """
local floor = tonumber(redis.call('hget', KEYS[1], 'floor') or '-1')
local floor_until = tonumber(redis.call('hget', KEYS[1], 'floor_until') or '0')
local v = tonumber(ARGV[1])
local new_until = tonumber(ARGV[2])
if tonumber(ARGV[4]) < floor_until then
  if floor > v then v = floor end
  if floor_until > new_until then new_until = floor_until end
end
redis.call('hset', KEYS[1], 'floor', tostring(v), 'floor_until', tostring(new_until))
redis.call('expire', KEYS[1], ARGV[3])
return 1
"""


def _key(attempt_id: int) -> str:
    return f"ip:attempt:{attempt_id}"


def _writes_key(attempt_id: int) -> str:
    return f"{_key(attempt_id)}:writes"


def _available() -> bool:
    return cache_backoff().ready()


def _failed(exc: Exception) -> None:
    cache_backoff().failed()
    metrics.incr("interviewprep_cache_requests_total", {"outcome": "error"})
    logger.warning("cache unavailable, reading from the database", extra={"error": str(exc)})


def attempt_cache_restamp(attempt: Attempt) -> str:
    """Inside the writer's transaction, the attempt's row locked, when something its cached copy
    holds changes: the stamp grows and the floor rises before commit. Returns the field for the
    writer's save."""
    attempt.stamp += 1
    attempt_cache_raise_floor(attempt_id=attempt.pk, stamp=attempt.stamp)
    return "stamp"


def attempt_cache_raise_floor(*, attempt_id: int, stamp: int) -> None:
    """Called inside the writer's transaction, before commit, so while it holds the attempt's
    row lock: one call with a short timeout and no retry, and none at all while this process
    backs off after a cache error. A floor that could not be raised is owed (`_OwedFloors`)."""
    if not _available():
        _owed.get().add(attempt_id, stamp)
        return
    try:
        _raise_floor(attempt_id, stamp)
    except redis.RedisError as exc:
        _failed(exc)
        _owed.get().add(attempt_id, stamp)


def _raise_floor(attempt_id: int, stamp: int) -> None:
    now = time.time()
    cache_redis().eval(_RAISE_FLOOR, 1, _key(attempt_id), stamp, now + FLOOR_SECONDS, TTL_SECONDS, now)


class _OwedFloors:
    """Floors this process could not raise: attempt id -> (stamp, give up at).

    The writer commits anyway, and without its floor a copy older than its write would be
    served to readers without `min_version` until the next write or the copy's TTL (an hour).
    Raised late, after the commit, the floor still makes those readers miss and read the
    database. While floors are owed, this process's ticker tries to pay them every
    PAY_EVERY seconds, so they are paid within a second of Redis's return even if the process
    makes no more calls (a worker child between jobs); its next read or copy store pays them too.
    Never under a row lock. Given up after TTL_SECONDS, when every copy cached before the
    failure has expired.
    """

    def __init__(self) -> None:
        self.owed: dict[int, tuple[int, float]] = {}
        self.lock = threading.Lock()

    def add(self, attempt_id: int, stamp: int) -> None:
        with self.lock:
            held = self.owed.get(attempt_id)
            if held is None or held[0] < stamp:
                self.owed[attempt_id] = (stamp, time.monotonic() + TTL_SECONDS)
            ticker().start(_PAYER, _pay_owed_from_ticker, every=PAY_EVERY)

    def pay(self) -> redis.RedisError | None:
        """Raise the owed floors, stopping at the first failure (Redis still unreachable), which
        it returns."""
        with self.lock:
            owed = list(self.owed.items())
        failure = None
        for attempt_id, (stamp, give_up_at) in owed:
            try:
                _raise_floor(attempt_id, stamp)
            except redis.RedisError as exc:
                if time.monotonic() < give_up_at:
                    failure = exc
                    break
                logger.error("owed cache floor given up", extra={"attempt_id": attempt_id, "stamp": stamp})
            else:
                logger.info("owed cache floor raised", extra={"attempt_id": attempt_id, "stamp": stamp})
            with self.lock:
                if self.owed.get(attempt_id, (None,))[0] == stamp:
                    del self.owed[attempt_id]
        with self.lock:
            if not self.owed:
                ticker().stop(_PAYER)
        return failure

    def clear(self) -> None:
        with self.lock:
            self.owed.clear()
            ticker().stop(_PAYER)


_owed = PerProcess(_OwedFloors)
_PAYER = "owed cache floors"


def _pay_owed() -> None:
    """At a cache call: pay what this process owes unless it backs off after an error."""
    owed = _owed.made()
    if owed is not None and owed.owed and _available():
        failure = owed.pay()
        if failure is not None:
            _failed(failure)


def _pay_owed_from_ticker() -> None:
    """Tried whatever the back-off says: Redis's return must be noticed within PAY_EVERY. A
    failure keeps this process's other calls off Redis, quietly (the call that failed first
    warned); a payment made shows Redis answers again, so the back-off ends at once."""
    owed = _owed.made()
    if owed is None:
        return
    if owed.pay() is None:
        cache_backoff().forget()
    else:
        cache_backoff().failed()
        logger.debug("owed cache floors still unpaid")


def attempt_cache_floors_owed() -> int:
    """How many floors this process still owes (for operators and tests)."""
    owed = _owed.made()
    return len(owed.owed) if owed is not None else 0


def _store(attempt_id: int, payload: dict[str, Any], *, read_at: float) -> int:
    """Set the copy if newer; `read_at` is when it was read from the database (see _SET_IF_NEWER)."""
    record = {
        "at": time.time(),
        "stamp": payload["stamp"],
        "version": payload["version"],
        "status": payload["status"],
        "process": f"{_HOST}:{os.getpid()}",
        "request_id": current_request_id(),
    }
    return int(
        cache_redis().eval(
            _SET_IF_NEWER,
            2,
            _key(attempt_id),
            _writes_key(attempt_id),
            payload["stamp"],
            json.dumps(payload, separators=(",", ":")),
            TTL_SECONDS,
            read_at,
            json.dumps(record, separators=(",", ":")),
            WRITES_KEPT,
        )
    )


_STORE_OUTCOMES = {1: "stored", 0: "not newer", -1: "under a floor"}


def attempt_cache_writes(*, attempt_id: int) -> list[dict[str, Any]] | None:
    """The last WRITES_KEPT writes of the attempt's copy, oldest first: when (`at`, seconds since
    the epoch, the writer's clock), `stamp`, `version`, `status`, who (`process` as host:pid,
    `request_id`) and `outcome` ("stored", "not newer", "under a floor"). None when Redis did
    not answer (for staff: best effort)."""
    try:
        raw = cache_redis().lrange(_writes_key(attempt_id), 0, -1)
    except redis.RedisError:
        return None
    writes = []
    for entry in raw:
        outcome, record = entry.decode().split(" ", 1)
        writes.append({**json.loads(record), "outcome": _STORE_OUTCOMES.get(int(outcome), outcome)})
    return writes


def _compute(attempt_id: int) -> dict[str, Any] | None:
    metrics.incr("interviewprep_cache_computations_total")
    return attempt_payload_from_db(attempt_id=attempt_id)


def _compute_and_store(attempt_id: int) -> dict[str, Any] | None:
    # Taken before the query: the copy is at least as new as the database at this instant.
    read_at = time.time()
    payload = _compute(attempt_id)
    if payload is not None:
        try:
            _store(attempt_id, payload, read_at=read_at)
        except redis.RedisError as exc:
            _failed(exc)  # the copy in hand is the database's: serve it anyway
    return payload


def attempt_cache_store(*, payload: dict[str, Any], read_at: float | None = None) -> int | None:
    """Put a copy in the cache if it is the newest: after a commit, with the committed copy in
    hand, or a copy read from the database at `read_at` (default: now). Returns what the store
    did (1 stored, 0 not newer, -1 under a writer's floor), None when Redis was not asked."""
    _pay_owed()
    if not _available():
        return None
    try:
        return _store(payload["id"], payload, read_at=time.time() if read_at is None else read_at)
    except redis.RedisError as exc:
        _failed(exc)
        return None


def attempt_cache_key(attempt_id: int) -> str:
    """The Redis key of an attempt's cached copy, on the cache database (for operators)."""
    return _key(attempt_id)


def attempt_cache_forget_process_state() -> None:
    """Forget this process's backoff after a cache error and the floors it owes (for tests,
    which must not inherit an earlier test's Redis failure)."""
    cache_backoff().forget()
    owed = _owed.made()
    if owed is not None:
        owed.clear()


def _read(attempt_id: int) -> tuple[dict[str, Any] | None, int]:
    """(cached payload or None, floor or -1)."""
    fields = cache_redis().hmget(_key(attempt_id), "payload", "floor")
    payload = json.loads(fields[0]) if fields[0] else None
    floor = int(fields[1]) if fields[1] else -1
    return payload, floor


def _fresh_enough(payload: dict[str, Any] | None, floor: int, min_version: int | None) -> bool:
    # A floor counts even after it lapsed: a copy below it may predate a committed write whose
    # cache refresh never happened. Only a copy read from the database after the lapse clears it.
    # (A copy without a stamp was written before stamps: never fresh.)
    if payload is None:
        return False
    return payload.get("stamp", -1) >= max(floor, 0) and payload["version"] >= (min_version or 0)


def attempt_cached(*, attempt_id: int, min_version: int | None = None) -> dict[str, Any] | None:
    """The attempt's cached copy (`attempt_payload`), from the cache when it is fresh enough.
    Whatever Redis fails at, the database answers (the one fallback of every read)."""
    _pay_owed()
    if _available():
        try:
            return _cached_or_filled(attempt_id, min_version)
        except redis.RedisError as exc:
            _failed(exc)
    return _compute(attempt_id)


def _cached_or_filled(attempt_id: int, min_version: int | None) -> dict[str, Any] | None:
    payload, floor = _read(attempt_id)
    if _fresh_enough(payload, floor, min_version):
        metrics.incr("interviewprep_cache_requests_total", {"outcome": "hit"})
        return payload
    metrics.incr("interviewprep_cache_requests_total", {"outcome": "stale" if payload is not None else "miss"})
    client = cache_redis()
    lease_key = f"{_key(attempt_id)}:lease"
    token = secrets.token_hex(8)
    if not client.set(lease_key, token, nx=True, px=LEASE_MS):
        return _follow(attempt_id, min_version, lease_key)
    try:
        # Another leader may have stored a copy between our read and our lease.
        payload, floor = _read(attempt_id)
        if _fresh_enough(payload, floor, min_version):
            return payload
        return _compute_and_store(attempt_id)
    finally:
        try:
            client.eval(RELEASE_IF_OWNER, 1, lease_key, token)
        except redis.RedisError:
            pass  # it expires by itself


def _follow(attempt_id: int, min_version: int | None, lease_key: str) -> dict[str, Any] | None:
    """Wait for the leader's copy while its lease lives; stop as soon as the leader is done without
    one that will do (its copy was refused under a writer's floor). The copy and the lease are
    read in one MULTI: the leader stores before it lets go, so a lease seen gone means its copy,
    if any, is seen too."""
    client = cache_redis()
    deadline = time.monotonic() + LEASE_MS / 1000
    delay = 0.005
    while time.monotonic() < deadline:
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
        pipe = client.pipeline(transaction=True)
        pipe.hmget(_key(attempt_id), "payload", "floor")
        pipe.exists(lease_key)
        (raw, raw_floor), leader_busy = pipe.execute()
        payload = json.loads(raw) if raw else None
        if _fresh_enough(payload, int(raw_floor) if raw_floor else -1, min_version):
            return payload
        if not leader_busy:
            break
    return _compute_and_store(attempt_id)


def attempt_cache_diff(*, attempt_id: int) -> dict[str, Any]:
    """What the cache holds against what the database says (for staff)."""
    database = attempt_payload_from_db(attempt_id=attempt_id)
    try:
        cached, floor = _read(attempt_id)
        error = None
    except redis.RedisError as exc:
        cached, floor, error = None, -1, str(exc)
    consistent = cached is None or (
        database is not None and all(cached.get(k) == database.get(k) for k in ("version", "status", "result"))
    )
    body: dict[str, Any] = {
        "cache": cached,
        "database": database,
        "consistent": consistent,
        "floor": floor if floor >= 0 else None,
    }
    if error:
        body["cache_error"] = error
    return body
