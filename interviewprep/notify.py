"""Wake whoever waits for a change, once the change has committed: Redis pub/sub, best effort.

    notify_on_commit(channel, message)        # a writer, inside its transaction
    await wait_for(channel, ready, timeout=S)  # a reader, in an async view: holds no thread
    await read_until(read, channel, done, timeout=S)  # the usual reader: read, wait, read again

A channel is named after what changed, `attempt:{id}` or `run:{id}`; a message is a short
string, by convention the new version or state. `notify_on_commit` publishes after the commit
(at once outside a transaction), so a rolled-back change wakes nobody. `wait_for` first makes
sure it will hear every message published from now on, and only then awaits `ready(None)`: a
change committed before that check is seen by it, and one committed after it is heard, so none
is missed. It then awaits `ready(message)` for each message on its channel until `ready` says
yes (True) or the deadline passes (False). `ready` decides from the source of truth, PostgreSQL:
a message is only a hint to look again. It may skip the look for a message that cannot be enough
(an older version), but it must expect duplicates and messages about changes it does not need.

Best effort on both sides; the database stays the truth. Pub/sub keeps nothing: a message
reaches only who listens at that instant, and a Redis failure loses it. A publish that fails is
logged at warning and the committed change stands; for a second after a failure on the cache's
server (`cache_backoff()`), publishes are skipped, so a paused Redis costs one socket timeout, not
one per state change. A waiter that cannot listen, or whose
message was lost, answers at its deadline: its caller then reads the current state. So Redis
down makes a wait answer late, never wrongly.

How it listens: each process keeps one pub/sub connection per event loop (a web process has
one loop), subscribed once to every channel of this app by pattern, and one task reading it
that hands each message to the waits of its channel in this process. A wait then costs a queue
in a dict, not a Redis connection and a SUBSCRIBE: with a connection per wait, setting one up
took 3-4 ms of the event loop's CPU, and in a burst of 1,000 waits on 8 processes 54 could not
subscribe within 5 s (benchmarks/bench_wait.py). Every process hears every message, which is
nothing at a few hundred changes a second. If the connection breaks, the waits listening on it
answer at their deadlines, and the next wait opens a new one.

The server is the cache's (`REDIS_URL`). Channels are server-wide in Redis, not per database,
so every name carries the cache's database number: tests, benchmarks and `make run` sharing a
server do not hear each other. Counters: `interviewprep_waits_started_total`, and
`interviewprep_waits_ended_total` by outcome (`ready`, `deadline`, `cancelled`, `error`); their
difference is the number of waits open. A wait answered by its first check counts in neither.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import TypeVar

import redis
import redis.asyncio
from django.conf import settings
from django.db import transaction
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from interviewprep import metrics
from interviewprep.backoff import cache_backoff
from interviewprep.per_process import PerProcess
from interviewprep.redis_state import cache_redis

logger = logging.getLogger(__name__)

# How long a wait gives a new listening connection to connect and subscribe; its first check
# waits for that. Generous: a busy machine can take a second or more.
LISTEN_TIMEOUT = 5.0

Ready = Callable[[str | None], Awaitable[bool]]
T = TypeVar("T")


def _prefix() -> str:
    db = cache_redis().connection_pool.connection_kwargs.get("db", 0)
    return f"ip:{db}:"


def notify_on_commit(channel: str, message: str) -> None:
    """Publish `message` on `channel` once the current transaction commits; never raises."""
    transaction.on_commit(lambda: _publish(channel, message), robust=True)


def _publish(channel: str, message: str) -> None:
    # A paused Redis makes a publish wait its socket timeout: after a failure (of a publish or a
    # cache call, same server) this process skips publishes for the back-off, as if lost.
    backoff = cache_backoff()
    if not backoff.ready():
        logger.debug("notify skipped: Redis failed a moment ago", extra={"channel": channel})
        return
    try:
        cache_redis().publish(_prefix() + channel, message)
    except redis.RedisError as exc:
        backoff.failed()
        logger.warning(
            "notify failed: its waiters answer at their deadline", extra={"channel": channel, "error": str(exc)}
        )


async def wait_for(channel: str, ready: Ready, *, timeout: float) -> bool:
    """True once `ready` says so, False when `timeout` seconds passed first (see the module's
    docstring for the order of the checks and what a Redis failure does)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    listener = _listeners.get().of(loop)
    name = _prefix() + channel
    inbox: asyncio.Queue[str | None] = listener.join(name)
    waiting, outcome = False, "error"
    try:
        # Joined before the check: every message read from now on reaches the inbox.
        listening = await listener.listening(within=min(LISTEN_TIMEOUT, timeout))
        if await ready(None):
            return True
        waiting, outcome = True, "deadline"
        metrics.incr("interviewprep_waits_started_total")
        while listening and (remaining := deadline - loop.time()) > 0:
            try:
                message = await asyncio.wait_for(inbox.get(), remaining)
            except TimeoutError:
                break
            if message is None:  # the connection broke: nothing can say "now" any more
                break
            if await ready(message):
                outcome = "ready"
                return True
        await asyncio.sleep(max(0.0, deadline - loop.time()))
        return False
    except asyncio.CancelledError:
        outcome = "cancelled"  # the client went away
        raise
    finally:
        listener.leave(name, inbox)
        if waiting:
            metrics.incr("interviewprep_waits_ended_total", {"outcome": outcome})


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


class _Listener:
    """One event loop's pub/sub connection and its reader task."""

    def __init__(self) -> None:
        self.inboxes: dict[str, set[asyncio.Queue[str | None]]] = {}
        self.reader: asyncio.Task[None] | None = None
        self.subscribed: asyncio.Future[bool] | None = None

    async def listening(self, *, within: float) -> bool:
        if self.reader is None or self.reader.done():
            self.subscribed = asyncio.get_running_loop().create_future()
            self.reader = asyncio.get_running_loop().create_task(self._read(self.subscribed))
        try:
            return await asyncio.wait_for(asyncio.shield(self.subscribed), within)
        except TimeoutError:
            logger.warning("wait could not listen in time: it answers at its deadline")
            return False

    def join(self, name: str) -> asyncio.Queue[str | None]:
        inbox: asyncio.Queue[str | None] = asyncio.Queue()
        self.inboxes.setdefault(name, set()).add(inbox)
        return inbox

    def leave(self, name: str, inbox: asyncio.Queue[str | None]) -> None:
        inboxes = self.inboxes.get(name)
        if inboxes is not None:
            inboxes.discard(inbox)
            if not inboxes:
                del self.inboxes[name]

    async def _read(self, subscribed: asyncio.Future[bool]) -> None:
        client = redis.asyncio.Redis.from_url(
            settings.CACHES["default"]["LOCATION"],
            decode_responses=True,
            socket_connect_timeout=LISTEN_TIMEOUT,
            # The connection idles between messages: a read timeout would break it.
            socket_timeout=None,
            retry=Retry(NoBackoff(), 0),
            client_name=f"ip-notify-{os.getpid()}",  # for CLIENT LIST
        )
        pubsub = client.pubsub()
        try:
            await pubsub.psubscribe(_prefix() + "*")
            while True:
                message = await pubsub.get_message(timeout=None)
                if message is None:
                    continue
                if message["type"] == "psubscribe" and not subscribed.done():
                    subscribed.set_result(True)
                elif message["type"] == "pmessage":
                    for inbox in self.inboxes.get(message["channel"], ()):
                        inbox.put_nowait(message["data"])
        except (redis.RedisError, OSError) as exc:
            logger.warning("notify listener lost its connection", extra={"error": repr(exc)})
        finally:
            if self.subscribed is subscribed:  # the next wait starts a new connection
                self.reader = self.subscribed = None
            if not subscribed.done():
                subscribed.set_result(False)
            for inboxes in self.inboxes.values():
                for inbox in inboxes:
                    inbox.put_nowait(None)
            await pubsub.aclose()
            await client.aclose()


class _Listeners:
    """This process's listeners, one per event loop (a test client runs a loop per request)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Listener] = weakref.WeakKeyDictionary()

    def of(self, loop: asyncio.AbstractEventLoop) -> _Listener:
        with self.lock:
            listener = self.by_loop.get(loop)
            if listener is None:
                listener = self.by_loop[loop] = _Listener()
            return listener


_listeners = PerProcess(_Listeners)
