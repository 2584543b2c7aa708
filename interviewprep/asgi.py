"""The web tier's entry point: Django under ASGI, served by gunicorn's uvicorn workers (Procfile).

A request that awaits (the attempt wait) runs through the async middleware chain and its async
view on the event loop, and holds no thread while it waits. Every other request, nearly all of
them, runs as WSGI would run it: the whole sync middleware chain and the view in one call on the
process's one sync thread, except a view that hashes a password, which runs on the process's
hashing thread so that a burst of sign-ups does not hold everyone else's requests. Which requests
await, which view serves the others and which hash, is the contract of `interviewprep.async_views`
(`view_awaits`, `sync_view_of`, `view_hashes_passwords`).

Four departures from Django's own `ASGIHandler`, each measured:

- It gives every request a thread of its own (`ThreadSensitiveContext`), and since Django keeps
  database connections per thread, a new PostgreSQL session per request (20 requests opened 20).
  Here every request's sync code shares asgiref's process-wide thread, which keeps its
  connection (`CONN_MAX_AGE`) and serves one sync view at a time, as a sync worker did.
- It runs a sync view behind the async chain, a thread hop for each middleware hook and the
  view: 12-13 ms of CPU per `GET /api/v1/questions/1/` in one process on a loaded 2-core
  machine, against 7.5-8.5 with the whole sync chain in one hop, and 5-7 under WSGI.
- Django keeps cache clients in a context-local, and each ASGI request has a context of its own:
  each would build a django-redis client. Made once below, in the context every request's is
  copied from, the process has one, as a WSGI thread does.
- Its `handle` hops to a thread three times per request (the `request_started` receivers, the
  view, `response.close()`) and runs a task listening for the client's disconnect beside the
  view: about a quarter of a cached read's CPU. A sync view cannot be stopped midway anyway, so
  here its request goes to the sync thread once, which starts it, serves it, and closes its
  response (in memory by then) before it is sent; the URL is resolved once, not again there.
"""

import os
from concurrent.futures import ThreadPoolExecutor

import django
from asgiref.sync import sync_to_async
from django.conf import settings
from django.core import signals
from django.core.cache import caches
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.base import BaseHandler
from django.db import connections
from django.http import FileResponse
from django.urls import Resolver404, get_resolver, set_script_prefix

from interviewprep.async_views import sync_view_of, view_awaits, view_hashes_passwords
from interviewprep.body_limit import read_bounded, replay_body
from interviewprep.config import load_or_exit

load_or_exit()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "interviewprep.settings")


class SyncHandler(BaseHandler):
    """The middleware chain and the views as WSGI runs them; a view that awaits only sometimes
    is served here by its sync twin."""

    def resolve_request(self, request):
        resolved = getattr(request, _RESOLVED, None)
        if resolved is not None and resolved[0] == request.path_info and not hasattr(request, "urlconf"):
            request.resolver_match = match = resolved[1]
        else:
            match = super().resolve_request(request)
        return sync_view_of(match.func), match.args, match.kwargs


class OneThreadASGIHandler(ASGIHandler):
    def __init__(self) -> None:
        super().__init__()  # the async middleware chain, for requests that await
        self.sync_handler = SyncHandler()
        self.sync_handler.load_middleware(is_async=False)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        # At most REQUEST_BODY_MAX_BYTES of body is kept; a chunked one gets its Content-Length.
        bounded = await read_bounded(scope, receive, settings.REQUEST_BODY_MAX_BYTES)
        if bounded is None:
            return  # the client left before its body ended
        # Without a ThreadSensitiveContext, sync_to_async(thread_sensitive=True) uses asgiref's
        # process-wide single thread.
        await self.handle(*bounded, send)

    async def handle(self, scope, receive, send):
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        try:
            set_script_prefix(get_script_prefix(scope))
            request, error_response = self.create_request(scope, body_file)
            if request is not None and request_awaits(request):
                # Django's own handle, which listens for a disconnect while the view awaits.
                body_file.seek(0)
                await super().handle(scope, replay_body(body_file.read(), receive), send)
                return
            if request_hashes_passwords(request):
                serve = sync_to_async(self._serve_hashing, thread_sensitive=False, executor=_HASHING)
            else:
                serve = sync_to_async(self._serve)
            response = await serve(scope, request, error_response)
            await self.send_response(response, send)
            if response.streaming:
                await sync_to_async(response.close)()
        finally:
            body_file.close()

    def _serve(self, scope, request, error_response):
        """On the sync thread: what Django's handle does around a view, in one hop."""
        signals.request_started.send(sender=self.__class__, scope=scope)
        response = self.sync_handler.get_response(request) if error_response is None else error_response
        response._handler_class = self.__class__
        if isinstance(response, FileResponse):
            response.block_size = self.chunk_size
        if not response.streaming:
            response.close()  # its content is in memory; request_finished fires here, on this thread
        return response

    def _serve_hashing(self, scope, request, error_response):
        """On the hashing thread: the same, then its database session closed, so that at rest a
        web process holds one session (its sync thread's), and one more only while it hashes."""
        try:
            return self._serve(scope, request, error_response)
        finally:
            connections.close_all()


# The views that hash a password run here, one at a time (a burst of sign-ups queues here), while
# the sync thread serves the process's other requests: the hash releases the GIL
# (docs/benchmarks.md, "a password hash on a thread of its own").
_HASHING = ThreadPoolExecutor(max_workers=1, thread_name_prefix="password-hashing")

# Where `request_awaits` leaves the URL it resolved, for the sync handler to use rather than resolve again.
_RESOLVED = "_interviewprep_resolved"


def request_awaits(request) -> bool:
    try:
        match = get_resolver().resolve(request.path_info)
    except Resolver404:
        return False  # the sync chain answers the 404
    setattr(request, _RESOLVED, (request.path_info, match))
    return view_awaits(match.func, request)


def request_hashes_passwords(request) -> bool:
    resolved = getattr(request, _RESOLVED, None)
    return resolved is not None and view_hashes_passwords(resolved[1].func)


django.setup(set_prefix=False)
application = OneThreadASGIHandler()
caches["default"]  # one django-redis client for the process (see the docstring)
