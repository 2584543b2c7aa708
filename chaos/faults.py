"""Firing a planned fault at the round's processes and services, and its recovery later (the
restart a supervisor does, the SIGCONT an operator sends)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from chaos.processes import Fleet, Proc
from chaos.schedule import Fault
from chaos.services import Postgres
from interviewprep.processes import RedisServer


@dataclass
class FollowUp:
    delay: float
    action: Callable[[], str]


class Injector:
    def __init__(self, *, fleet: Fleet, cache: RedisServer, broker: RedisServer, pg: Postgres, db: str) -> None:
        self.fleet = fleet
        self.cache = cache
        self.broker = broker
        self.pg = pg
        self.db = db

    def fire(self, fault: Fault) -> tuple[str, list[FollowUp]]:
        """What was done (or why it was skipped: the text then starts with 'skipped'), and what to do later."""
        kind = fault.kind
        if kind == "worker-child-kill":
            return self._kill_child(fault), []
        if kind in ("worker-kill", "relay-kill", "beat-kill"):
            return self._kill_process(fault)
        if kind in ("redis-pause", "broker-pause"):
            server = self.cache if kind == "redis-pause" else self.broker
            server.pause()
            return f"SIGSTOP {server.name} redis for {fault.duration:.1f} s", [
                FollowUp(fault.duration, lambda: _resume(server))
            ]
        if kind == "broker-restart":
            self.broker.kill()
            return f"SIGKILL broker redis (queues lost), back in {fault.duration:.1f} s", [
                FollowUp(fault.duration, self._start_broker)
            ]
        if kind == "pg-terminate":
            return f"pg_terminate_backend: {self.pg.terminate_backends(self.db)} connections cut", []
        raise ValueError(f"unknown fault {kind!r}")

    def _kill_child(self, fault: Fault) -> str:
        workers = self.fleet.live(workers=True)
        for offset in range(len(workers)):
            worker = workers[(fault.pick + offset) % len(workers)]
            child = worker.kill_celery_child(fault.pick)
            if child is not None:
                return f"SIGKILL child {child} of {_label(worker)}"
        return "skipped: no live worker child"

    def _kill_process(self, fault: Fault) -> tuple[str, list[FollowUp]]:
        if fault.kind == "worker-kill":
            targets = self.fleet.live(workers=True)
        else:
            targets = self.fleet.live(fault.kind.removesuffix("-kill"))
        if not targets:
            return f"skipped: no live {fault.kind.removesuffix('-kill')}", []
        target = targets[fault.pick % len(targets)]
        self.fleet.kill(target)
        name = target.name
        return f"SIGKILL {_label(target)} (its whole group), restarted in {fault.duration:.1f} s", [
            FollowUp(fault.duration, lambda: self._restart(name))
        ]

    def _restart(self, name: str) -> str:
        proc = self.fleet.start(name)
        return f"started {_label(proc)}"

    def _start_broker(self) -> str:
        self.broker.start()
        return "broker redis started again, empty"


def _resume(server: RedisServer) -> str:
    server.resume()
    return f"SIGCONT {server.name} redis"


def _label(proc: Proc) -> str:
    faults = f" with EVALUATOR_FAULTS={proc.evaluator_faults}" if proc.evaluator_faults else ""
    return f"{proc.name}#{proc.number} (pid {proc.pid}){faults}"
