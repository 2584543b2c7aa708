"""Expected values for a candidate's own inputs: the question's reference answer run on them.

The reference (the question's Python `reference_answer`) runs in a sandbox of its own, with the
question's limits, never in the box of the candidate's answer: that box could read anything
that shares its memory. Only the reference's return values come out of here; what it printed,
raised or took is dropped, so nothing of its code reaches the candidate.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evaluation.sandbox import run_python

logger = logging.getLogger(__name__)

# What a reference that gave no value on an input did (the sandbox's statuses, in the words of
# a test's outcome); a stop before it reported is "timeout", "memory" or "output_limit" too.
FAILURES = {"error": "error", "badvalue": "error", "memory": "memory", "output": "output_limit"}
STOPS = {"cpu": "timeout", "wall": "timeout", "memory": "memory", "output": "output_limit"}


@dataclass(frozen=True)
class ReferenceValue:
    value: Any = None
    failed: str | None = None  # how the reference failed on this input; None: `value` is expected


def reference_values(
    *, reference: str, function: str, inputs: Sequence[Sequence[Any]], cpu_limit_s: float, memory_limit_mb: int
) -> list[ReferenceValue] | None:
    """The reference's value on each input, or how it failed there; None when the reference
    does not load (the bank's fault, not the candidate's: the inputs then run unjudged)."""
    run = run_python(
        code=reference, function=function, tests_args=inputs, cpu_limit_s=cpu_limit_s, memory_limit_mb=memory_limit_mb
    )
    if run.load_error is not None:
        logger.warning("the reference answer of %s does not load: %s", function, run.load_error.kind)
        return None
    stopped = STOPS.get(run.ended, "error")
    return [
        ReferenceValue(failed=stopped)
        if test is None
        else ReferenceValue(value=test.value)
        if test.status == "ok"
        else ReferenceValue(failed=FAILURES.get(test.status, "error"))
        for test in run.tests
    ]
