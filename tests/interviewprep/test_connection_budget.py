"""The web tier's PostgreSQL connections stay within their budget under 500 concurrent clients:
one per web process (docs/operations.md, "Connections"), however many requests it serves or
holds waiting, and below the server's `max_connections`."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.authtoken.models import Token

from attempts.models import Attempt, AttemptStatus
from interviewprep.processes import procfile_argv, stop_all
from tests import processes as test_processes
from tests.factories import QuestionFactory
from tests.processes import Worker, process_env, wait_for
from tests.web_server import WebServer, procfile_web_workers, start_web

# Written by hand from docs/operations.md: a web process runs its sync views on one thread, and
# its waits read through that thread, so it holds one connection.
CONNECTIONS_PER_WEB_PROCESS = 1
CLIENTS = 500
# Of every ten clients: one submits, three read their attempt, six wait for their attempt's
# version 2, which nobody makes (a new attempt is at 1), so every wait is held open to its
# deadline while the reads and submits are served.
SUBMITS_PER_TEN, READS_PER_TEN = 1, 3
WAIT_SECONDS = 5


@pytest.fixture
def web(transactional_db, tmp_path) -> Iterator[WebServer]:
    server = start_web(tmp_path, workers=None)  # the Procfile's own count
    yield server
    server.process.stop()


def _seed(users: int, attempts_per_user: int) -> list[tuple[str, int]]:
    """(token, attempt id) for each client, a user's attempts next to each other."""
    question = QuestionFactory()
    created = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"budget-{n}", password="!") for n in range(users)]
    )
    tokens = Token.objects.bulk_create([Token(user=u, key=Token.generate_key()) for u in created])
    attempts = Attempt.objects.bulk_create(
        [Attempt(user=u, question=question) for u in created for _ in range(attempts_per_user)]
    )
    token_of = {t.user_id: t.key for t in tokens}
    return [(token_of[a.user_id], a.pk) for a in attempts]


def _request(n: int, token: str, attempt_id: int) -> tuple[str, bytes]:
    """(kind, raw HTTP/1.1 request) of client n."""
    auth = f"Host: 127.0.0.1\r\nAuthorization: Token {token}\r\nConnection: close\r\n"
    if n % 10 < SUBMITS_PER_TEN:
        body = json.dumps({"answer": f"score=70 answer {n}"}).encode()
        head = (
            f"POST /api/v1/attempts/{attempt_id}/submissions/ HTTP/1.1\r\n{auth}"
            f"Idempotency-Key: budget-{n}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        return "submit", head.encode() + body
    if n % 10 < SUBMITS_PER_TEN + READS_PER_TEN:
        return "read", f"GET /api/v1/attempts/{attempt_id}/ HTTP/1.1\r\n{auth}\r\n".encode()
    path = f"/api/v1/attempts/{attempt_id}/?min_version=2&wait={WAIT_SECONDS}"
    return "wait", f"GET {path} HTTP/1.1\r\n{auth}\r\n".encode()


async def _clients(port: int, requests: list[tuple[str, bytes]]) -> list[tuple[str, int | None]]:
    """Every client connects first, then all send at once: (kind, status or None) each."""
    connected = await asyncio.gather(*(asyncio.open_connection("127.0.0.1", port) for _ in requests))

    async def one(kind: str, raw: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        try:
            writer.write(raw)
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(), timeout=60)
            return kind, int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else None
        except (OSError, TimeoutError):
            return kind, None
        finally:
            writer.close()

    return await asyncio.gather(*(one(*r, *c) for r, c in zip(requests, connected, strict=True)))


class _PeakSessions:
    """Samples, on a connection of its own, the sessions other than its own and `excluded` on
    the test database, until stopped: `.peak` is the most it saw at once, `.peak_of` the most
    per `application_name`."""

    def __init__(self, excluded: int) -> None:
        self.peak = 0
        self.peak_of: Counter[str] = Counter()
        self.samples = 0
        self._stop = threading.Event()
        self._conn = psycopg.connect(test_processes.test_database_url(), autocommit=True)
        self._excluded = excluded
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> _PeakSessions:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._conn.close()

    def _sample(self) -> None:
        query = (
            "SELECT application_name, count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid() AND pid <> %s GROUP BY application_name"
        )
        while True:
            counts = dict(self._conn.execute(query, [self._excluded]).fetchall())
            self.peak = max(self.peak, sum(counts.values()))
            for name, count in counts.items():
                self.peak_of[name] = max(self.peak_of[name], count)
            self.samples += 1
            if self._stop.wait(0.01):
                return


def _own_pid_and_max_connections() -> tuple[int, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid(), current_setting('max_connections')::int")
        return cursor.fetchone()


def _expected_answers() -> Counter:
    tens = CLIENTS // 10
    return Counter(
        {
            ("submit", 202): tens * SUBMITS_PER_TEN,
            ("read", 200): tens * READS_PER_TEN,
            ("wait", 200): CLIENTS - tens * (SUBMITS_PER_TEN + READS_PER_TEN),
        }
    )


def test_500_concurrent_clients_hold_at_most_one_connection_per_web_process(web: WebServer) -> None:
    budget = procfile_web_workers() * CONNECTIONS_PER_WEB_PROCESS
    clients = _seed(users=CLIENTS // 10, attempts_per_user=10)  # one submit per user
    requests = [_request(n, token, attempt_id) for n, (token, attempt_id) in enumerate(clients)]
    own_pid, max_connections = _own_pid_and_max_connections()

    with _PeakSessions(excluded=own_pid) as sessions:
        answers = asyncio.run(_clients(web.port, requests))

    assert Counter(answers) == _expected_answers()
    print(f"peak sessions {sessions.peak} over {sessions.samples} samples; budget {budget}, max {max_connections}")
    assert 1 <= sessions.peak <= budget < max_connections


# The budget's rows (docs/operations.md, "Connections"), written by hand: connections per process
# kind for the Procfile as it is.
BUDGET = {"web": 8, "worker": 9, "worker-run": 5, "worker-regrade": 3, "worker-generate": 3, "beat": 1, "relay": 1}
CELERY_LINES = ("worker", "worker-run", "worker-regrade", "worker-generate")


def _start_line(tmp_path: Path, name: str, **env: str) -> Worker:
    log = tmp_path / f"{name}.log"
    if name in CELERY_LINES:
        ready = tmp_path / f"{name}.ready"
        env["CELERY_READY_FILE"] = str(ready)
    process = Worker.start(name, procfile_argv(name, port=0), env=process_env(**env), log=log)
    if name in CELERY_LINES:
        wait_for(ready.exists, timeout=120, interval=0.1, message=f"{name} to be ready", process=process)
    return process


@pytest.mark.drill
def test_every_procfile_line_stays_within_its_row_of_the_budget(transactional_db, tmp_path) -> None:
    """The whole Procfile under the same 500 clients, its submits evaluated slowly enough that
    every child's heartbeat thread holds its connection beside the job's."""
    started: list[Worker] = []
    try:
        for name in (*CELERY_LINES, "relay", "beat"):
            # A job lasts several heartbeat intervals (0.5 s in the tests).
            started.append(
                _start_line(
                    tmp_path, name, DATABASE_URL=test_processes.test_database_url(name), EVALUATOR_FAULTS="delay=2"
                )
            )
        web = start_web(tmp_path, workers=None, DATABASE_URL=test_processes.test_database_url("web"))
        started.append(web.process)
        clients = _seed(users=CLIENTS // 10, attempts_per_user=10)
        requests = [_request(n, token, attempt_id) for n, (token, attempt_id) in enumerate(clients)]
        own_pid, max_connections = _own_pid_and_max_connections()
        submitted = Attempt.objects.filter(pk__in=[a for n, (_, a) in enumerate(clients) if n % 10 < SUBMITS_PER_TEN])

        with _PeakSessions(excluded=own_pid) as sessions:
            answers = asyncio.run(_clients(web.port, requests))
            wait_for(
                lambda: not submitted.exclude(status=AttemptStatus.COMPLETED).exists(),
                timeout=120,
                interval=0.2,
                message="every submit to be evaluated",
            )
    finally:
        stop_all(started)

    assert Counter(answers) == _expected_answers()
    print(f"peak sessions {sessions.peak}, per line {dict(sessions.peak_of)}; max {max_connections}")
    over = {name: count for name, count in sessions.peak_of.items() if count > BUDGET.get(name, 0)}
    assert over == {}, f"over their budget: {over}"
    assert sessions.peak_of["worker"] > BUDGET["worker"] // 2  # its children's heartbeats were seen
    assert sessions.peak <= sum(BUDGET.values()) < max_connections
