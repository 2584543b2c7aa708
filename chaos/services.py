"""The drill's own state: PostgreSQL databases named `ip_chaos_*` on the configured server, and
Redis servers of its own on free ports (so pausing or restarting one touches nobody else)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import redis
from psycopg import sql

from interviewprep.embedded import process_alive, set_parent_death_signal

PREFIX = "ip_chaos_"
DEFAULT_SERVER_URL = "postgres://postgres@127.0.0.1:5432/postgres"


class ChaosSetupError(RuntimeError):
    """The drill could not set a round up (not a finding about the product)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Postgres:
    """Creates, copies and drops the drill's databases on one server."""

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url

    def url(self, name: str) -> str:
        # libpq reads these URLs as they are (a socket folder in ?host= too), once the scheme is its own.
        return urlsplit(self.server_url)._replace(scheme="postgresql", path=f"/{name}").geturl()

    def connect(self, name: str = "postgres") -> psycopg.Connection:
        return psycopg.connect(self.url(name), autocommit=True, connect_timeout=5)

    def create(self, name: str, *, template: str | None = None) -> None:
        _check_name(name)
        with self.connect() as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            if template:
                statement = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                    sql.Identifier(name), sql.Identifier(template)
                )
            else:
                statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
            conn.execute(statement)

    def drop(self, name: str) -> None:
        _check_name(name)
        with contextlib.suppress(psycopg.Error), self.connect() as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    def drop_leftovers(self) -> list[str]:
        """Databases of drills that died without cleaning up (their pid is in the name)."""
        with self.connect() as conn:
            names = [
                row[0] for row in conn.execute("SELECT datname FROM pg_database WHERE datname LIKE 'ip\\_chaos\\_%'")
            ]
        dropped = []
        for name in names:
            match = re.fullmatch(rf"{PREFIX}(\d+)_.*", name)
            if match and int(match.group(1)) != os.getpid() and not process_alive(int(match.group(1))):
                self.drop(name)
                dropped.append(name)
        return dropped

    def terminate_backends(self, name: str) -> int:
        """Cut every connection to the database, as a failover or an idle-session killer does."""
        with self.connect() as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                [name],
            ).fetchall()
        return sum(1 for (done,) in rows if done)


def _check_name(name: str) -> None:
    if not re.fullmatch(rf"{PREFIX}[a-z0-9_]+", name):
        raise ChaosSetupError(f"refusing to touch database {name!r}: the drill owns only {PREFIX}* ones")


class RedisServer:
    """A redis-server of the drill's own. `restart` kills it and starts a fresh one on the same
    port: without persistence, its keys (a broker's queues) are lost, the harsher kind of restart."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix=f"ip-chaos-{name}-")
        self.proc: subprocess.Popen[bytes] | None = None
        self.paused = False
        self.start()

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        executable = shutil.which("redis-server") or str(Path(sys.executable).with_name("redis-server"))
        # noeviction as in production: broker and lock keys must never be evicted.
        argv = [executable, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        argv += ["--dir", self.dir, "--maxmemory-policy", "noeviction"]
        self.proc = subprocess.Popen(
            argv,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=set_parent_death_signal,
        )
        self.paused = False

    def wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        client = redis.Redis(port=self.port, socket_timeout=0.5, socket_connect_timeout=0.5)
        try:
            while True:
                with contextlib.suppress(redis.RedisError):
                    if client.ping():
                        return
                if time.monotonic() > deadline:
                    raise ChaosSetupError(f"redis-server ({self.name}) did not answer on port {self.port}")
                time.sleep(0.05)
        finally:
            client.close()

    def pause(self) -> None:
        self._signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        self._signal(signal.SIGCONT)
        self.paused = False

    def kill(self) -> None:
        if self.proc is not None:
            self._signal(signal.SIGCONT)
            self._signal(signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        self.paused = False

    def stop(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _signal(self, sig: int) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(sig)
