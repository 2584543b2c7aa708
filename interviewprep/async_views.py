"""What the ASGI handler (interviewprep/asgi.py) asks of a view, declared once: whether a request
to it awaits, and if not, which view serves it.

A sync view never awaits: its request runs the sync middleware chain and the view in one hop on
the process's sync thread. An async view awaits for every request (the async chain, on the event
loop), unless `awaits_only_when` marked it: then a request it does not await for goes to its
sync twin, in that one hop. A sync view marked by `hashes_passwords` runs on a thread of its own.
The handler reads views through `view_awaits`, `sync_view_of` and `view_hashes_passwords` only,
so the attributes below are spelled nowhere else.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar, cast

from asgiref.sync import iscoroutinefunction
from django.http import HttpRequest, HttpResponse


class AwaitsSometimes(Protocol):
    """An async view marked by `awaits_only_when`."""

    # Whether the view awaits for this request.
    awaits: Callable[[HttpRequest], bool]
    # Serves, on the sync thread, a request the view does not await for, with the view's answer.
    sync_view: Callable[..., HttpResponse]

    async def __call__(self, request: HttpRequest, *args, **kwargs) -> HttpResponse: ...


AsyncView = TypeVar("AsyncView", bound=Callable[..., Awaitable[HttpResponse]])
V = TypeVar("V", bound=Callable[..., HttpResponse])


def awaits_only_when(
    awaits: Callable[[HttpRequest], bool], *, sync_view: Callable[..., HttpResponse]
) -> Callable[[AsyncView], AsyncView]:
    """Mark an async view that awaits only when `awaits(request)` is true: the ASGI handler sends
    every other request to `sync_view`, which must answer it as the async view would."""

    def mark(view: AsyncView) -> AsyncView:
        marked = cast(AwaitsSometimes, view)
        marked.awaits = awaits
        marked.sync_view = sync_view
        return view

    return mark


def hashes_passwords(view: V) -> V:
    """Mark a sync view that hashes a password (sign-up, log-in): 0.2-0.3 s of CPU in C that
    releases the GIL. The ASGI handler serves it on the process's hashing thread, so the sync
    thread goes on serving every other request meanwhile."""
    cast(Any, view).hashes_passwords = True
    return view


def view_hashes_passwords(view: Callable) -> bool:
    return getattr(view, "hashes_passwords", False)


def view_awaits(view: Callable, request: HttpRequest) -> bool:
    if not iscoroutinefunction(view):
        return False
    awaits = getattr(view, "awaits", None)
    return awaits is None or awaits(request)


def sync_view_of(view: Callable) -> Callable:
    """The view that serves a request `view_awaits` said no to: the view itself, or its sync twin."""
    return getattr(view, "sync_view", view)
