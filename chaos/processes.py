"""The round's processes: every Procfile line but `release`, started as `make run` starts them
(`bash -c` with the venv first on PATH, each in its own process group), killed by the fault
schedule, and restarted as a supervisor would."""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

from chaos.services import ChaosSetupError
from interviewprep.processes import (
    Process,
    ProcfileEntry,
    health,
    how_it_ended,
    parse_procfile,
    signal_if,
    stop_all,
    venv_path,
)


class Proc(Process):
    number = 0  # start number of this line in the round
    evaluator_faults = ""
    ready_file: Path | None = None
    killed = False  # by the drill: not an unexpected exit

    def kill_celery_child(self, pick: int) -> int | None:
        """SIGKILL one prefork child of a Celery worker (bash normally execs it; if not, look one
        down), only while it is still that worker's child; its pid, or None."""
        if not self.alive():
            return None
        master = self.pid
        if _stat(master)[0] in ("bash", "sh"):
            below = self.children()
            master = below[0] if below else master
        children = _children(master)
        if not children:
            return None
        child = children[pick % len(children)]
        sent = signal_if(child, signal.SIGKILL, lambda pid: _stat(pid)[1] == master)
        return child if sent else None


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _stat(pid: int) -> tuple[str, int]:
    """(command name, parent pid) from /proc."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "", 0
    name, rest = raw[raw.index("(") + 1 : raw.rindex(")")], raw[raw.rindex(")") + 2 :].split()
    return name, int(rest[1])


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
        self.env["PATH"] = venv_path(self.env)
        self.env["PORT"] = str(port)
        self.logdir = logdir
        self.port = port
        self.evaluator_faults = evaluator_faults
        self.entries = [e for e in parse_procfile() if e.name != "release"]
        if web_workers is not None:
            self.entries = [_with_web_workers(e, web_workers) for e in self.entries]
        self.procs: list[Proc] = []
        self.worker_starts = 0

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
        # Only the main thread starts processes: the death signal follows the thread.
        proc = Proc.start(name, self.command(name), env=env, log=log, parent_death=True)
        proc.number, proc.evaluator_faults, proc.ready_file = number, faults, ready
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
        proc.stop(grace=0)

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
            status = proc.returncode
            proc.stop(grace=0)  # what it left in its group, then the reap
            notes.append(f"{proc.name} {how_it_ended(status)} unexpectedly; restarted")
            self.start(proc.name)
        return notes

    def stop_all(self) -> None:
        # The round's state is checked already: no need for a graceful stop.
        stop_all(self.procs, grace=0)


def _with_web_workers(entry: ProcfileEntry, count: int) -> ProcfileEntry:
    """The web line with its worker count replaced (a lighter web for short drills), if it has one."""
    if entry.name != "web":
        return entry
    command = re.sub(r"(--workers[ =]|-w )\d+", lambda m: f"{m.group(1)}{count}", entry.command)
    return ProcfileEntry(entry.name, command)
