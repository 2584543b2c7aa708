"""The per-subject Redis lock: a token, a TTL, extended by the heartbeat while work goes on.

It only keeps two runs from working on the same subject at once; it is no fence (redis-py lock
tokens do not grow). The database decides, with the job's lease token, whose outcome counts.
"""

from __future__ import annotations

import logging

import redis

from interviewprep.redis_state import RELEASE_IF_OWNER, state_redis

logger = logging.getLogger(__name__)

_EXTEND = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""


class SubjectLock:
    def __init__(self, key: str, token: str, ttl_seconds: float):
        self.key = f"lock:{key}"
        self.token = token
        self.ttl_ms = max(1, int(ttl_seconds * 1000))
        self.held = False
        # When Redis is unreachable the run goes on unlocked: the fence in PostgreSQL still
        # refuses a stale write, so Redis down costs duplicate work, never a wrong result.
        self.degraded = False

    def acquire(self) -> bool:
        try:
            self.held = bool(state_redis().set(self.key, self.token, nx=True, px=self.ttl_ms))
        except redis.RedisError as exc:
            logger.warning("lock unavailable, running unlocked", extra={"lock": self.key, "error": str(exc)})
            self.degraded = True
            return True
        return self.held

    def extend(self) -> bool:
        if not self.held:
            return self.degraded
        try:
            return bool(state_redis().eval(_EXTEND, 1, self.key, self.token, self.ttl_ms))
        except redis.RedisError:
            return False

    def release(self) -> None:
        if not self.held:
            return
        try:
            state_redis().eval(RELEASE_IF_OWNER, 1, self.key, self.token)
        except redis.RedisError as exc:
            logger.warning("lock release failed; it expires by itself", extra={"lock": self.key, "error": str(exc)})
        self.held = False
