"""The ASGI web tier: every middleware runs on the event loop, sync views share one thread per
process and keep its database connection, and static files are still served."""

from __future__ import annotations

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
    from interviewprep.asgi import _awaits

    assert _awaits(rf.get("/api/v1/attempts/1/", {"min_version": 3, "wait": 5}))
    assert not _awaits(rf.get("/api/v1/attempts/1/", {"min_version": 3}))
    assert not _awaits(rf.get("/api/v1/questions/"))
    assert not _awaits(rf.get("/no/such/page/"))
