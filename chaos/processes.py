"""The round's processes: every Procfile line but `release`, started as `make run` starts them
(`bash -c` with the venv first on PATH, each in its own process group), killed by the fault
schedule, and restarted as a supervisor would."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sysconfig
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from chaos.services import ChaosSetupError
from interviewprep.embedded import set_parent_death_signal
from interviewprep.run import ROOT, ProcfileEntry, parse_procfile


@dataclass
class Proc:
    name: str
    number: int  # start number of this line in the round
    popen: subprocess.Popen[bytes]
    log: Path
    evaluator_faults: str = ""
    ready_file: Path | None = None
    killed: bool = False  # by the drill: not an unexpected exit

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def tail(self, chars: int = 2000) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")[-chars:]
        return ""

    def celery_children(self) -> list[int]:
        """The prefork children of a Celery worker (bash normally execs it; if not, look one down)."""
        master = self.pid
        if _comm(master) in {"bash", "sh"}:
            below = _children(master)
            master = below[0] if below else master
        return _children(master)


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _killpg(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def is_worker(name: str) -> bool:
    return name.startswith("worker")


class Fleet:
    def __init__(
        self,
        *,
        env: dict[str, str],
        logdir: Path,
        port: int,
        evaluator_faults: Callable[[int], str],
        web_workers: int | None = None,
    ) -> None:
        self.env = dict(env)
        self.env["PATH"] = os.pathsep.join([sysconfig.get_path("scripts"), self.env.get("PATH", os.defpath)])
        self.env["PORT"] = str(port)
        self.logdir = logdir
        self.port = port
        self.evaluator_faults = evaluator_faults
        self.entries = [e for e in parse_procfile(ROOT / "Procfile") if e.name != "release"]
        if web_workers is not None:
            self.entries = [_with_web_workers(e, web_workers) for e in self.entries]
        self.procs: list[Proc] = []
        self.worker_starts = 0
        self.shell = shutil.which("bash", path=self.env["PATH"]) or "/bin/sh"

    def command(self, name: str) -> str:
        for entry in self.entries:
            if entry.name == name:
                return entry.command
        raise ChaosSetupError(f"the Procfile has no {name!r} line")

    def queues(self, name: str) -> list[str]:
        """The queues a worker line consumes (Celery's default queue, `evaluate`, when it names none)."""
        match = re.search(r"(?:--queues[ =]|-Q )(\S+)", self.command(name))
        return match.group(1).split(",") if match else ["evaluate"]

    @property
    def names(self) -> list[str]:
        return [entry.name for entry in self.entries]

    def start(self, name: str) -> Proc:
        extra: dict[str, str] = {}
        faults = ""
        ready = None
        if is_worker(name):
            faults = self.evaluator_faults(self.worker_starts)
            self.worker_starts += 1
            ready = self.logdir / f"{name}-{len(self.procs)}.ready"
            extra["CELERY_READY_FILE"] = str(ready)
        env = {**self.env, **extra}
        env.pop("EVALUATOR_FAULTS", None)
        if faults:
            env["EVALUATOR_FAULTS"] = faults
        number = sum(1 for p in self.procs if p.name == name)
        log = self.logdir / f"{name}-{number}.log"
        with log.open("wb") as out:
            popen = subprocess.Popen(
                [self.shell, "-c", self.command(name)],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                process_group=0,
                # Only the main thread starts processes: the death signal follows the thread.
                preexec_fn=set_parent_death_signal,
            )
        proc = Proc(name, number, popen, log, faults, ready)
        self.procs.append(proc)
        return proc

    def start_all(self) -> None:
        for name in self.names:
            self.start(name)

    def live(self, name: str | None = None, *, workers: bool = False) -> list[Proc]:
        return [
            p
            for p in self.procs
            if p.alive() and not p.killed and (name is None or p.name == name) and (not workers or is_worker(p.name))
        ]

    def kill(self, proc: Proc) -> None:
        proc.killed = True
        _killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.popen.wait(timeout=10)

    def wait_ready(self, timeout: float) -> dict:
        """Until the web answers /healthz with 200 and every worker consumes; that answer."""
        deadline = time.monotonic() + timeout
        while True:
            for proc in self.procs:
                if not proc.alive() and not proc.killed:
                    raise ChaosSetupError(f"{proc.name} exited at start:\n{proc.tail()}")
            workers_ready = all(p.ready_file is None or p.ready_file.exists() for p in self.live())
            if workers_ready:
                status, body = health(self.port)
                if status == 200 and isinstance(body, dict):
                    return body
            if time.monotonic() > deadline:
                raise ChaosSetupError(f"not ready in {timeout:.0f} s: /healthz says {health(self.port)}")
            time.sleep(0.2)

    def supervise(self) -> list[str]:
        """Restart what died without being killed by the drill, as a supervisor would; say what."""
        notes = []
        for proc in list(self.procs):
            if proc.killed or proc.alive():
                continue
            proc.killed = True  # handled: its replacement is watched from now on
            notes.append(f"{proc.name} exited unexpectedly ({_how(proc.popen.returncode)}); restarted")
            self.start(proc.name)
        return notes

    def stop_all(self) -> None:
        # The round's state is checked already: no need for a graceful stop.
        for proc in self.procs:
            _killpg(proc.pid, signal.SIGCONT)
            _killpg(proc.pid, signal.SIGKILL)
        for proc in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.popen.wait(timeout=10)


def _how(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-returncode).name}"
    return f"status {returncode}"


def _with_web_workers(entry: ProcfileEntry, count: int) -> ProcfileEntry:
    """The web line with its worker count replaced (a lighter web for short drills), if it has one."""
    if entry.name != "web":
        return entry
    command = re.sub(r"(--workers[ =]|-w )\d+", lambda m: f"{m.group(1)}{count}", entry.command)
    return ProcfileEntry(entry.name, command)


def health(port: int) -> tuple[int | None, object]:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=3)
        conn.request("GET", "/healthz")
        response = conn.getresponse()
        body = response.read()
        conn.close()
    except OSError as exc:
        return None, str(exc)
    try:
        return response.status, json.loads(body)
    except ValueError:
        return response.status, body[:200]
