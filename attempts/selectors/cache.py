"""The attempt cache: version-stamped, may lag, never lies (DESIGN.md step 5, promise 7).

Each attempt is one Redis hash on the cache database: `version`, `payload`, and `floor`, the
lowest version a reader may trust, with `floor_until`, when that floor lapses.
- Every change of an attempt's state raises the floor *before* its transaction commits (from
  `transition()`), so once the writer has committed, no older copy is served even if the
  writer dies before refreshing the cache.
- Copies are only ever written by a script that sets them if their version is newer than the
  one cached and not below the floor: a slow writer or a reader with an old copy can never put
  it back over a newer one, and nothing is ever deleted, so delete-then-stale-set cannot happen.
- A reader passing `min_version` never gets a copy older than that.
- A cold key is computed by the reader holding a short lease; the others wait briefly for its
  copy (single flight), and fall back to the database if it does not come.
- Redis slow or down: every call has a 250 ms timeout and no retry, after a failure the cache
  is skipped for a second, and the database answers.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

import redis

from interviewprep import metrics
from interviewprep.redis_state import cache_redis

logger = logging.getLogger(__name__)

TTL_SECONDS = 3600
FLOOR_SECONDS = 120  # a raised floor whose writer rolled back stops forcing misses after this
LEASE_MS = 2000
WAIT_FOR_LEASE_SECONDS = 0.5
BACKOFF_AFTER_ERROR = 1.0

# KEYS[1] = hash; ARGV = version, payload, ttl, now
_SET_IF_NEWER = """
local cur = tonumber(redis.call('hget', KEYS[1], 'version') or '-1')
local v = tonumber(ARGV[1])
if v <= cur then return 0 end
local floor = tonumber(redis.call('hget', KEYS[1], 'floor') or '-1')
local floor_until = tonumber(redis.call('hget', KEYS[1], 'floor_until') or '0')
if v < floor and tonumber(ARGV[4]) < floor_until then return -1 end
redis.call('hset', KEYS[1], 'version', ARGV[1], 'payload', ARGV[2])
redis.call('expire', KEYS[1], ARGV[3])
return 1
"""
# KEYS[1] = hash; ARGV = version, floor_until, ttl
_RAISE_FLOOR = """
local floor = tonumber(redis.call('hget', KEYS[1], 'floor') or '-1')
if tonumber(ARGV[1]) > floor then
  redis.call('hset', KEYS[1], 'floor', ARGV[1], 'floor_until', ARGV[2])
  redis.call('expire', KEYS[1], ARGV[3])
end
return 1
"""

_down_until = 0.0
_down_lock = threading.Lock()


def _key(attempt_id: int) -> str:
    return f"ip:attempt:{attempt_id}"


def _available() -> bool:
    return time.monotonic() >= _down_until


def _failed(exc: Exception) -> None:
    global _down_until
    with _down_lock:
        _down_until = time.monotonic() + BACKOFF_AFTER_ERROR
    metrics.incr_buffered("interviewprep_cache_requests_total", {"outcome": "error"})
    logger.warning("cache unavailable, reading from the database", extra={"error": str(exc)})


def attempt_cache_raise_floor(*, attempt_id: int, version: int) -> None:
    """Called inside the writer's transaction, before commit."""
    if not _available():
        return
    try:
        cache_redis().eval(_RAISE_FLOOR, 1, _key(attempt_id), version, time.time() + FLOOR_SECONDS, TTL_SECONDS)
    except redis.RedisError as exc:
        _failed(exc)


def _store(attempt_id: int, payload: dict[str, Any]) -> int:
    return int(
        cache_redis().eval(
            _SET_IF_NEWER,
            1,
            _key(attempt_id),
            payload["version"],
            json.dumps(payload, separators=(",", ":")),
            TTL_SECONDS,
            time.time(),
        )
    )


def _compute(attempt_id: int) -> dict[str, Any] | None:
    from attempts.selectors.attempts import attempt_payload_from_db

    metrics.incr_buffered("interviewprep_cache_computations_total")
    return attempt_payload_from_db(attempt_id=attempt_id)


def attempt_cache_refresh(*, attempt_id: int) -> dict[str, Any] | None:
    """After a commit: put the database's copy in the cache (if it is the newest)."""
    payload = _compute(attempt_id)
    if payload is not None and _available():
        try:
            _store(attempt_id, payload)
        except redis.RedisError as exc:
            _failed(exc)
    return payload


def _read(attempt_id: int) -> tuple[dict[str, Any] | None, int, bool]:
    """(cached payload or None, floor, the floor is in force)."""
    fields = cache_redis().hmget(_key(attempt_id), "payload", "floor", "floor_until")
    payload = json.loads(fields[0]) if fields[0] else None
    floor = int(fields[1]) if fields[1] else -1
    floor_live = bool(fields[2]) and float(fields[2]) > time.time()
    return payload, floor, floor_live


def attempt_cached(*, attempt_id: int, min_version: int | None = None) -> dict[str, Any] | None:
    """The attempt's payload (with `user_id`), from the cache when a copy is fresh enough."""
    if not _available():
        return _compute(attempt_id)
    try:
        payload, floor, floor_live = _read(attempt_id)
    except redis.RedisError as exc:
        _failed(exc)
        return _compute(attempt_id)
    wanted = max(min_version or 0, floor if floor_live else 0)
    if payload is not None and payload["version"] >= wanted:
        metrics.incr_buffered("interviewprep_cache_requests_total", {"outcome": "hit"})
        return payload
    outcome = "stale" if payload is not None else "miss"
    metrics.incr_buffered("interviewprep_cache_requests_total", {"outcome": outcome})
    return _fill(attempt_id, wanted)


def _fill(attempt_id: int, wanted: int) -> dict[str, Any] | None:
    client = cache_redis()
    lease_key = f"{_key(attempt_id)}:lease"
    try:
        leader = bool(client.set(lease_key, "1", nx=True, px=LEASE_MS))
    except redis.RedisError as exc:
        _failed(exc)
        return _compute(attempt_id)
    if not leader:
        deadline = time.monotonic() + WAIT_FOR_LEASE_SECONDS
        delay = 0.005
        while time.monotonic() < deadline:
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
            try:
                payload, _, _ = _read(attempt_id)
            except redis.RedisError as exc:
                _failed(exc)
                break
            if payload is not None and payload["version"] >= wanted:
                return payload
        return _compute(attempt_id)
    try:
        payload = _compute(attempt_id)
        if payload is not None:
            _store(attempt_id, payload)
        return payload
    except redis.RedisError as exc:
        _failed(exc)
        return _compute(attempt_id)
    finally:
        try:
            client.delete(lease_key)
        except redis.RedisError:
            pass


def attempt_cache_diff(*, attempt_id: int) -> dict[str, Any]:
    """What the cache holds against what the database says (for staff)."""
    from attempts.selectors.attempts import attempt_payload_from_db

    database = attempt_payload_from_db(attempt_id=attempt_id)
    try:
        cached, floor, floor_live = _read(attempt_id)
        error = None
    except redis.RedisError as exc:
        cached, floor, floor_live, error = None, -1, False, str(exc)
    consistent = cached is None or (
        database is not None and all(cached.get(k) == database.get(k) for k in ("version", "status", "result"))
    )
    body: dict[str, Any] = {
        "cache": cached,
        "database": database,
        "consistent": consistent,
        "floor": floor if floor_live else None,
    }
    if error:
        body["cache_error"] = error
    return body
