"""`python -m interviewprep.run`: one command starts everything.

Picks PostgreSQL and Redis (configured, the machine's, or embedded ones in the data folder),
runs the Procfile's `release` line and `load_questions`, starts every other Procfile process in
its own process group with its output prefixed by its name, waits for `/healthz`, and on Ctrl-C,
SIGTERM or the death of any process stops everything it started.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from interviewprep import embedded
from interviewprep.config import ConfigError, load
from interviewprep.processes import (
    ROOT,
    STOP_GRACE,
    Process,
    ProcfileEntry,
    health,
    how_it_ended,
    parse_procfile,
    port_in_use,
    stop_all,
    venv_path,
)

HEALTH_TIMEOUT = 120.0
_COLOURS = ("36", "33", "32", "35", "34", "96", "93", "92", "95", "94")


class Output:
    """Lines of every process, prefixed like foreman/honcho: time, name, `|`."""

    def __init__(self, stream: IO[str], names: list[str]) -> None:
        self.stream = stream
        self.width = max(len(name) for name in names)
        self.colour = stream.isatty() and not os.environ.get("NO_COLOR")
        self.colours: dict[str, str] = {}
        self.lock = threading.Lock()

    def _prefix(self, name: str) -> str:
        stamp = datetime.now().strftime("%H:%M:%S")
        label = f"{stamp} {name.ljust(self.width)} |"
        if not self.colour:
            return label
        code = "1" if name == "run" else self.colours.setdefault(name, _COLOURS[len(self.colours) % len(_COLOURS)])
        return f"\x1b[{code}m{label}\x1b[0m"

    def line(self, name: str, text: str) -> None:
        with self.lock:
            self.stream.write(f"{self._prefix(name)} {text}\n")
            self.stream.flush()

    def say(self, text: str) -> None:
        self.line("run", text)


@dataclass
class Child:
    process: Process
    reader: threading.Thread
    expected_exit: bool = False


@dataclass
class Supervisor:
    env: dict[str, str]
    output: Output
    children: list[Child] = field(default_factory=list)
    stop_signal: int | None = None
    signals: int = 0
    wake: threading.Event = field(default_factory=threading.Event)

    def on_signal(self, signum: int, _frame: object) -> None:
        self.signals += 1
        if self.stop_signal is None:
            self.stop_signal = signum
        self.wake.set()

    @property
    def stopping(self) -> bool:
        return self.stop_signal is not None

    def start(self, name: str, command: str) -> Child:
        # Own group: the terminal's Ctrl-C reaches only us, and we stop each group in order.
        process = Process.start(name, command, env=self.env, stdout=subprocess.PIPE, parent_death=True)
        reader = threading.Thread(target=self._pump, args=(name, process.proc), daemon=True)
        reader.start()
        child = Child(process, reader)
        self.children.append(child)
        return child

    def _pump(self, name: str, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for raw in iter(proc.stdout.readline, b""):
            self.output.line(name, raw.decode(errors="replace").rstrip("\r\n"))
        proc.stdout.close()

    def run_once(self, name: str, command: str) -> int | None:
        """Run a one-off process to its end; None when a stop was asked for meanwhile."""
        child = self.start(name, command)
        child.expected_exit = True
        while (status := child.process.returncode) is None:
            if self.stopping:
                return None
            self.wake.wait(0.1)
        child.reader.join(5)
        return status

    def dead(self, watched: list[tuple[str, Callable[[], bool]]]) -> str | None:
        """The first line that says which process died unexpectedly, if one did."""
        for child in self.children:
            status = child.process.returncode
            if not child.expected_exit and status is not None:
                return f"{child.process.name} {how_it_ended(status)} unexpectedly"
        for name, alive in watched:
            if not alive():
                return f"{name} stopped unexpectedly"
        return None

    def stop_all(self) -> None:
        """SIGTERM to every group still alive, up to STOP_GRACE seconds, then SIGKILL."""
        if self.stop_signal is not None:
            self.output.say(f"{signal.Signals(self.stop_signal).name}: stopping everything")
        processes = [child.process for child in self.children]
        groups = [process.name for process in processes if process.group_alive()]
        if groups:
            self.output.say(f"stopping {', '.join(groups)}")
        # celery beat caught mid-startup turns SIGTERM into a swallowed database error and carries
        # on: a second one, halfway, stops it without waiting for SIGKILL.
        stop_all(
            processes,
            grace=STOP_GRACE,
            nudge_after=STOP_GRACE / 2,
            hurry=lambda: self.signals >= 2,
            say=self.output.say,
        )
        for child in self.children:
            child.reader.join(2)


def _venv_env(port: int, services: embedded.Services, metrics_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = venv_path(env)
    env["PYTHONUNBUFFERED"] = "1"  # lines reach the prefixer as they are written
    env["PORT"] = str(port)
    env["PROMETHEUS_MULTIPROC_DIR"] = str(metrics_dir)
    env["DATABASE_URL"] = services.database_url
    env["REDIS_URL"] = services.redis_url
    if services.broker_url:
        env["CELERY_BROKER_URL"] = services.broker_url
    else:
        env.pop("CELERY_BROKER_URL", None)  # config.py derives it from REDIS_URL
    return env


def _fresh_metrics_dir(data_dir: Path) -> Path:
    """The one folder every process of this run writes its metric files to, emptied: files left
    by an earlier run's processes would add their counts to this run's. Only the holder of the
    data folder's lock calls this, so no process still running writes there."""
    path = data_dir / "prometheus"
    path.mkdir(exist_ok=True)
    for leftover in path.iterdir():
        if leftover.is_file():
            leftover.unlink(missing_ok=True)
    return path


def _management_commands(env: dict[str, str]) -> subprocess.Popen[str]:
    """`manage.py help --commands`, started early: it takes a second and needs no services."""
    return subprocess.Popen(
        [sys.executable, "manage.py", "help", "--commands"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _collect_commands(proc: subprocess.Popen[str], say: Callable[[str], None]) -> set[str] | None:
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        say("warning: `manage.py help --commands` hung; not checking which commands exist")
        return None
    if proc.returncode != 0:
        last = err.strip().splitlines()[-1] if err.strip() else f"status {proc.returncode}"
        say(f"warning: `manage.py help --commands` failed ({last}); not checking which commands exist")
        return None
    return {line.strip() for line in out.splitlines() if line.strip()}


def unavailable(command: str, env: dict[str, str], commands: set[str] | None) -> str | None:
    """Why `command` cannot run yet (its program or its management command is missing)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None  # let the shell say what is wrong with it
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words.pop(0)
    if not words:
        return None
    if shutil.which(words[0], path=env["PATH"]) is None:
        return f"{words[0]} is not installed"
    if (
        commands is not None
        and len(words) >= 3
        and Path(words[0]).name.startswith("python")
        and words[1] == "manage.py"
        and words[2] not in commands
    ):
        return f"manage.py has no {words[2]} command yet"
    return None


def _write_state(path: Path, state: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=2))
    tmp.replace(path)


def _lock_data_dir(data_dir: Path) -> IO[str]:
    """One run per data folder: two would share (and fight over) the embedded servers."""
    handle = open(data_dir / "run.lock", "a+")  # noqa: SIM115 - held for the life of the run
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        other = handle.read().strip() or "?"
        handle.close()
        raise embedded.ServiceError(
            f"another interviewprep.run (pid {other}) is using {data_dir}: stop it first, "
            "or give this one its own folder with INTERVIEWPREP_DATA_DIR"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m interviewprep.run",
        description="Start web, workers, beat and relay; embedded PostgreSQL/Redis when none answers.",
    )
    parser.add_argument(
        "--embedded",
        action="store_true",
        help="use embedded PostgreSQL and Redis even when others are configured or answer",
    )
    parser.add_argument("--port", type=int, default=None, help="web port (default: $PORT or 8000)")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="folder for embedded services' data (default: $INTERVIEWPREP_DATA_DIR or .data/)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    procfile = parse_procfile(ROOT / "Procfile")
    names = ["run", "load_questions", *(entry.name for entry in procfile)]
    output = Output(sys.stdout, names)
    supervisor = Supervisor(env={}, output=output)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, supervisor.on_signal)

    try:
        port = args.port if args.port is not None else int(os.environ.get("PORT") or 8000)
    except ValueError:
        output.say(f"PORT={os.environ.get('PORT')!r} is not a port number")
        return 2
    data_dir = (args.data_dir or Path(os.environ.get("INTERVIEWPREP_DATA_DIR") or ROOT / ".data")).resolve()
    if port_in_use(port):
        output.say(f"port {port} is already in use (another run?): pass --port N or set PORT")
        return 1

    services: embedded.Services | None = None
    lock: IO[str] | None = None
    state_file = data_dir / "run.json"
    try:
        base_env = dict(os.environ)
        base_env["PATH"] = venv_path(base_env)
        commands_probe = _management_commands(base_env)
        try:
            embedded.check_data_dir_owner(data_dir)
            data_dir.mkdir(parents=True, exist_ok=True)
            lock = _lock_data_dir(data_dir)
            services = embedded.decide(os.environ.copy(), data_dir, args.embedded, output.say)
        except embedded.ServiceError as exc:
            commands_probe.kill()
            commands_probe.communicate()
            output.say(str(exc))
            return 1
        supervisor.env = _venv_env(port, services, _fresh_metrics_dir(data_dir))
        try:
            load(supervisor.env)
        except ConfigError as exc:
            commands_probe.kill()
            commands_probe.communicate()
            output.say(f"configuration error: {exc}")
            return 2
        commands = _collect_commands(commands_probe, output.say)
        if supervisor.stopping:
            return 0

        steps = [entry for entry in procfile if entry.name == "release"]
        if commands is not None and "load_questions" in commands:
            steps.append(ProcfileEntry("load_questions", "python manage.py load_questions"))
        for step in steps:
            status = supervisor.run_once(step.name, step.command)
            if status is None:
                return 0
            if status != 0 and step.name == "release":
                output.say(f"release ({step.command}) {how_it_ended(status)}")
                return 1
            if status != 0:
                output.say(f"warning: {step.name} {how_it_ended(status)}; starting anyway")

        for entry in procfile:
            if entry.name == "release":
                continue
            reason = unavailable(entry.command, supervisor.env, commands)
            if reason is not None:
                output.say(f"warning: skipping {entry.name}: {reason}")
                continue
            child = supervisor.start(entry.name, entry.command)
            output.say(f"started {entry.name} (pid {child.process.pid})")

        _write_state(
            state_file,
            {
                "pid": os.getpid(),
                "port": port,
                "url": f"http://127.0.0.1:{port}/",
                "database_url": services.database_url,
                "redis_url": services.redis_url,
                "children": {c.process.name: c.process.pid for c in supervisor.children if not c.expected_exit},
                "embedded": {
                    "postgres": services.postgres.pid if services.postgres else None,
                    "redis": services.redis.pid if services.redis else None,
                },
            },
        )
        return _serve(supervisor, services, port)
    finally:
        supervisor.stop_all()
        if services is not None:
            if services.postgres or services.redis:
                output.say("stopping embedded services")
            services.stop()
        if lock is not None:  # only the holder of the folder owns its run.json
            with contextlib.suppress(FileNotFoundError):
                state_file.unlink()
            lock.close()


def _serve(supervisor: Supervisor, services: embedded.Services, port: int) -> int:
    """Wait for health, announce, then watch until a stop is asked for or something dies."""
    output = supervisor.output
    watched = services.watched()
    deadline = time.monotonic() + HEALTH_TIMEOUT
    healthy = False
    last: dict[str, Any] | str = ""
    while not supervisor.stopping:
        died = supervisor.dead(watched)
        if died:
            output.say(f"{died}: stopping everything")
            return 1
        if not healthy:
            status, last = health(port)
            if status == 200:
                healthy = True
                output.say(f"InterviewPrep is running at http://127.0.0.1:{port}/")
                for line in services.describe():
                    output.say(f"  {line}")
                output.say("Ctrl-C stops everything.")
                continue
            if time.monotonic() > deadline:
                output.say(f"warning: /healthz is still not 200 after {HEALTH_TIMEOUT:.0f} s: {last}")
                deadline = float("inf")
        supervisor.wake.wait(0.25 if not healthy else 0.5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
