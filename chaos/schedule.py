"""A round's plan, drawn from its seed alone: which faults, when, for how long, and which
EVALUATOR_FAULTS each worker start gets. The same seed and options give the same plan, so a
failing round can be replayed with `--seed`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# Each one is something production meets: a supervisor restarts what was killed, an operator
# resumes what was paused.
FAULT_KINDS = (
    "worker-child-kill",  # SIGKILL of one prefork child: Celery forks another
    "worker-kill",  # SIGKILL of a whole worker's group, replaced after `duration`
    "relay-kill",  # SIGKILL of the relay, started again after `duration`
    "beat-kill",  # SIGKILL of beat, started again after `duration`
    "redis-pause",  # SIGSTOP of the cache and lock Redis for `duration`, then SIGCONT
    "broker-pause",  # SIGSTOP of the broker for `duration`, then SIGCONT
    "broker-restart",  # SIGKILL of the broker (its queues are lost), started after `duration`
    "pg-terminate",  # pg_terminate_backend of every connection to the round's database
)
# Faults after which a try can end without an outcome (its run killed, or its lease lapsed while
# Redis or the database were away): with enough of them a job may use up its tries honestly.
TRY_ENDING_FAULTS = frozenset(
    {"worker-child-kill", "worker-kill", "redis-pause", "broker-pause", "broker-restart", "pg-terminate"}
)
_DOWN_SECONDS = {
    "worker-kill": (0.0, 2.0),
    "relay-kill": (0.0, 3.0),
    "beat-kill": (0.0, 3.0),
    "redis-pause": (0.5, 5.0),
    "broker-pause": (0.5, 5.0),
    "broker-restart": (0.2, 3.0),
}


@dataclass(frozen=True)
class Fault:
    at: float  # seconds after the workload starts
    kind: str
    duration: float  # how long the target stays down or paused; 0 for the instant ones
    pick: int  # which worker or child, taken modulo those alive when the fault fires

    def describe(self) -> str:
        return f"{self.kind} for {self.duration:.1f} s" if self.duration else self.kind


@dataclass(frozen=True)
class Plan:
    seed: int
    candidates: int
    duration: float
    faults: tuple[Fault, ...]

    def evaluator_faults(self, start_number: int) -> str:
        """EVALUATOR_FAULTS of the n-th worker start of the round (replacements included)."""
        return evaluator_faults_for(self.seed, start_number)

    def candidate_rng(self, index: int) -> random.Random:
        return random.Random(f"{self.seed}:candidate:{index}")


def evaluator_faults_for(seed: int, start_number: int) -> str:
    rng = random.Random(f"{seed}:worker:{start_number}")
    draw = rng.random()
    parts = []
    # Half the starts are clean, so every round has workers that make progress between kills.
    if draw >= 0.5:
        if draw < 0.8 or draw >= 0.9:
            parts.append(f"delay={rng.uniform(0.1, 1.2):.2f}")
        if draw >= 0.8:
            parts.append(f"crash_before_commit={rng.uniform(0.05, 0.25):.2f}")
    return ",".join(parts)


def plan_round(seed: int, *, candidates: int, duration: float, faults: tuple[int, int]) -> Plan:
    rng = random.Random(f"{seed}:faults")
    count = rng.randint(*faults)
    # Kinds without replacement while there are kinds left, so a round of a few faults mixes them.
    kinds: list[str] = []
    while len(kinds) < count:
        kinds.extend(rng.sample(FAULT_KINDS, min(len(FAULT_KINDS), count - len(kinds))))
    drawn = []
    for kind in kinds:
        low, high = _DOWN_SECONDS.get(kind, (0.0, 0.0))
        drawn.append(
            Fault(
                # Not in the first second (let the first submits land) nor after the workload.
                at=round(rng.uniform(1.0, max(1.5, duration - 0.5)), 2),
                kind=kind,
                duration=round(rng.uniform(low, high), 2),
                pick=rng.randrange(1000),
            )
        )
    return Plan(seed, candidates, duration, tuple(sorted(drawn, key=lambda f: (f.at, f.kind))))
