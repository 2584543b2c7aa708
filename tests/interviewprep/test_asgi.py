"""The ASGI web tier: every middleware runs on the event loop, sync views share one thread per
process and keep its database connection, and static files are still served."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.db import connection
from django.utils.module_loading import import_string

from tests.web_server import WebServer, start_web

ROOT = Path(__file__).resolve().parents[2]


def test_every_middleware_can_run_on_the_event_loop() -> None:
    """One sync-only middleware would put every request behind it on a thread, the waits too."""
    sync_only = [path for path in settings.MIDDLEWARE if not getattr(import_string(path), "async_capable", False)]
    assert sync_only == []


@pytest.mark.django_db
def test_the_asgi_application_has_an_async_middleware_chain() -> None:
    from interviewprep.asgi import application

    assert iscoroutinefunction(application._middleware_chain)


@pytest.fixture
def web(transactional_db, tmp_path) -> Iterator[WebServer]:
    server = start_web(tmp_path, workers=1)
    yield server
    server.process.stop()


def _other_sessions() -> set[int]:
    """Backends on the test database other than this test's own."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return {row[0] for row in cursor.fetchall()}


def test_sync_views_keep_one_database_connection_per_process(web: WebServer) -> None:
    """Django's own ASGI handler gives each request a thread, and so a new PostgreSQL session;
    ours runs every sync view on the process's one thread, which keeps its connection."""
    assert web.request("/healthz")[0] == 200  # the process's connection is open
    first = _other_sessions()
    assert len(first) == 1
    for _ in range(20):
        status, body, _ = web.request("/healthz")
        assert status == 200, body
        assert _other_sessions() == first


def test_static_files_and_request_ids_are_served_under_asgi(web: WebServer) -> None:
    status, body, headers = web.request("/static/css/site.css")
    assert status == 200
    assert body["raw"] == (ROOT / "static/css/site.css").read_bytes()
    assert headers["content-type"].startswith("text/css")
    assert headers["x-request-id"]

    status, _, headers = web.request("/static/no-such-file.css")
    assert status == 404
    assert headers["x-request-id"]
    assert "synchronous iterators" not in web.process.output(), "a file response was streamed from a sync iterator"


@pytest.mark.django_db
def test_only_a_request_that_waits_takes_the_async_chain(rf) -> None:
    """Every other request runs the sync chain in one hop, as cheap as under WSGI."""
    from interviewprep.asgi import request_awaits

    assert request_awaits(rf.get("/api/v1/attempts/1/", {"min_version": 3, "wait": 5}))
    assert not request_awaits(rf.get("/api/v1/attempts/1/", {"min_version": 3}))
    assert not request_awaits(rf.get("/api/v1/questions/"))
    assert not request_awaits(rf.get("/no/such/page/"))


def test_the_sync_handler_serves_a_request_that_does_not_wait_by_the_sync_twin() -> None:
    from django.urls import resolve

    from interviewprep.async_views import sync_view_of

    attempt = resolve("/api/v1/attempts/1/").func
    assert iscoroutinefunction(attempt)
    assert not iscoroutinefunction(sync_view_of(attempt))
    assert sync_view_of(attempt).cls is attempt.cls
    questions = resolve("/api/v1/questions/").func
    assert sync_view_of(questions) is questions


async def _asgi_get(path: str, headers: list[tuple[bytes, bytes]]) -> tuple[int, dict[bytes, bytes], bytes]:
    """One GET through the ASGI application, in this process: (status, headers, body)."""
    from interviewprep.asgi import application

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), *headers],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    messages = iter([{"type": "http.request", "body": b"", "more_body": False}])
    sent: list[dict] = []

    async def receive() -> dict:
        return next(messages, {"type": "http.disconnect"})

    async def send(message: dict) -> None:
        sent.append(message)

    await application(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), body


@pytest.mark.django_db(transaction=True)
def test_a_sync_request_is_resolved_once_answered_whole_and_finished(monkeypatch) -> None:
    """The sync thread uses the URL the handler resolved to choose the chain, and the response it
    closed (request_finished) before sending is still sent whole."""
    from asgiref.sync import async_to_sync
    from django.core.signals import request_finished
    from django.urls import get_resolver

    from tests.factories import AttemptFactory, TokenFactory

    token = TokenFactory()
    attempt = AttemptFactory(user=token.user)
    resolver = get_resolver()
    resolved: list[str] = []
    resolve = resolver.resolve
    monkeypatch.setattr(resolver, "resolve", lambda path: resolved.append(path) or resolve(path))
    finished: list[object] = []

    def on_finished(sender, **kwargs) -> None:
        finished.append(sender)

    request_finished.connect(on_finished, dispatch_uid="test-asgi-finished")
    try:
        status, headers, body = async_to_sync(_asgi_get)(
            f"/api/v1/attempts/{attempt.pk}/", [(b"authorization", f"Token {token.key}".encode())]
        )
    finally:
        request_finished.disconnect(dispatch_uid="test-asgi-finished")
    assert status == 200, body
    assert json.loads(body)["id"] == attempt.pk
    assert resolved == [f"/api/v1/attempts/{attempt.pk}/"]
    assert len(finished) == 1
    assert b"Set-Cookie" not in headers and b"set-cookie" not in headers


@pytest.mark.django_db(transaction=True)
def test_a_page_under_asgi_still_gets_its_csrf_cookie() -> None:
    from asgiref.sync import async_to_sync

    status, headers, body = async_to_sync(_asgi_get)("/login/", [])
    assert status == 200
    assert b"csrfmiddlewaretoken" in body
    assert headers[b"Set-Cookie"].startswith(b"csrftoken=")
