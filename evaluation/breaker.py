"""A circuit breaker whose state lives in Redis, so every worker process shares one view.

closed --(failure_threshold consecutive failures)--> open --(reset_after)--> half_open
half_open --(the one probe succeeds)--> closed;  half_open --(the probe fails)--> open

Every transition is a Lua script reading the clock with Redis `TIME`, so workers on machines
with skewed clocks agree on when a cool-down ends, and "check, then change" is never split
across two round trips (two workers cannot both take the half-open probe). A breaker built with
`clock=` reads that instead (tests drive the cool-down and the probe's lease with it; the
failure window and the idle expiry are key TTLs and keep Redis's own clock).

If Redis cannot be reached the breaker fails OPEN: it admits every call and records nothing.
The breaker protects the remote model from load and our workers from waiting on a dead
endpoint; it is not what keeps results correct. Failing closed would turn a Redis outage into
an outage of remote evaluation as well, whereas failing open only loses the short-circuit: each
call is still bounded by its own timeout and each job by its retry limit. That is the house rule
for Redis ("slower, not broken").
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import redis
from django.conf import settings

from interviewprep.redis_state import state_redis

logger = logging.getLogger(__name__)

BreakerState = Literal["closed", "open", "half_open"]

_KEY_PREFIX = "breaker:"
# An untouched breaker hash disappears after a day (a deleted breaker reads as closed), so
# renamed or retired breakers do not accumulate keys in the never-evicted state database.
_IDLE_TTL_MS = 24 * 3600 * 1000

# Fields of the hash at breaker:<name>:
#   failures     consecutive failures while closed
#   opened_at    Redis-clock ms when the breaker last opened; absent or 0 means closed
#   probe_until  ms until which the half-open probe is taken; a dead prober's lease expires
# Every script's last ARGV is the caller's clock in ms, or -1 for Redis TIME.
_CLOCK = """
local now = tonumber(ARGV[#ARGV])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local opened = tonumber(redis.call('HGET', KEYS[1], 'opened_at') or '0')
local probe_until = tonumber(redis.call('HGET', KEYS[1], 'probe_until') or '0')
"""

# ARGV: reset_after_ms. Returns {state, wait_ms} without changing anything.
_INSPECT = (
    _CLOCK
    + """
local reset_ms = tonumber(ARGV[1])
if opened == 0 then return {'closed', 0} end
if now < opened + reset_ms then return {'open', opened + reset_ms - now} end
if now < probe_until then return {'half_open', probe_until - now} end
return {'half_open', 0}
"""
)

# ARGV: reset_after_ms, probe_timeout_ms, idle_ttl_ms. Returns {admitted, wait_ms}.
_ADMIT = (
    _CLOCK
    + """
local reset_ms = tonumber(ARGV[1])
if opened == 0 then return {1, 0} end
if now < opened + reset_ms then return {0, opened + reset_ms - now} end
if now < probe_until then return {0, probe_until - now} end
redis.call('HSET', KEYS[1], 'probe_until', now + tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, 0}
"""
)

# ARGV: reset_after_ms. Returns 'closed' (was already), 'recovered' (was half-open) or 'open'.
_SUCCESS = (
    _CLOCK
    + """
if opened == 0 then
  redis.call('DEL', KEYS[1])
  return 'closed'
end
-- A call admitted before the breaker opened and finishing during the cool-down proves little:
-- only a success after the cool-down (the probe) closes the breaker.
if now < opened + tonumber(ARGV[1]) then return 'open' end
redis.call('DEL', KEYS[1])
return 'recovered'
"""
)

# ARGV: failure_threshold, reset_after_ms, failure_window_ms, idle_ttl_ms.
# Returns 'closed' (still), 'opened' (this failure tripped it) or 'open' (already was).
_FAILURE = (
    _CLOCK
    + """
if opened == 0 then
  local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
  if failures >= tonumber(ARGV[1]) then
    redis.call('HSET', KEYS[1], 'opened_at', now, 'probe_until', 0, 'failures', 0)
    redis.call('PEXPIRE', KEYS[1], ARGV[4])
    return 'opened'
  end
  -- Consecutive failures count only while they keep coming: a quiet window forgets them.
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 'closed'
end
-- Stragglers admitted before the trip must not stretch the cool-down they caused.
if now < opened + tonumber(ARGV[2]) then return 'open' end
redis.call('HSET', KEYS[1], 'opened_at', now, 'probe_until', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 'opened'
"""
)


class BreakerOpen(Exception):
    """The breaker refuses the call; try again in `retry_after` seconds."""

    def __init__(self, name: str, retry_after: int):
        super().__init__(f"circuit breaker {name!r} is open; retry in {retry_after}s")
        self.name = name
        self.retry_after = retry_after


@dataclass(frozen=True)
class Breaker:
    """Shared by every process that builds one with the same name; holds no local state."""

    name: str
    failure_threshold: int = 5
    reset_after: float = 30.0
    # How long one half-open probe may take before another worker may probe instead (its
    # worker may have died mid-call). Keep it above the guarded call's own timeout.
    probe_timeout: float = 60.0
    # Failures further apart than this are not "consecutive".
    failure_window: float = 60.0
    # Seconds since the epoch, if not Redis TIME: every breaker of one name must share it.
    clock: Callable[[], float] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a breaker needs a name")
        if self.failure_threshold < 1:
            raise ValueError("failure_threshold must be at least 1")
        for field_name in ("reset_after", "probe_timeout", "failure_window"):
            if getattr(self, field_name) <= 0:
                raise ValueError(f"{field_name} must be positive")

    @property
    def key(self) -> str:
        return f"{_KEY_PREFIX}{self.name}"

    def allow(self) -> bool:
        """Whether a call may go ahead now. In half-open state, True takes the single probe:
        the caller must then report its outcome with record_success/record_failure."""
        admitted, _ = self._admit()
        return admitted

    def check(self) -> None:
        """Like allow(), but refuses with BreakerOpen carrying how long to wait, decided in the
        same atomic step as the refusal."""
        admitted, retry_after = self._admit()
        if not admitted:
            raise BreakerOpen(self.name, retry_after)

    def record_success(self) -> None:
        result = self._run(_SUCCESS, [self._ms(self.reset_after)], default="closed")
        if _decode(result) == "recovered":
            logger.info("circuit breaker closed", extra={"breaker": self.name})

    def record_failure(self) -> None:
        result = self._run(
            _FAILURE,
            [
                self.failure_threshold,
                self._ms(self.reset_after),
                self._ms(self.failure_window),
                _IDLE_TTL_MS,
            ],
            default="closed",
        )
        if _decode(result) == "opened":
            logger.warning(
                "circuit breaker opened",
                extra={"breaker": self.name, "reset_after": self.reset_after},
            )

    def state(self) -> BreakerState:
        """The state without side effects: asking never takes the half-open probe."""
        state, _ = self._inspect()
        return state

    def retry_after(self) -> int:
        """Whole seconds until a call could be admitted: the rest of the cool-down while open,
        the rest of the probe's lease while a probe is in flight, otherwise 0."""
        _, wait_ms = self._inspect()
        return self._seconds(wait_ms)

    def reset(self) -> None:
        """Forget everything (an operator's lever, and a clean slate for tests)."""
        try:
            state_redis().delete(self.key)
        except redis.RedisError:
            logger.warning("circuit breaker reset failed: redis unavailable", exc_info=True)

    def _admit(self) -> tuple[bool, int]:
        result = self._run(
            _ADMIT,
            [self._ms(self.reset_after), self._ms(self.probe_timeout), _IDLE_TTL_MS],
            default=[1, 0],
        )
        admitted, wait_ms = result
        return bool(int(admitted)), self._seconds(wait_ms)

    def _inspect(self) -> tuple[BreakerState, int]:
        raw_state, wait_ms = self._run(_INSPECT, [self._ms(self.reset_after)], default=["closed", 0])
        state = _STATES[_decode(raw_state)]
        return state, int(wait_ms)

    def _run(self, script: str, args: list[int], default: Any) -> Any:
        now_ms = -1 if self.clock is None else round(self.clock() * 1000)
        try:
            client = state_redis()
            return client.register_script(script)(keys=[self.key], args=[*args, now_ms])
        except redis.RedisError:
            # Fail open; see the module docstring for why.
            logger.warning(
                "circuit breaker unavailable (redis error): failing open",
                extra={"breaker": self.name},
                exc_info=True,
            )
            return default

    @staticmethod
    def _ms(seconds: float) -> int:
        return max(1, round(seconds * 1000))

    @staticmethod
    def _seconds(wait_ms: int | str | bytes) -> int:
        wait = int(wait_ms)
        # A Retry-After of 0 while still refusing would invite an immediate, refused retry.
        return max(1, math.ceil(wait / 1000)) if wait > 0 else 0


def _decode(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


_STATES: dict[str, BreakerState] = {"closed": "closed", "open": "open", "half_open": "half_open"}


def remote_model_breaker() -> Breaker:
    """The breaker in front of the remote model API, shared by every worker."""
    remote = settings.CONFIG.remote_model or {}
    timeout = float(remote.get("timeout", 20.0))
    # The probe's lease covers one HTTP call plus slack for the Redis round trips around it.
    return Breaker("remote-model", failure_threshold=5, reset_after=30.0, probe_timeout=timeout + 5)
