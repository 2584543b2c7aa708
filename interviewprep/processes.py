"""The one process manager of `make run`, the chaos drill, the benchmarks and the tests.

Each process starts in a process group of its own (its pid is the group's id), so that one
signal reaches it and whatever it forked. Safe by construction on a machine that reuses pids
within seconds: a process or its group is signalled only while its leader is not reaped (a
zombie leader keeps the pid, and so the group's id, from being reused), and a leader is reaped
only by `stop`, once its group is gone or killed. `alive()` and `returncode` peek without
reaping (waitid with WNOWAIT).
"""

from __future__ import annotations

import contextlib
import ctypes
import http.client
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Self

ROOT = Path(__file__).resolve().parent.parent
STOP_GRACE = 10.0
_PROCFILE_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*):\s*(.+?)\s*$")


class ProcessError(RuntimeError):
    """A process did not start, exited early, or did not become ready in time."""


@dataclass(frozen=True)
class ProcfileEntry:
    name: str
    command: str


def parse_procfile(path: Path = ROOT / "Procfile") -> list[ProcfileEntry]:
    entries = []
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _PROCFILE_LINE.match(line)
        if match is None:
            raise ValueError(f"{path}: cannot read line {raw!r} (expected `name: command`)")
        entries.append(ProcfileEntry(match.group(1), match.group(2)))
    return entries


def procfile_line(name: str, path: Path = ROOT / "Procfile") -> str:
    for entry in parse_procfile(path):
        if entry.name == name:
            return entry.command
    raise ProcessError(f"{path} has no {name!r} line")


def procfile_argv(name: str, *, port: int, path: Path = ROOT / "Procfile") -> list[str]:
    """A Procfile line as argv, without a shell: $PORT given, this venv's executables."""
    argv = shlex.split(re.sub(r"\$\{PORT(:-[^}]*)?\}|\$PORT", str(port), procfile_line(name, path)))
    # A line run under `chrt --idle 0` or `nice -n N`: the program after them is found as any line's own.
    prefix: list[str] = []
    while argv[:2] in (["nice", "-n"], ["chrt", "--idle"]):
        prefix, argv = [*prefix, *argv[:3]], argv[3:]
    return [*prefix, *_program_argv(argv)]


def _program_argv(argv: list[str]) -> list[str]:
    if argv[0] == "python":
        return [sys.executable, *argv[1:]]
    if Path(sys.executable).with_name(argv[0]).exists():
        return [*venv_tool(argv[0]), *argv[1:]]
    return argv


def venv_tool(name: str) -> list[str]:
    """This venv's executable of a tool, or the module run by this interpreter."""
    tool = Path(sys.executable).with_name(name)
    return [str(tool)] if tool.exists() else [sys.executable, "-m", name]


def venv_path(env: dict[str, str]) -> str:
    """PATH with this interpreter's scripts first, so a Procfile's `celery` is this venv's."""
    return os.pathsep.join([sysconfig.get_path("scripts"), env.get("PATH", os.defpath)])


def set_parent_death_signal() -> None:
    """In a child before exec: SIGTERM when the thread that started it dies, even by SIGKILL (Linux)."""
    if sys.platform != "linux":
        return
    pr_set_pdeathsig = 1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_in_use(port: int) -> bool:
    """Whether a server holds the port (bound as the app's processes bind, with SO_REUSEADDR)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def health(port: int, timeout: float = 3.0) -> tuple[int | None, Any]:
    """(status, JSON body or text) of GET /healthz on 127.0.0.1:port; (None, why) without an answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/healthz")
        response = conn.getresponse()
        body = response.read()
    except (OSError, http.client.HTTPException) as exc:
        return None, str(exc)
    finally:
        conn.close()
    try:
        return response.status, json.loads(body)
    except ValueError:
        return response.status, body[:300].decode(errors="replace")


def wait_for(
    predicate: Callable[[], Any],
    *,
    timeout: float = 30,
    interval: float = 0.05,
    message: str = "",
    process: Process | None = None,
    error: type[Exception] = ProcessError,
) -> Any:
    """predicate()'s first true value; `error` once `timeout` passes, or `process` exits, first."""
    deadline = time.monotonic() + timeout
    what = message or getattr(predicate, "__name__", repr(predicate))
    while True:
        value = predicate()
        if value:
            return value
        if process is not None and not process.alive():
            raise error(f"{process.name} exited while waiting for {what}:\n{process.tail()}")
        if time.monotonic() > deadline:
            tail = f"\n{process.tail()}" if process is not None else ""
            raise error(f"timed out after {timeout:g} s waiting for {what}{tail}")
        time.sleep(interval)


def how_it_ended(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


def _group_has_members(pgid: int) -> bool:
    """Whether any live (non-zombie) process is in the group. Only asked while its leader is
    unreaped, so the id cannot belong to another group."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


class Process:
    """One started command, leader of its own process group. Start it with `Process.start`."""

    def __init__(self, name: str, proc: subprocess.Popen[bytes], log: Path | None = None) -> None:
        self.name = name
        self.proc = proc
        self.log = log
        # Held while reaping or signalling, so no signal follows a reap in another thread.
        self._lock = threading.RLock()

    @classmethod
    def start(
        cls,
        name: str,
        command: list[str] | str,
        *,
        env: dict[str, str] | None = None,
        cwd: Path = ROOT,
        log: Path | None = None,
        stdout: int | IO[bytes] | None = None,
        parent_death: bool = False,
    ) -> Self:
        """`command` as argv, or as a shell line (run by bash, as a Procfile runner does).
        Output goes to `log` (created), else to `stdout` (e.g. subprocess.PIPE), else nowhere.
        `parent_death`: SIGTERM when the starting thread dies (start from the main thread then)."""
        env = dict(os.environ if env is None else env)
        if isinstance(command, str):
            command = [shutil.which("bash", path=env.get("PATH")) or "/bin/sh", "-c", command]
        out = log.open("wb") if log is not None else stdout if stdout is not None else subprocess.DEVNULL
        try:
            proc = subprocess.Popen(
                command,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                process_group=0,
                preexec_fn=set_parent_death_signal if parent_death else None,
            )
        finally:
            if log is not None:
                out.close()
        return cls(name, proc, log)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        """The exit status (negative: the signal), None while the leader runs; never reaps."""
        with self._lock:
            if self.proc.returncode is not None:
                return self.proc.returncode
            try:
                info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:  # reaped behind our back (proc.wait() called directly)
                return self.proc.poll()
            if info is None:
                return None
            return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status

    def alive(self) -> bool:
        return self.returncode is None

    def send_signal(self, sig: int) -> bool:
        """`sig` to the leader alone, if it is not reaped; whether it was sent."""
        with self._lock:
            if self.proc.returncode is not None:
                return False
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)
            return True

    def stopped(self) -> bool:
        """Whether the leader is stopped by a signal now (a SIGSTOP is delivered asynchronously:
        right after it was sent, the process may still be running)."""
        with self._lock:
            if self.proc.returncode is not None:
                return False
            try:
                stat = Path(f"/proc/{self.pid}/stat").read_text()
            except FileNotFoundError:
                return False
        return stat.rsplit(")", 1)[1].split()[0] in ("T", "t")

    def kill(self, sig: int = signal.SIGKILL) -> bool:
        """`sig` to the whole group, if its leader is not reaped; whether it was sent."""
        with self._lock:
            if self.proc.returncode is not None:
                return False
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, sig)
            return True

    def group_alive(self) -> bool:
        """Whether the leader or anything left in its group runs (False once reaped: unknowable)."""
        with self._lock:
            if self.proc.returncode is not None:
                return False
            return self.alive() or _group_has_members(self.pid)

    def children(self) -> list[int]:
        """The leader's child pids, while it is not reaped."""
        with self._lock:
            if self.proc.returncode is not None:
                return []
            try:
                return [int(p) for p in Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text().split()]
            except OSError:
                return []

    def stop(self, grace: float = STOP_GRACE) -> int | None:
        """SIGTERM to the group, SIGKILL after `grace` seconds (at once for 0), then reap."""
        stop_all([self], grace=grace)
        return self.proc.returncode

    def reap(self, timeout: float = 10.0) -> int | None:
        with self._lock:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout)
            return self.proc.returncode

    def output(self) -> str:
        if self.log is None:
            return ""
        try:
            return self.log.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def tail(self, chars: int = 3000) -> str:
        return self.output()[-chars:]


def stop_all(
    processes: Iterable[Process],
    *,
    grace: float = STOP_GRACE,
    nudge_after: float | None = None,
    hurry: Callable[[], bool] = lambda: False,
    say: Callable[[str], None] | None = None,
) -> None:
    """SIGTERM (and SIGCONT, for a paused one) to every group still alive; up to `grace` seconds
    for them all to end, a second SIGTERM after `nudge_after`, SIGKILL to what remains or as soon
    as `hurry()`; then every leader is reaped, last, so no group's id is reused while signalled."""
    processes = list(processes)
    live = [p for p in processes if p.group_alive()]
    started = time.monotonic()
    if grace > 0:
        for process in live:
            process.kill(signal.SIGTERM)
            process.kill(signal.SIGCONT)
    nudged = False
    while live and time.monotonic() - started < grace and not hurry():
        time.sleep(0.1)
        live = [p for p in live if p.group_alive()]
        if live and nudge_after is not None and not nudged and time.monotonic() - started > nudge_after:
            nudged = True
            for process in live:
                process.kill(signal.SIGTERM)
    for process in live:
        if say is not None and grace > 0:
            say(f"{process.name} did not stop in {grace:.0f} s: killing it")
        process.kill(signal.SIGKILL)
    for process in processes:
        process.reap()


def signal_if(pid: int, sig: int, check: Callable[[int], bool]) -> bool:
    """`sig` to a process that is not our child (found in /proc), only if check(pid) holds for the
    process the pidfd was opened on: a pid reused meanwhile gets nothing."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return False
    try:
        if not check(pid):
            return False
        signal.pidfd_send_signal(fd, sig)
        return True
    except ProcessLookupError:
        return False
    finally:
        os.close(fd)


class RedisServer:
    """A redis-server of a drill's or a test's own on a free port, without persistence, so that
    pausing or killing it touches nobody else. A restart comes back empty on the same port."""

    def __init__(self, name: str = "redis", *, parent_death: bool = False) -> None:
        self.name = name
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix=f"ip-{name}-")
        self.parent_death = parent_death
        self.process: Process | None = None
        self.paused = False
        self.start()

    @property
    def proc(self) -> subprocess.Popen[bytes] | None:
        return self.process.proc if self.process is not None else None

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self, timeout: float = 10.0) -> None:
        executable = shutil.which("redis-server") or str(Path(sys.executable).with_name("redis-server"))
        # noeviction as in production: broker and lock keys must never be evicted.
        argv = [executable, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        argv += ["--dir", self.dir, "--maxmemory-policy", "noeviction"]
        self.process = Process.start(f"{self.name} redis", argv, parent_death=self.parent_death)
        self.paused = False
        try:
            wait_for(
                self._ping,
                timeout=timeout,
                message=f"redis-server ({self.name}) on port {self.port}",
                process=self.process,
            )
        except BaseException:
            self.process.stop(grace=0)
            raise

    def _ping(self) -> bool:
        import redis

        client = redis.Redis(port=self.port, socket_timeout=0.5, socket_connect_timeout=0.5)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def pause(self) -> None:
        """Stopped, as a hung server is; returns once it is stopped, so what follows meets a pause."""
        if self.process is not None and self.process.send_signal(signal.SIGSTOP):
            wait_for(self.process.stopped, timeout=10, message=f"redis-server ({self.name}) to stop")
        self.paused = True

    def resume(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGCONT)
        self.paused = False

    def kill(self) -> None:
        """Killed, as a crashed server is: its keys are lost."""
        if self.process is not None:
            self.process.stop(grace=0)
        self.paused = False

    def restart(self, *, down_for: float = 0.0) -> None:
        self.kill()
        time.sleep(down_for)  # the outage itself, not a wait for anything
        self.start()

    def stop(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)
