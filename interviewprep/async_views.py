"""What the ASGI handler (interviewprep/asgi.py) asks of a view, declared once: whether a request
to it awaits, and if not, which view serves it.

A sync view never awaits: its request runs the sync middleware chain and the view in one hop on
the process's sync thread. An async view awaits for every request (the async chain, on the event
loop), unless `awaits_only_when` marked it: then a request it does not await for goes to its
sync twin, in that one hop. The handler reads views through `view_awaits` and `sync_view_of`
only, so the attributes below are spelled nowhere else.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar, cast

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


def view_awaits(view: Callable, request: HttpRequest) -> bool:
    if not iscoroutinefunction(view):
        return False
    awaits = getattr(view, "awaits", None)
    return awaits is None or awaits(request)


def sync_view_of(view: Callable) -> Callable:
    """The view that serves a request `view_awaits` said no to: the view itself, or its sync twin."""
    return getattr(view, "sync_view", view)
