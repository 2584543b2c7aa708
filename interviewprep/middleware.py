"""The project's middleware. Each works sync (WSGI, the test client) and async (ASGI): one
sync-only middleware in the chain would run every request behind it on a thread, an async
view's wait included."""

import logging
import time

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpResponse
from django.utils.functional import LazyObject, empty
from rest_framework.authentication import TokenAuthentication, get_authorization_header
from whitenoise.middleware import WhiteNoiseMiddleware

from interviewprep.api import problem_response
from interviewprep.body_limit import REFUSED, Refusal, refusal_detail
from interviewprep.logging import log_context_pop, log_context_push, request_id_accept

logger = logging.getLogger("interviewprep.request")
_TOKEN_SCHEME = TokenAuthentication.keyword.lower().encode()


class BothChains:
    """A middleware that serves the sync chain (WSGI, the test client) and the async one (ASGI)."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        self.async_mode = iscoroutinefunction(get_response)
        if self.async_mode:
            markcoroutinefunction(self)


class RequestIdMiddleware(BothChains):
    """Give every request an id (the caller's X-Request-ID if sane), log one line per request."""

    def __call__(self, request):
        if self.async_mode:
            return self._acall(request)
        token, started = self._begin(request)
        try:
            return self._end(request, self.get_response(request), started)
        finally:
            log_context_pop(token)

    async def _acall(self, request):
        token, started = self._begin(request)
        try:
            return self._end(request, await self.get_response(request), started)
        finally:
            log_context_pop(token)

    def _begin(self, request):
        # META, not request.headers: that one builds a dict of every header on first use.
        request.request_id = request_id_accept(request.META.get("HTTP_X_REQUEST_ID"))
        return log_context_push(request_id=request.request_id), time.perf_counter()

    def _end(self, request, response, started: float):
        response["X-Request-ID"] = request.request_id
        logger.info(
            "request",
            extra={
                "method": request.method,
                "path": request.path,
                "status": response.status_code,
                "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                "user_id": _user_id(request),
            },
        )
        return response


def _user_id(request) -> int | None:
    """The user the view authenticated. A session user the view never looked at stays unread:
    reading it costs a query, which the event loop must not run."""
    user = getattr(request, "user", None)
    if user is None or (isinstance(user, LazyObject) and user._wrapped is empty):
        return None
    return user.pk if user.is_authenticated else None


def token_api_request(request) -> bool:
    """An API request naming a token, which DRF's TokenAuthentication claims (by the same test
    as here): it authenticates the request by that token or refuses it, and never asks the
    session. Such a request needs no session, session user or messages, and no CSRF check: a
    foreign page cannot make a browser send an Authorization header, and without the session
    nothing of the browser's authenticates it."""
    if not request.path.startswith("/api/"):
        return False
    scheme = get_authorization_header(request).split(maxsplit=1)
    return bool(scheme) and scheme[0].lower() == _TOKEN_SCHEME


class _PagesOnly:
    """Mixed into a middleware that only pages (and the pages' own calls to the API, on the
    session) need: a token API request goes straight past it."""

    def __call__(self, request):
        if token_api_request(request):
            return self.get_response(request)  # in an async chain, the coroutine to await
        return super().__call__(request)


class PageSessionMiddleware(_PagesOnly, SessionMiddleware):
    pass


class PageAuthenticationMiddleware(_PagesOnly, AuthenticationMiddleware):
    pass


class PageMessageMiddleware(_PagesOnly, MessageMiddleware):
    pass


class BodyLimitMiddleware(BothChains):
    """A body over REQUEST_BODY_MAX_BYTES is a 413 on every endpoint, naming that limit (an
    answer's own 64 KiB limit is the service's, in its words). Under ASGI the body was bounded
    as it was read (interviewprep.body_limit); elsewhere Content-Length tells."""

    def __call__(self, request):
        if self.async_mode:
            return self._acall(request)
        return _body_refused(request) or self.get_response(request)

    async def _acall(self, request):
        return _body_refused(request) or await self.get_response(request)


def _body_refused(request) -> HttpResponse | None:
    limit = settings.REQUEST_BODY_MAX_BYTES
    refusal = getattr(request, "scope", {}).get(REFUSED)
    if refusal is None:
        length = request.META.get("CONTENT_LENGTH") or ""
        if not (length.isdigit() and int(length) > limit):
            return None
        refusal = Refusal(int(length), close=False)
    detail = refusal_detail(refusal, limit)
    if request.path.startswith("/api/"):
        response = problem_response(413, detail, limit=limit)
    else:
        response = HttpResponse(detail, status=413, content_type="text/plain; charset=utf-8")
    if refusal.close:
        # The rest of the body is still on the wire: say the connection ends with this answer.
        response["Connection"] = "close"
    return response


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    """WhiteNoise (sync only in 6.x), also in an async chain. A file is read whole and answered
    as a plain response: under ASGI, Django would read WhiteNoise's sync file response into
    memory anyway, warning each time, and the app's files are small. In an async chain the read
    runs on a pool thread, not the process's sync-view thread."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response=None, **kwargs):
        super().__init__(get_response, **kwargs)
        self.async_mode = iscoroutinefunction(get_response)
        if self.async_mode:
            markcoroutinefunction(self)

    def __call__(self, request):
        if self.async_mode:
            return self._acall(request)
        static_file = self._find(request.path_info)
        if static_file is None:
            return self.get_response(request)
        return _read_whole(static_file, request)

    async def _acall(self, request):
        static_file = await sync_to_async(self._find, thread_sensitive=False)(request.path_info)
        if static_file is None:
            return await self.get_response(request)
        return await sync_to_async(_read_whole, thread_sensitive=False)(static_file, request)

    def _find(self, path: str):
        return self.find_file(path) if self.autorefresh else self.files.get(path)


def _read_whole(static_file, request) -> HttpResponse:
    served = static_file.get_response(request.method, request.META)
    body = b""
    if served.file is not None:
        with served.file as handle:
            body = handle.read()
    response = HttpResponse(body, status=int(served.status))
    del response["Content-Type"]
    for key, value in served.headers:
        response[key] = value
    return response
