"""Shared pieces of the sandbox tests: the modes this machine offers and a known-good answer."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import evaluation.sandbox.launch as launch
import evaluation.sandbox.programs as programs
import evaluation.sandbox.slots as slots
from evaluation.evaluators.base import EvaluationRequest
from evaluation.evaluators.code import CodeRunnerEvaluator
from evaluation.sandbox import current_mode, run_python
from evaluation.sandbox.modes import layers_for
from evaluation.sandbox.slots import slot_uid
from tests.processes import wait_for

STRONG = "bwrap+seccomp+landlock"
WITHOUT_BWRAP = "rlimits+uid+seccomp+landlock"

TWO_SUM = """
def two_sum(nums, target):
    seen = {}
    for i, n in enumerate(nums):
        if target - n in seen:
            return [seen[target - n], i]
        seen[n] = i
"""
TWO_SUM_SPEC = {
    "function": "two_sum",
    "tests": [
        {"name": "basic", "args": [[2, 7, 11, 15], 9], "expected": [0, 1], "visible": True},
        {"name": "middle", "args": [[3, 2, 4], 6], "expected": [1, 2]},
        {"name": "same", "args": [[3, 3], 6], "expected": [0, 1]},
    ],
    "time_limit_s": 1,
}


def mode_available(mode: str) -> bool:
    try:
        layers_for(mode)
    except Exception:  # noqa: BLE001 - any refusal means "not here"
        return False
    return True


def sandbox_modes() -> list[object]:
    """Every allowed mode worth attacking, skipped where the machine cannot provide it."""
    return [
        pytest.param(mode, marks=pytest.mark.skipif(not mode_available(mode), reason=f"no {mode}"))
        for mode in (STRONG, WITHOUT_BWRAP)
    ]


def request_for(answer: str, spec: dict) -> EvaluationRequest:
    return EvaluationRequest(question_slug="q", question_kind="coding", prompt="", spec=spec, answer=answer)


def assert_normal_submission_scores(mode: str | None = None) -> None:
    """Full marks for a known-good answer, and the sandbox still runs in `mode`."""
    outcome = CodeRunnerEvaluator().evaluate(request_for(TWO_SUM, TWO_SUM_SPEC))
    assert outcome.score == 100.0, outcome.details
    run = run_python(code=TWO_SUM, function="two_sum", tests_args=[[[3, 3], 6]], cpu_limit_s=1, memory_limit_mb=64)
    assert run.mode == (mode or current_mode()) and run.tests[0] is not None and run.tests[0].value == [0, 1]


def _processes_of(uid: int) -> list[str]:
    """Live processes with `uid` among their ids, as "pid name"."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = dict(line.split(":", 1) for line in (entry / "status").read_text().splitlines() if ":" in line)
        except OSError:
            continue
        if status["State"].split()[0] not in ("Z", "X") and uid in map(int, status["Uid"].split()):
            found.append(f"{entry.name} {status['Name'].strip()}")
    return found


@contextlib.contextmanager
def slots_watched(patch: pytest.MonkeyPatch) -> Iterator[list[dict]]:
    """Record each run's sandbox slot, and what still runs under its uid once the run is over,
    looked at while the slot is still held (so no other run can be using that uid)."""
    current_mode()  # probed now if it must be, so the probe's own run is not among them
    real = slots.slot_held
    seen: list[dict] = []

    @contextlib.contextmanager
    def watched() -> Iterator[int]:
        with real() as slot:
            record: dict = {"slot": slot, "left": None}
            seen.append(record)
            yield slot
            if os.geteuid() == 0:  # only then does the box run under the slot's own uid
                uid = slot_uid(slot)
                try:  # a SIGKILLed process takes a moment to be gone; one that escaped stays
                    wait_for(lambda: not _processes_of(uid), timeout=30)
                except AssertionError:
                    pass
                record["left"] = _processes_of(uid)

    # Both places that take a slot: the Python harness's launch, and a compiled language's program.
    patch.setattr(launch, "slot_held", watched)
    patch.setattr(programs, "slot_held", watched)
    yield seen
