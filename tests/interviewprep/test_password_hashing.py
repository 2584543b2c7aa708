"""A password hash (0.2-0.3 s of CPU at Django's default cost) holds no other request: against
the Procfile's web line with one process, every view that hashes (sign-up and log-in, API and
page) is kept hashing at a gate while the same process answers its other requests."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Callable, Iterator
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.authtoken.models import Token

from tests import processes
from tests.factories import UserFactory
from tests.processes import wait_for
from tests.web_server import WebServer, start_web

WEB = "web-that-hashes"


@pytest.fixture
def gate(tmp_path: Path) -> Path:
    folder = tmp_path / "gate"
    folder.mkdir()
    return folder


@pytest.fixture
def web(transactional_db, tmp_path: Path, gate: Path) -> Iterator[WebServer]:
    url = processes.test_database_url(application_name=WEB)
    server = start_web(tmp_path, workers=1, IP_TEST_HASHER_GATE=str(gate), DATABASE_URL=url)
    yield server
    (gate / "open").touch()
    server.process.stop()


def _post(web: WebServer, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=90)
    try:
        conn.request("POST", path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def _api(path: str, payload: dict) -> Callable[[WebServer], tuple[int, bytes]]:
    return lambda web: _post(web, path, json.dumps(payload).encode(), {"Content-Type": "application/json"})


def _page(path: str, form: dict) -> Callable[[WebServer], tuple[int, bytes]]:
    """A page's form, posted with the CSRF cookie its GET set."""

    def send(web: WebServer) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=30)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            response.read()
            cookie = SimpleCookie(response.getheader("Set-Cookie"))[settings.CSRF_COOKIE_NAME].value
        finally:
            conn.close()
        body = urlencode({**form, "csrfmiddlewaretoken": cookie}).encode()
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": f"{settings.CSRF_COOKIE_NAME}={cookie}",
        }
        return _post(web, path, body, headers)

    return send


HASHING = {
    "api-register": (_api("/api/v1/auth/register/", {"username": "ada", "password": "a long passphrase 42"}), 201),
    "api-token, unknown user": (_api("/api/v1/auth/token/", {"username": "nobody", "password": "whatever it is"}), 400),
    "page-register": (
        _page(
            "/register/",
            {"username": "grace", "password": "a long passphrase 42", "password_again": "a long passphrase 42"},
        ),
        302,
    ),
    "page-login, unknown user": (_page("/login/", {"username": "nobody", "password": "whatever it is"}), 200),
    "admin-login, unknown user": (_page("/admin/login/", {"username": "nobody", "password": "whatever it is"}), 200),
}


def _web_sessions() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = %s",
            [WEB],
        )
        return cursor.fetchone()[0]


@pytest.mark.parametrize("name", HASHING)
def test_a_request_that_hashes_a_password_holds_no_other_request(web: WebServer, gate: Path, name: str) -> None:
    send, expected = HASHING[name]
    token = Token.objects.create(user=UserFactory()).key
    answered: list[tuple[int, bytes]] = []
    sender = threading.Thread(target=lambda: answered.append(send(web)), daemon=True)
    sender.start()
    try:
        wait_for(lambda: any(gate.glob("entered-*")), timeout=30, message=f"{name} to start hashing")
        # The hash is held at its gate: the same process answers a health check and an API read.
        status, _, _ = web.request("/healthz", timeout=20)
        assert status == 200
        status, body, _ = web.request("/api/v1/questions/", token=token, timeout=20)
        assert status == 200, body
        assert not answered, "the hashing request ended before its gate opened"
    finally:
        (gate / "open").touch()
        sender.join(60)
    assert answered and answered[0][0] == expected, answered
    # At rest the process holds one session again, its sync thread's (docs/operations.md).
    wait_for(lambda: _web_sessions() == 1, timeout=30, message="the hashing thread's session closed")
    if name.endswith("register"):
        assert get_user_model().objects.filter(username__in=["ada", "grace"]).count() == 1
