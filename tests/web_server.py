"""The Procfile's own `web` line, started for a test against the test database."""

from __future__ import annotations

import http.client
import json
import uuid
from dataclasses import dataclass
from pathlib import Path

from interviewprep.processes import health, procfile_argv
from tests.processes import Worker, free_port, process_env, wait_for


@dataclass
class WebServer:
    process: Worker
    port: int

    def request(self, path: str, *, token: str | None = None, timeout: float = 60) -> tuple[int, dict, dict]:
        """(status, JSON body, headers) of one GET on a connection of its own."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request("GET", path, headers={"Authorization": f"Token {token}"} if token else {})
            response = conn.getresponse()
            raw = response.read()
            headers = {k.lower(): v for k, v in response.getheaders()}
        finally:
            conn.close()
        is_json = "json" in headers.get("content-type", "")
        return response.status, (json.loads(raw) if is_json else {"raw": raw}), headers


def web_command(port: int, workers: int | None) -> list[str]:
    """The `web:` line as argv, on `port`, with `workers` processes (None: the line's own) and
    this venv's executables."""
    argv = procfile_argv("web", port=port)
    if workers is not None:
        argv[argv.index("--workers") + 1] = str(workers)
    return argv


def procfile_web_workers() -> int:
    """How many processes the Procfile's `web:` line starts."""
    argv = procfile_argv("web", port=0)
    return int(argv[argv.index("--workers") + 1])


def start_web(tmp_path: Path, *, workers: int | None = 1, **env: str) -> WebServer:
    """gunicorn as the Procfile starts it, serving the test settings and database; ready once
    `/healthz` answers 200. Stop it with `.process.stop()`."""
    port = free_port()
    log = tmp_path / f"web-{uuid.uuid4().hex[:6]}.log"
    server = WebServer(Worker.start("web", web_command(port, workers), env=process_env(**env), log=log), port)
    try:
        wait_for(
            lambda: health(port, timeout=5)[0] == 200,
            timeout=90,
            interval=0.1,
            message="the web line to answer /healthz",
            process=server.process,
        )
    except BaseException:
        server.process.stop()
        raise
    return server
