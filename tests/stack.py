"""The stack the browser tests drive: the Procfile's web server, a worker for runs and
evaluations, and the relay, started once for the tests a test process runs in a row that use
it, and stopped before it runs any other test (tests/conftest.py): no idle process costs the
rest, and its relay and worker never take another test's jobs.

Starting the three is most of a browser test's cost (docs/benchmarks.md, "The test suite").
Between tests the database is emptied as usual; ids are never reused, so a leftover message of an
earlier test finds no job and is skipped. The broker is a redis-server of the stack's own: the
per-test flush of the test process's broker database would take the worker's queue bindings
with it."""

from __future__ import annotations

from pathlib import Path

from interviewprep.processes import stop_all
from tests.processes import RedisServer, Worker, start_relay, start_worker
from tests.web_server import start_web


class SharedStack:
    def __init__(self) -> None:
        self._broker: RedisServer | None = None
        self._processes: list[Worker] = []
        self._url: str | None = None

    def url(self, log_dir: Path) -> str:
        """The base URL, starting the stack first if it is not running."""
        if self._url is None or not all(process.alive() for process in self._processes):
            self.stop()
            self._start(log_dir)
        return self._url

    def _start(self, log_dir: Path) -> None:
        self._broker = RedisServer("browser-broker")
        broker = {"CELERY_BROKER_URL": self._broker.url()}
        try:
            self._processes.append(start_relay(log_dir, **broker))
            self._processes.append(start_worker(log_dir, queues="run,evaluate,generate,ops", **broker))
            # As in production: creating a run waits for its cases (the test settings turn that off).
            web = start_web(log_dir, workers=2, RUN_WAIT_SECONDS="10", **broker)
        except BaseException:
            self.stop()
            raise
        self._processes.append(web.process)
        self._url = f"http://127.0.0.1:{web.port}"

    def stop(self) -> bool:
        """Stop whatever runs; True when something did."""
        was_running = bool(self._processes) or self._broker is not None
        stop_all(self._processes)
        self._processes.clear()
        self._url = None
        if self._broker is not None:
            self._broker.stop()
            self._broker = None
        return was_running


shared_stack = SharedStack()
