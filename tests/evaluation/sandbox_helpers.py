"""Shared pieces of the sandbox tests: the modes this machine offers and a known-good answer."""

from __future__ import annotations

import pytest

from evaluation.evaluators.base import EvaluationRequest
from evaluation.evaluators.code import CodeRunnerEvaluator
from evaluation.sandbox import current_mode, run_harness
from evaluation.sandbox.modes import layers_for

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
    run = run_harness(code=TWO_SUM, function="two_sum", tests_args=[[[3, 3], 6]], cpu_limit_s=1, memory_limit_mb=64)
    assert run.mode == (mode or current_mode()) and run.tests[0] is not None and run.tests[0].value == [0, 1]
