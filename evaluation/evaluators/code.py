"""Runs a coding answer against the question's hidden tests in the sandbox and scores it.

The question's `evaluation_spec` for a coding question:

    {"function": "two_sum",          # the name the candidate defines at top level
     "tests": [                      # at least one; names should be unique
        {"name": "basic", "args": [[2, 7, 11, 15], 9], "expected": [0, 1]},
        ...],                        # JSON values; `args` lists the positional arguments
     "compare": "exact",             # optional: "exact" (default), "unordered", "float"
     "time_limit_s": 2.0,            # optional: CPU seconds for the whole submission (<= 30)
     "memory_limit_mb": 256}         # optional: 16..2048, default 256

Comparison: "exact" is JSON equality (2 == 2.0, but true is not 1); "unordered" compares
the top-level lists as multisets (elements themselves exactly); "float" is exact except that
numbers anywhere inside match within an absolute tolerance of 1e-6. Tuples and sets the
answer returns arrive as lists (sets sorted).

Only the tests' arguments enter the sandbox; expected values stay here and are compared
here. `details` carries each test's name, status, time and a capped excerpt of what the
answer printed or raised, never arguments, expected or returned values.
"""

from __future__ import annotations

import json
import math
from typing import Any, ClassVar

from evaluation.evaluators.base import (
    EvaluationOutcome,
    EvaluationRequest,
    PermanentEvaluationError,
)
from evaluation.sandbox import HarnessRun, TestRun, run_harness
from interviewprep.errors import InvalidInput

MAX_SCORE = 100.0
DEFAULT_TIME_LIMIT_S = 2.0
DEFAULT_MEMORY_LIMIT_MB = 256
MAX_ANSWER_CHARS = 256 * 1024
EXCERPT_CHARS = 1024
FLOAT_TOLERANCE = 1e-6
COMPARES = ("exact", "unordered", "float")
STATUS_WORDS = {
    "passed": "passed",
    "wrong_answer": "wrong answer",
    "runtime_error": "runtime error",
    "time_limit": "time limit",
    "memory_limit": "memory limit",
    "output_limit": "output limit",
}
ENDED_STATUS = {
    "cpu": ("time_limit", "CPU time limit exceeded"),
    "wall": ("time_limit", "wall-clock limit exceeded (sleeping or blocked?)"),
    "memory": ("memory_limit", "memory limit exceeded"),
    "output": ("output_limit", "too much output"),
    "crashed": ("runtime_error", "the process died"),
    "completed": ("runtime_error", "the test did not report a result"),
}


def _equal(actual: Any, expected: Any, *, tolerance: float | None) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        if tolerance is None:
            return actual == expected or (math.isnan(actual) and math.isnan(expected))
        if math.isnan(actual) or math.isnan(expected):
            return math.isnan(actual) and math.isnan(expected)
        if math.isinf(actual) or math.isinf(expected):
            return actual == expected
        return abs(actual - expected) <= tolerance
    if isinstance(expected, list) and isinstance(actual, list):
        return len(actual) == len(expected) and all(
            _equal(a, e, tolerance=tolerance) for a, e in zip(actual, expected, strict=True)
        )
    if isinstance(expected, dict) and isinstance(actual, dict):
        return actual.keys() == expected.keys() and all(
            _equal(actual[k], expected[k], tolerance=tolerance) for k in expected
        )
    return type(actual) is type(expected) and actual == expected


def _canonical(value: Any) -> str:
    """A sort key under which values equal by `_equal` (exact) sort together."""

    def normalise(v: Any) -> Any:
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, list):
            return [normalise(x) for x in v]
        if isinstance(v, dict):
            return {k: normalise(x) for k, x in v.items()}
        return v

    return json.dumps(normalise(value), sort_keys=True)


def answer_matches(actual: Any, expected: Any, compare: str) -> bool:
    if compare == "float":
        return _equal(actual, expected, tolerance=FLOAT_TOLERANCE)
    if compare == "unordered" and isinstance(actual, list) and isinstance(expected, list):
        if len(actual) != len(expected):
            return False
        return _equal(sorted(actual, key=_canonical), sorted(expected, key=_canonical), tolerance=None)
    return _equal(actual, expected, tolerance=None)


def _excerpt(*parts: str | None) -> str:
    text = "\n".join(p for p in parts if p)
    return text[:EXCERPT_CHARS]


def _validated_spec(spec: dict[str, Any]) -> tuple[str, list[dict[str, Any]], str, float, int]:
    function = spec.get("function")
    if not isinstance(function, str) or not function.isidentifier():
        raise PermanentEvaluationError("evaluation_spec.function must name a Python function")
    tests = spec.get("tests")
    if not isinstance(tests, list) or not tests:
        raise PermanentEvaluationError("evaluation_spec.tests must be a non-empty list")
    for position, test in enumerate(tests):
        if (
            not isinstance(test, dict)
            or not isinstance(test.get("name"), str)
            or not isinstance(test.get("args"), list)
            or "expected" not in test
        ):
            raise PermanentEvaluationError(
                f"evaluation_spec.tests[{position}] needs a name, a list of args and expected"
            )
    compare = spec.get("compare", "exact")
    if compare not in COMPARES:
        raise PermanentEvaluationError(f"evaluation_spec.compare must be one of {COMPARES}")
    time_limit = spec.get("time_limit_s", DEFAULT_TIME_LIMIT_S)
    if isinstance(time_limit, bool) or not isinstance(time_limit, int | float):
        raise PermanentEvaluationError("evaluation_spec.time_limit_s must be a number")
    if not 0 < time_limit <= 30:
        raise PermanentEvaluationError("evaluation_spec.time_limit_s must be in (0, 30]")
    memory = spec.get("memory_limit_mb", DEFAULT_MEMORY_LIMIT_MB)
    if isinstance(memory, bool) or not isinstance(memory, int) or not 16 <= memory <= 2048:
        raise PermanentEvaluationError("evaluation_spec.memory_limit_mb must be an int in 16..2048")
    return function, tests, compare, float(time_limit), memory


def _judge(test: dict[str, Any], result: TestRun, compare: str) -> tuple[str, str]:
    if result.status == "ok":
        if answer_matches(result.value, test["expected"], compare):
            return "passed", result.output
        return "wrong_answer", result.output
    if result.status == "badvalue":
        return "wrong_answer", _excerpt(result.output, result.message)
    if result.status == "memory":
        return "memory_limit", _excerpt(result.output, "MemoryError: memory limit exceeded")
    if result.status == "output":
        return "output_limit", _excerpt(result.output, result.message or "printed more than the output limit")
    return "runtime_error", _excerpt(result.output, result.message)


class CodeRunnerEvaluator:
    name: ClassVar[str] = "code"

    def evaluate(self, request: EvaluationRequest) -> EvaluationOutcome:
        function, tests, compare, time_limit, memory = _validated_spec(request.spec)
        answer = request.answer if isinstance(request.answer, str) else ""
        if len(answer) > MAX_ANSWER_CHARS:
            return self._not_run(tests, f"Your answer is longer than {MAX_ANSWER_CHARS} characters.")
        run = run_harness(
            code=answer,
            function=function,
            tests_args=[test["args"] for test in tests],
            cpu_limit_s=time_limit,
            memory_limit_mb=memory,
        )
        if run.load_error is not None:
            return self._load_failed(run, tests, function)
        return self._scored(run, tests, compare, time_limit)

    def _scored(
        self, run: HarnessRun, tests: list[dict[str, Any]], compare: str, time_limit: float
    ) -> EvaluationOutcome:
        rows: list[dict[str, Any]] = []
        first_missing = True
        fallback_status, fallback_reason = ENDED_STATUS.get(run.ended, ENDED_STATUS["crashed"])
        for test, result in zip(tests, run.tests, strict=True):
            if result is not None:
                status, output = _judge(test, result, compare)
                rows.append(_row(test, status, result.time_ms, output))
                continue
            if first_missing:
                spent = time_limit * 1000 if fallback_status == "time_limit" else 0.0
                rows.append(_row(test, fallback_status, spent, fallback_reason))
                first_missing = False
            else:
                rows.append(_row(test, fallback_status, 0.0, f"not run: {fallback_reason}"))
        return _outcome(run.mode, rows)

    def _load_failed(self, run: HarnessRun, tests: list[dict[str, Any]], function: str) -> EvaluationOutcome:
        assert run.load_error is not None
        kind, message = run.load_error
        if kind == "syntax":
            summary = f"Your code does not compile ({message}); no tests ran."
        elif kind == "missing":
            summary = f"Your code does not define a function named {function}; no tests ran."
        elif kind == "output":
            summary = "Your code printed too much while loading; no tests ran."
        else:
            summary = f"Your code raised an error while loading ({message}); no tests ran."
        outcome = self._not_run(tests, summary, mode=run.mode)
        outcome.details["output"] = _excerpt(run.load_output, message)
        return outcome

    def _not_run(self, tests: list[dict[str, Any]], summary: str, *, mode: str | None = None) -> EvaluationOutcome:
        rows = [_row(test, "runtime_error", 0.0, "not run") for test in tests]
        outcome = _outcome(mode or "not started", rows)
        outcome.feedback = summary
        return outcome


def _row(test: dict[str, Any], status: str, time_ms: float, output: str) -> dict[str, Any]:
    return {
        "name": test["name"],
        "status": status,
        "time_ms": round(time_ms, 1),
        "output": output[:EXCERPT_CHARS],
    }


def _outcome(mode: str, rows: list[dict[str, Any]]) -> EvaluationOutcome:
    passed = sum(1 for row in rows if row["status"] == "passed")
    total = len(rows)
    failing = [row for row in rows if row["status"] != "passed"]
    feedback = f"{passed} of {total} tests passed"
    if failing:
        named = ", ".join(f"{r['name']} ({STATUS_WORDS[r['status']]})" for r in failing[:3])
        more = f" and {len(failing) - 3} more" if len(failing) > 3 else ""
        feedback += f"; failing: {named}{more}"
    return EvaluationOutcome(
        score=round(MAX_SCORE * passed / total, 1),
        max_score=MAX_SCORE,
        feedback=feedback + ".",
        details={"mode": mode, "tests": rows, "passed": passed, "total": total},
    )


def code_run(*, spec: dict, answer: str, inputs: list[list] | None = None) -> dict:
    """Run an answer against the spec's visible tests, or against `inputs` (argument lists),
    without scoring it. Tests marked `"visible": true` run; a spec without marks runs its first
    three. Returns plain data: `load_error`, `stopped` and one row per case that ran."""
    function, tests, compare, time_limit, memory = _validated_spec(spec)
    if inputs is None:
        cases = [t for t in tests if t.get("visible")] or tests[:3]
    elif isinstance(inputs, list) and 0 < len(inputs) <= 10 and all(isinstance(a, list) for a in inputs):
        cases = [{"name": f"input {n}", "args": args} for n, args in enumerate(inputs, 1)]
    else:
        raise InvalidInput("inputs must be a list of 1 to 10 argument lists.", field="inputs")
    run = run_harness(
        code=answer,
        function=function,
        tests_args=[case["args"] for case in cases],
        cpu_limit_s=time_limit,
        memory_limit_mb=memory,
    )
    if run.load_error is not None:
        kind, message = run.load_error
        load_error = {"kind": kind, "message": message, "line": None, "column": None}
        return {"load_error": load_error, "stopped": None, "cases": []}
    rows: list[dict[str, Any]] = []
    stopped = None
    for position, (case, result) in enumerate(zip(cases, run.tests, strict=True)):
        row = {"name": case["name"], "input": case["args"], "expected": case.get("expected"), "got": None}
        if result is None:
            status, reason = ENDED_STATUS.get(run.ended, ENDED_STATUS["crashed"])
            outcome = "timeout" if status == "time_limit" else "error"
            rows.append({**row, "outcome": outcome, "stdout": "", "time_ms": 0.0, "error": reason})
            stopped = {"test": case["name"], "reason": reason, "not_run": len(cases) - position - 1}
            break
        if result.status == "ok":
            row["got"] = result.value
            if "expected" not in case:
                outcome = "ran"
            else:
                outcome = "passed" if answer_matches(result.value, case["expected"], compare) else "failed"
        else:
            outcome = "error"
        rows.append(
            {
                **row,
                "outcome": outcome,
                "stdout": result.output[:EXCERPT_CHARS],
                "time_ms": round(result.time_ms, 1),
                "error": (result.message or "")[:EXCERPT_CHARS] or None,
            }
        )
    return {"load_error": None, "stopped": stopped, "cases": rows}
