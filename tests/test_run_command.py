"""`python -m interviewprep.run` starts everything, answers on /healthz, stops everything it
started on Ctrl-C, and keeps the embedded services' data from one start to the next."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest
import redis
from psycopg import sql

from interviewprep import embedded
from interviewprep.processes import Process, free_port, parse_procfile, signal_if
from interviewprep.run import unavailable

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 90
STOP_TIMEOUT = 60
MACHINE_DATABASE = "ip_runcmd"
# RUNCMD_REDIS_URL moves it, for a machine whose 6379 is shared.
MACHINE_REDIS_URL = os.environ.get("RUNCMD_REDIS_URL") or "redis://127.0.0.1:6379/6"
# One machine database, Redis database and embedded servers for the module: its tests run in
# one test process, one after another, under pytest-xdist too.
pytestmark = pytest.mark.xdist_group("run-command")


def _live_processes() -> dict[int, tuple[int, bytes]]:
    """pid -> (process group, command line) of every process that is not a zombie."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except (OSError, IndexError):
            continue
        if fields[0] not in (b"Z", b"X"):
            found[int(entry.name)] = (int(fields[2]), cmdline)
    return found


class Run:
    """One `python -m interviewprep.run` in the background, its output in a file."""

    def __init__(self, args: list[str], env: dict[str, str], data_dir: Path, log: Path) -> None:
        self.data_dir = data_dir
        self.log = log
        self.state: dict = {}
        # Runs may share a log: each reads only what it wrote itself.
        self.offset = log.stat().st_size if log.exists() else 0
        with open(log, "ab") as out:
            self.process = Process.start("run", [sys.executable, "-m", "interviewprep.run", *args], env=env, stdout=out)
        self.proc = self.process.proc

    def output(self) -> str:
        with open(self.log, "rb") as fh:
            fh.seek(self.offset)
            return fh.read().decode(errors="replace")

    def fail(self, why: str) -> None:
        tail = "\n".join(self.output().splitlines()[-60:])
        pytest.fail(f"{why}\n--- run output (tail) ---\n{tail}")

    def wait_healthy(self) -> dict:
        deadline = time.monotonic() + START_TIMEOUT
        last = "no answer yet"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.fail(f"the run command exited with status {self.proc.returncode} before /healthz answered")
            state_file = self.data_dir / "run.json"
            if not self.state and state_file.exists():
                self.state = json.loads(state_file.read_text())
            if self.state:
                try:
                    with urllib.request.urlopen(f"{self.state['url']}healthz", timeout=3) as response:
                        body = json.loads(response.read())
                    # The banner follows the run command's own health check: wait for both.
                    banner = f"InterviewPrep is running at {self.state['url']}"
                    if all(value == "ok" for value in body["checks"].values()) and banner in self.output():
                        return body
                    last = json.dumps(body)
                except urllib.error.HTTPError as exc:
                    last = f"{exc.code} {exc.read()[:300]!r}"
                except OSError as exc:
                    last = str(exc)
            time.sleep(0.3)
        self.fail(f"/healthz did not answer 200 with every check ok within {START_TIMEOUT} s: {last}")
        raise AssertionError  # unreachable: pytest.fail raises

    def owned_pids(self) -> tuple[set[int], set[int]]:
        """(process groups of the children, pids of the embedded servers) it recorded."""
        groups = set(self.state.get("children", {}).values())
        servers = {pid for pid in self.state.get("embedded", {}).values() if pid}
        return groups, servers

    def leftovers(self) -> list[str]:
        groups, servers = self.owned_pids()
        marker = str(self.data_dir).encode()
        return [
            f"{pid} {cmdline.decode(errors='replace')[:120]}"
            for pid, (pgid, cmdline) in _live_processes().items()
            if pid != os.getpid() and (pgid in groups or pid in servers or marker in cmdline)
        ]

    def interrupt(self) -> None:
        """Ctrl-C, and wait for the run command to exit."""
        self.process.send_signal(signal.SIGINT)
        if self.process.reap(STOP_TIMEOUT) is None:
            self.fail(f"the run command did not exit within {STOP_TIMEOUT} s of SIGINT")

    def kill_everything(self) -> None:
        """After a failed test: leave nothing behind for the next one."""
        self.process.stop(grace=STOP_TIMEOUT)
        # What it left is no child of ours: signalled only while it still names this data folder.
        groups, servers = self.owned_pids()
        marker = str(self.data_dir).encode()

        def ours(pid: int) -> bool:
            with contextlib.suppress(OSError):
                return marker in Path(f"/proc/{pid}/cmdline").read_bytes() + Path(f"/proc/{pid}/environ").read_bytes()
            return False

        for pid, (pgid, _) in _live_processes().items():
            if pid in servers:
                signal_if(pid, signal.SIGINT, ours)  # PostgreSQL's fast shutdown
            elif pgid in groups:
                signal_if(pid, signal.SIGKILL, ours)


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # Not pytest's tmp_path: as root, the embedded PostgreSQL runs as `pgserver` and needs to
    # traverse every parent folder, and pytest keeps /tmp/pytest-of-root private.
    folder = Path(tempfile.mkdtemp(prefix="ip-runcmd-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def runs() -> Iterator[list[Run]]:
    started: list[Run] = []
    yield started
    for run in started:
        run.kill_everything()


def _env(data_dir: Path, **overrides: str) -> dict[str, str]:
    env = dict(os.environ)
    # pytest-django points this at the test settings; the run command serves the real ones.
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.pop("PORT", None)
    env["INTERVIEWPREP_DATA_DIR"] = str(data_dir)
    env.update(overrides)
    return env


def _stopped_cleanly(run: Run) -> None:
    run.interrupt()
    assert run.proc.returncode == 0, run.output()[-3000:]
    # Reparented grandchildren may take a moment to exit: a generous deadline, as for the stop.
    deadline = time.monotonic() + STOP_TIMEOUT
    while run.leftovers() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert run.leftovers() == [], "processes left behind after SIGINT"
    assert not (run.data_dir / "run.json").exists()


def _socket_connect(database_url: str) -> psycopg.Connection:
    parts = urlsplit(database_url)
    return psycopg.connect(
        host=parse_qs(parts.query)["host"][0], user="postgres", dbname=parts.path.lstrip("/"), autocommit=True
    )


@pytest.mark.drill
def test_embedded_services_start_answer_stop_and_keep_their_data(data_dir: Path, runs: list[Run]) -> None:
    port = free_port()
    # DATABASE_URL and REDIS_URL stay set, pointing at the machine's services: --embedded wins.
    env = _env(data_dir, DJANGO_SUPERUSER_PASSWORD=secrets.token_urlsafe(16))
    log = data_dir.parent / f"{data_dir.name}.log"
    try:
        first = Run(["--embedded", "--port", str(port)], env, data_dir, log)
        runs.append(first)
        health = first.wait_healthy()
        assert set(health["checks"]) >= {"database", "redis", "broker"}
        assert "?host=" in first.state["database_url"]
        assert first.state["embedded"]["postgres"] and first.state["embedded"]["redis"]
        assert f"InterviewPrep is running at http://127.0.0.1:{port}/" in first.output()
        assert "PostgreSQL: embedded" in first.output() and "Redis:      embedded" in first.output()
        for name in ("web", "worker", "worker-generate", "beat"):
            assert name in first.state["children"]

        user_env = {
            **env,
            "DATABASE_URL": first.state["database_url"],
            "REDIS_URL": first.state["redis_url"],
        }
        user_env.pop("CELERY_BROKER_URL", None)
        subprocess.run(
            [sys.executable, "manage.py", "createsuperuser", "--noinput", "--username", "runcmd"]
            + ["--email", "runcmd@example.com"],
            cwd=ROOT,
            env=user_env,
            check=True,
            capture_output=True,
            timeout=60,
        )
        token = secrets.token_hex(8)
        cache = redis.Redis.from_url(first.state["redis_url"], db=5)
        cache.set("runcmd:probe", token)
        cache.close()
        _stopped_cleanly(first)

        second = Run(["--embedded", "--port", str(port)], env, data_dir, log)
        runs.append(second)
        second.wait_healthy()
        with _socket_connect(second.state["database_url"]) as conn:
            found = conn.execute("SELECT is_superuser FROM auth_user WHERE username = 'runcmd'").fetchone()
        assert found == (True,), "the user created in the first run is gone"
        cache = redis.Redis.from_url(second.state["redis_url"], db=5)
        assert cache.get("runcmd:probe") == token.encode(), "the embedded Redis lost its data on restart"
        cache.close()
        _stopped_cleanly(second)
    finally:
        log.unlink(missing_ok=True)


@pytest.fixture
def machine_database() -> str:
    with psycopg.connect(host="127.0.0.1", port=5432, user="postgres", dbname="postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [MACHINE_DATABASE]).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(MACHINE_DATABASE)))
    return f"postgres://postgres@127.0.0.1:5432/{MACHINE_DATABASE}"


@pytest.mark.drill
def test_machine_services_are_used_when_configured(data_dir: Path, runs: list[Run], machine_database: str) -> None:
    env = _env(data_dir, DATABASE_URL=machine_database, REDIS_URL=MACHINE_REDIS_URL)
    env.pop("CELERY_BROKER_URL", None)
    log = data_dir.parent / f"{data_dir.name}.log"
    try:
        run = Run(["--port", str(free_port())], env, data_dir, log)
        runs.append(run)
        run.wait_healthy()
        assert run.state["database_url"] == machine_database
        assert run.state["redis_url"] == MACHINE_REDIS_URL
        assert run.state["embedded"] == {"postgres": None, "redis": None}
        assert f"PostgreSQL: {machine_database} (external)" in run.output()
        _stopped_cleanly(run)
    finally:
        log.unlink(missing_ok=True)


@pytest.mark.nodb
def test_the_procfile_is_read_and_a_missing_management_command_is_skipped(tmp_path: Path) -> None:
    entries = {entry.name: entry.command for entry in parse_procfile(ROOT / "Procfile")}
    assert {"release", "web", "worker", "worker-generate", "beat"} <= set(entries)
    assert "${PORT:-8000}" in entries["web"]

    procfile = tmp_path / "Procfile"
    procfile.write_text(
        "# comment\n\nweb: gunicorn app --bind 127.0.0.1:${PORT:-8000}\nrelay: python manage.py relay\n"
    )
    assert [e.name for e in parse_procfile(procfile)] == ["web", "relay"]
    env = {"PATH": str(Path(sys.executable).parent)}
    assert unavailable("python manage.py relay", env, {"migrate"}) == "manage.py has no relay command yet"
    assert unavailable("python manage.py migrate --noinput", env, {"migrate"}) is None
    assert unavailable("DEBUG=1 python manage.py migrate", env, {"migrate"}) is None
    assert unavailable("no-such-program-here --x", env, None) == "no-such-program-here is not installed"


def test_configured_services_that_do_not_answer_fail_with_one_line(tmp_path: Path) -> None:
    dead = free_port()
    with pytest.raises(embedded.ServiceError) as db_error:
        embedded.decide({"DATABASE_URL": f"postgres://u:secret@127.0.0.1:{dead}/x"}, tmp_path, False, print)
    message = str(db_error.value)
    assert message.startswith(f"DATABASE_URL=postgres://u:***@127.0.0.1:{dead}/x does not answer")
    assert "secret" not in message and "\n" not in message

    with pytest.raises(embedded.ServiceError) as redis_error:
        embedded.decide(
            {"DATABASE_URL": "postgres://postgres@127.0.0.1:5432/postgres", "REDIS_URL": f"redis://127.0.0.1:{dead}/6"},
            tmp_path,
            False,
            print,
        )
    assert str(redis_error.value).startswith(f"REDIS_URL=redis://127.0.0.1:{dead}/6 does not answer")
