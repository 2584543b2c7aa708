"""A REST client as a careful candidate's app would be: a request that fails with a 5xx or a
broken connection is sent again, with the same Idempotency-Key, until it gets an answer."""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass, field

# A request still failing after this long is a finding: no fault of a round lasts half as long.
GIVE_UP_AFTER = 45.0
RETRYABLE = {500, 502, 503, 504}


@dataclass
class Answer:
    status: int
    body: bytes
    headers: dict[str, str]

    def json(self) -> dict:
        return json.loads(self.body)


class GaveUp(Exception):
    """The request never got an answer that was not a 5xx or a broken connection."""


@dataclass
class Counters:
    requests: int = 0
    resent: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, *, resent: bool) -> None:
        with self.lock:
            self.requests += 1
            self.resent += int(resent)


class Client:
    def __init__(self, port: int, counters: Counters, token: str | None = None) -> None:
        self.port = port
        self.token = token
        self.counters = counters

    def send(self, method: str, path: str, body: dict | None = None, *, key: str | None = None) -> Answer:
        started = time.monotonic()
        pause = 0.1
        last = "no answer"
        resent = False
        while True:
            self.counters.add(resent=resent)
            try:
                answer = self._once(method, path, body, key)
                if answer.status not in RETRYABLE:
                    return answer
                last = f"{answer.status} {answer.body[:200]!r}"
                retry_after = answer.headers.get("retry-after")
                if retry_after and retry_after.isdigit():
                    pause = max(pause, min(float(retry_after), 2.0))
            except (OSError, http.client.HTTPException) as exc:
                last = f"{type(exc).__name__}: {exc}"
            if time.monotonic() - started > GIVE_UP_AFTER:
                raise GaveUp(f"{method} {path} still failing after {GIVE_UP_AFTER:.0f} s: {last}")
            # A client's back-off between two tries of one request, not a synchronisation.
            time.sleep(pause)
            pause = min(pause * 2, 2.0)
            resent = True

    def _once(self, method: str, path: str, body: dict | None, key: str | None) -> Answer:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Token {self.token}"
        if key:
            headers["Idempotency-Key"] = key
        payload = None
        if body is not None:
            payload = json.dumps(body, separators=(",", ":")).encode()
            headers["Content-Type"] = "application/json"
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        try:
            conn.request(method, path, body=payload, headers=headers)
            response = conn.getresponse()
            data = response.read()
            return Answer(response.status, data, {k.lower(): v for k, v in response.getheaders()})
        finally:
            conn.close()
