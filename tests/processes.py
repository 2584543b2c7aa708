"""Real processes for tests: Celery workers, the relay, a Redis server of the test's own."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


def test_database_url() -> str:
    db = connection.settings_dict
    host = db["HOST"] or "127.0.0.1"
    port = db["PORT"] or "5432"
    if host.startswith("/"):
        return f"postgres://{db['USER']}@/{db['NAME']}?host={host}"
    return f"postgres://{db['USER']}:{db['PASSWORD']}@{host}:{port}/{db['NAME']}"


def process_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "DATABASE_URL": test_database_url(),
            "REDIS_URL": settings.CACHES["default"]["LOCATION"],
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "HEARTBEAT_INTERVAL": str(settings.CONFIG.heartbeat_interval),
            "RETRY_BASE_DELAY": str(settings.CONFIG.retry_base_delay),
            "JOB_MAX_TRIES": str(settings.CONFIG.job_max_tries),
            "STALE_JOB_AFTER": str(settings.CONFIG.stale_job_after),
            "PYTHONPATH": str(ROOT),
        }
    )
    # The browser tests allow Django's sync calls beside Playwright's loop; the processes they
    # start must keep Django's check.
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    env.update(extra)
    return env


class Worker:
    def __init__(self, proc: subprocess.Popen, log: Path):
        self.proc = proc
        self.log = log

    @property
    def pid(self) -> int:
        return self.proc.pid

    def children(self) -> list[int]:
        try:
            raw = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text()
        except FileNotFoundError:
            return []
        return [int(p) for p in raw.split()]

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            pass

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.kill(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill(signal.SIGKILL)
                self.proc.wait(timeout=10)
        # Children left behind by a killed parent die with the process group.
        self.kill(signal.SIGKILL)


def start_worker(
    tmp_path: Path, *, concurrency: int = 2, queues: str = "evaluate,generate,run,ops", **env: str
) -> Worker:
    name = f"w{uuid.uuid4().hex[:8]}"
    log = tmp_path / f"{name}.log"
    ready = tmp_path / f"{name}.ready"
    env = {"CELERY_READY_FILE": str(ready), **env}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "interviewprep",
            "worker",
            "--queues",
            queues,
            "--concurrency",
            str(concurrency),
            "--hostname",
            f"{name}@%h",
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ],
        cwd=ROOT,
        env=process_env(**env),
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    worker = Worker(proc, log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"worker exited at start:\n{worker.output()[-3000:]}")
        if ready.exists():
            return worker
        time.sleep(0.1)
    worker.stop()
    raise RuntimeError(f"worker not ready in 60 s:\n{worker.output()[-3000:]}")


def start_relay(tmp_path: Path, *, interval: float = 0.2, **env: str) -> Worker:
    log = tmp_path / f"relay-{uuid.uuid4().hex[:6]}.log"
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "outbox_relay", "--interval", str(interval)],
        cwd=ROOT,
        env=process_env(**env),
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    return Worker(proc, log)


def wait_for(predicate: Callable[[], object], *, timeout: float = 30, interval: float = 0.05, message: str = ""):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {message or predicate}")
        time.sleep(interval)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """A Redis server of the test's own, so it can be paused (SIGSTOP) without touching others."""

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="ip-redis-")
        self._start()

    def _start(self) -> None:
        executable = shutil.which("redis-server") or str(Path(sys.executable).parent / "redis-server")
        self.proc = subprocess.Popen(
            [
                executable,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.dir,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        import redis

        wait_for(lambda: self._ping(redis), timeout=10, message="test redis to start")

    def _ping(self, redis) -> bool:
        try:
            return redis.Redis(port=self.port, socket_timeout=0.2).ping()
        except redis.RedisError:
            return False

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def pause(self) -> None:
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.proc.send_signal(signal.SIGCONT)

    def restart(self, *, down_for: float = 0.0) -> None:
        """Killed, as a crashed server is, and started again on the same port, empty, after
        `down_for` seconds."""
        self.proc.kill()
        self.proc.wait(timeout=10)
        time.sleep(down_for)  # the outage itself, not a wait for anything
        self._start()

    def stop(self) -> None:
        self.resume()
        self.proc.kill()
        self.proc.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)
