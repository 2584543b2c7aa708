"""One limit on request bodies, for every endpoint, enforced where the body is read.

Django's ASGI handler reads every body whole before any view runs, and a chunked body (no
Content-Length) reaches views that trust CONTENT_LENGTH as empty. `read_bounded` reads at most
`REQUEST_BODY_MAX_BYTES`, gives a chunked body the Content-Length it turned out to have, and marks
a refused body in the scope; `BodyLimitMiddleware` (interviewprep.middleware) answers the 413.
A body a little over the limit is read and discarded (up to DRAIN_MAX_BYTES) so the connection
can be kept; a bigger one is left unread and the answer says `Connection: close`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

REFUSED = "interviewprep.body_refused"

Receive = Callable[[], Awaitable[dict]]


@dataclass(frozen=True)
class Refusal:
    size: int | None  # None: more than the drain bound, never counted to the end
    close: bool  # the rest of the body is unread: the connection cannot serve another request


def drain_max_bytes(limit: int) -> int:
    return 4 * limit


def refusal_detail(refusal: Refusal, limit: int) -> str:
    size = f"{refusal.size} bytes" if refusal.size is not None else f"more than {drain_max_bytes(limit)} bytes"
    return f"The request body is {size}; this endpoint accepts at most {limit} bytes."


def _declared_length(scope: dict) -> int | None:
    for name, value in scope["headers"]:
        if name.lower() == b"content-length":
            return int(value) if value.isdigit() else None
    return None


async def read_bounded(scope: dict, receive: Receive, limit: int) -> tuple[dict, Receive] | None:
    """(scope, receive) to hand to Django: the body read, within bounds, and replayed once.
    None when the client went away before its body ended."""
    declared = _declared_length(scope)
    if declared is not None and declared > drain_max_bytes(limit):
        return {**scope, REFUSED: Refusal(declared, close=True)}, replay_body(b"", receive)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body = message.get("body", b"")
        size += len(body)
        if size > drain_max_bytes(limit):
            return {**scope, REFUSED: Refusal(None, close=True)}, replay_body(b"", receive)
        if size <= limit:
            chunks.append(body)
        if not message.get("more_body", False):
            break
    if size > limit:
        return {**scope, REFUSED: Refusal(size, close=False)}, replay_body(b"", receive)
    whole = b"".join(chunks)
    if declared is None:
        scope = {**scope, "headers": [*scope["headers"], (b"content-length", str(size).encode())]}
    return scope, replay_body(whole, receive)


def replay_body(body: bytes, receive: Receive) -> Receive:
    """The body as one message, then the connection's own messages with any body left unread
    skipped: Django waits on them only to learn of a disconnect."""
    sent = False

    async def replayed() -> dict:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return message

    return replayed
