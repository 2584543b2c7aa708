"""Wake whoever waits for a change, once the change has committed: Redis pub/sub, best effort.

    notify_on_commit(channel, message)        # a writer, inside its transaction
    await wait_for(channel, ready, timeout=S)  # a reader, in an async view: holds no thread
    await read_until(read, channel, done, timeout=S)  # the usual reader: read, wait, read again

A channel is named after what changed, `attempt:{id}` or `run:{id}`; a message is a short
string, by convention the new version or state. `notify_on_commit` publishes after the commit
(at once outside a transaction), so a rolled-back change wakes nobody. `wait_for` subscribes,
and only once Redis has confirmed the subscription awaits `ready(None)`: a change committed
before that check is seen by it, and one committed after it publishes to a subscriber already in
place, so none is missed. It then awaits `ready(message)` for each message until `ready` says
yes (True) or the deadline passes (False). `ready` decides from the source of truth, PostgreSQL:
a message is only a hint to look again. It may skip the look for a message that cannot be
enough (an older version), but it must expect messages about other changes, and duplicates.

Best effort on both sides; the database stays the truth. Pub/sub keeps nothing: a message
reaches only those subscribed at that instant, and a Redis failure loses it. A publish that
fails is logged at warning and the committed change stands. A waiter that cannot subscribe
still checks `ready(None)` once, then waits out its deadline like a waiter whose message was
lost: its caller then reads the current state. So Redis down makes a wait answer late (at its
deadline), never wrongly.

The server is the cache's (`REDIS_URL`), with its short timeouts. Channels are server-wide in
Redis, not per database, so every name carries the cache's database number: tests, benchmarks
and `make run` sharing a server do not wake each other. Each wait holds one Redis connection
for its duration.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import redis
import redis.asyncio
from django.conf import settings
from django.db import transaction
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from interviewprep.redis_state import cache_redis

logger = logging.getLogger(__name__)

# How long a waiter gives Redis to connect and confirm its subscription.
SUBSCRIBE_TIMEOUT = 1.0

Ready = Callable[[str | None], Awaitable[bool]]
T = TypeVar("T")


def _name(channel: str) -> str:
    db = cache_redis().connection_pool.connection_kwargs.get("db", 0)
    return f"ip:{db}:{channel}"


def notify_on_commit(channel: str, message: str) -> None:
    """Publish `message` on `channel` once the current transaction commits; never raises."""
    transaction.on_commit(lambda: _publish(channel, message), robust=True)


def _publish(channel: str, message: str) -> None:
    try:
        cache_redis().publish(_name(channel), message)
    except redis.RedisError as exc:
        logger.warning(
            "notify failed: its waiters answer at their deadline", extra={"channel": channel, "error": str(exc)}
        )


def subscribers(channel: str) -> int:
    """How many wait on `channel` right now, over every process (for operators and tests)."""
    name = _name(channel)
    return int(dict(cache_redis().pubsub_numsub(name)).get(name.encode(), 0))


async def wait_for(channel: str, ready: Ready, *, timeout: float) -> bool:
    """True once `ready` says so, False when `timeout` seconds passed first (see the module's
    docstring for the order of the checks and what a Redis failure does)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    client = redis.asyncio.Redis.from_url(
        settings.CACHES["default"]["LOCATION"],
        decode_responses=True,
        socket_connect_timeout=SUBSCRIBE_TIMEOUT,
        socket_timeout=SUBSCRIBE_TIMEOUT,
        retry=Retry(NoBackoff(), 0),
    )
    pubsub = client.pubsub()
    try:
        subscribed = await _subscribe(pubsub, channel, min(SUBSCRIBE_TIMEOUT, timeout))
        if await ready(None):
            return True
        if subscribed and await _listen(pubsub, channel, ready, deadline):
            return True
        # Subscribed or not, nothing came that was enough: the deadline says when to answer.
        await asyncio.sleep(max(0.0, deadline - loop.time()))
        return False
    finally:
        await pubsub.aclose()
        await client.aclose()


async def read_until(
    read: Callable[[], Awaitable[T]],
    channel: str,
    done: Callable[[T], bool],
    *,
    timeout: float,
    moot: Callable[[str], bool] | None = None,
) -> T:
    """The first `read()` that is `done`, or a last read at the deadline. `read` is the one way
    the caller reads (its sync view or selector, through `sync_to_async`); a message on
    `channel` makes it read again, unless `moot(message)` says the message cannot be enough."""
    answer: T | None = None
    have = False

    async def ready(message: str | None) -> bool:
        nonlocal answer, have
        if message is not None and moot is not None and moot(message):
            return False
        answer, have = await read(), True
        return done(answer)

    if not await wait_for(channel, ready, timeout=timeout) or not have:
        answer = await read()
    return answer  # type: ignore[return-value]


async def _listen(pubsub: redis.asyncio.client.PubSub, channel: str, ready: Ready, deadline: float) -> bool:
    loop = asyncio.get_running_loop()
    while (remaining := deadline - loop.time()) > 0:
        try:
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=remaining)
        except (redis.RedisError, OSError) as exc:
            logger.warning("wait lost its subscription", extra={"channel": channel, "error": repr(exc)})
            return False
        if message is not None and message["type"] == "message" and await ready(message["data"]):
            return True
    return False


async def _subscribe(pubsub: redis.asyncio.client.PubSub, channel: str, within: float) -> bool:
    """Subscribe and wait for Redis's confirmation: only then is a publish sure to reach us."""

    async def confirmed() -> None:
        await pubsub.subscribe(_name(channel))
        while (message := await pubsub.get_message(timeout=within)) is None or message["type"] != "subscribe":
            pass

    try:
        await asyncio.wait_for(confirmed(), timeout=within)
    except (redis.RedisError, OSError, TimeoutError) as exc:
        logger.warning(
            "wait could not subscribe: it answers at its deadline", extra={"channel": channel, "error": repr(exc)}
        )
        return False
    return True
