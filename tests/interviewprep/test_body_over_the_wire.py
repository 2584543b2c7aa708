"""Request bodies against the Procfile's real web line (gunicorn + uvicorn): chunked bodies are
read within the limit, and a body refused unread closes the connection, saying so."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import pytest
from rest_framework.authtoken.models import Token

from attempts.models import Submission
from tests.factories import AttemptFactory
from tests.web_server import WebServer, start_web

LIMIT = 256 * 1024


@pytest.fixture
def web(transactional_db, tmp_path) -> Iterator[WebServer]:
    server = start_web(tmp_path, workers=1)
    yield server
    server.process.stop()


def _chunked(parts: list[bytes]) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts) + b"0\r\n\r\n"


def _send_chunked(conn: http.client.HTTPConnection, path: str, parts: list[bytes], headers: dict) -> None:
    conn.putrequest("POST", path)
    for name, value in {**headers, "Content-Type": "application/json", "Transfer-Encoding": "chunked"}.items():
        conn.putheader(name, value)
    conn.endheaders()
    conn.send(_chunked(parts))


def test_a_chunked_submit_is_read_and_accepted(web: WebServer) -> None:
    attempt = AttemptFactory()
    token = Token.objects.create(user=attempt.user).key
    body = json.dumps({"answer": "def f():\n    return 1\n"}).encode()
    conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=30)
    try:
        _send_chunked(
            conn,
            f"/api/v1/attempts/{attempt.pk}/submissions/",
            [body[:7], body[7:]],
            {"Authorization": f"Token {token}", "Idempotency-Key": "chunked-1"},
        )
        response = conn.getresponse()
        payload = json.loads(response.read())
    finally:
        conn.close()
    assert response.status == 202, payload
    assert Submission.objects.get(pk=payload["submission_id"]).answer == "def f():\n    return 1\n"


def test_a_chunked_body_a_little_over_the_limit_is_a_413_and_the_connection_serves_on(web: WebServer) -> None:
    parts = [b'{"username": "'] + [b"u" * 64 * 1024] * 5 + [b'"}']
    size = sum(map(len, parts))
    conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=30)
    try:
        _send_chunked(conn, "/api/v1/auth/token/", parts, {})
        response = conn.getresponse()
        payload = json.loads(response.read())
        assert response.status == 413
        assert payload["detail"] == f"The request body is {size} bytes; this endpoint accepts at most {LIMIT} bytes."
        assert not response.will_close
        # The body was read to its end, so the same connection takes the next request.
        conn.request("POST", "/api/v1/auth/token/", body=b"{}", headers={"Content-Type": "application/json"})
        again = conn.getresponse()
        again.read()
        assert again.status == 400
    finally:
        conn.close()


def test_a_declared_body_over_the_limit_is_refused_unread_with_connection_close(web: WebServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=30)
    try:
        conn.putrequest("POST", "/api/v1/auth/token/")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(10 * 1024 * 1024))
        conn.endheaders()
        conn.send(b'{"username": "')
        response = conn.getresponse()
        payload = json.loads(response.read())
        assert response.status == 413, web.process.output()[-3000:]
        assert payload["detail"] == (
            f"The request body is {10 * 1024 * 1024} bytes; this endpoint accepts at most {LIMIT} bytes."
        )
        assert response.getheader("Connection") == "close"
        assert response.will_close
    finally:
        conn.close()


def test_a_connection_kept_alive_after_a_small_request_serves_the_next(web: WebServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=30)
    try:
        for _ in range(2):
            conn.request("POST", "/api/v1/auth/token/", body=b"{}", headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            response.read()
            assert response.status == 400
            assert not response.will_close
    finally:
        conn.close()
