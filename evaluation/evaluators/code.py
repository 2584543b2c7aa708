"""Runs a coding answer against the question's tests in the sandbox, judges it, and says why.

The question's `evaluation_spec` for a coding question:

    {"function": "two_sum",          # the name the candidate defines at top level
     "tests": [                      # at least one; names should be unique
        {"name": "basic", "args": [[2, 7, 11, 15], 9], "expected": [0, 1], "visible": true},
        ...],                        # JSON values; `args` lists the positional arguments;
                                     # `visible` (default false): shown to the candidate
     "compare": "exact",             # optional: "exact" (default), "unordered", "float"
     "time_limit_s": 2.0,            # optional: CPU seconds for the whole run (<= 30)
     "memory_limit_mb": 256}         # optional: 16..2048, default 256

Comparison: "exact" is JSON equality (2 == 2.0, but true is not 1); "unordered" compares
the top-level lists as multisets (elements themselves exactly); "float" is exact except that
numbers anywhere inside match within an absolute tolerance of 1e-6. Tuples and sets the
answer returns arrive as lists (sets sorted).

Two entry points share one path (`_run_cases`: one harness call, one rule per row):
`CodeRunnerEvaluator.evaluate` scores a submission on every test, and `code_run` runs the
shown tests, or the candidate's own inputs, for the Run button and scores nothing.

A shown test's row has its input, expected value, what came back, what was printed and the
error; a hidden test's row only its name, outcome and time. Expected values never enter the
sandbox, and hidden arguments enter it only once every shown test has reported, so nothing
shown can hold them (docs/sandbox.md).
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from typing import Any, ClassVar

from evaluation.evaluators.base import (
    EvaluationOutcome,
    EvaluationRequest,
    PermanentEvaluationError,
)
from evaluation.evaluators.reference import reference_values
from evaluation.languages import DEFAULT_LANGUAGE, LANGUAGES, SignatureError, language_about, signature_parse
from evaluation.languages.base import EXCERPT_CHARS
from evaluation.languages.types import args_problem
from evaluation.sandbox import BoxRun, LoadError, TestRun, run_python
from evaluation.sandbox.programs import run_program
from evaluation.sandbox.runner import wall_limit_for
from interviewprep.errors import InvalidInput

logger = logging.getLogger(__name__)

MAX_SCORE = 100.0
DEFAULT_TIME_LIMIT_S = 2.0
DEFAULT_MEMORY_LIMIT_MB = 256
MAX_ANSWER_CHARS = 256 * 1024
VALUE_CHARS = 2048  # input, expected and got as shown; longer ones are cut and end with "…"
FLOAT_TOLERANCE = 1e-6
COMPARES = ("exact", "unordered", "float")
MAX_INPUTS = 10
MAX_INPUTS_BYTES = 64 * 1024
MAX_INPUT_DEPTH = 32
OUTCOME_WORDS = {
    "failed": "wrong answer",
    "error": "error",
    "timeout": "time limit",
    "memory": "memory limit",
    "output_limit": "output limit",
}
STOP_REASONS = {"cpu": "timeout", "wall": "timeout", "memory": "memory", "output": "output_limit"}
STATUS_OUTCOMES = {"error": "error", "badvalue": "error", "memory": "memory", "output": "output_limit"}


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


@dataclass(frozen=True)
class _Case:
    name: str
    args: list[Any]
    visible: bool
    expected: Any = None
    judged: bool = True  # False for the candidate's own inputs without a reference value
    reference_failed: str | None = None  # a custom input the reference answer gave no value for: how it failed


@dataclass(frozen=True)
class _Spec:
    function: str
    cases: list[_Case]
    compare: str
    time_limit_s: float
    memory_limit_mb: int
    signature: dict[str, Any] | None  # required by every language but Python


@dataclass(frozen=True)
class _Ran:
    load_error: dict[str, Any] | None
    stopped: dict[str, Any] | None
    rows: list[dict[str, Any]]  # in the order the tests ran: shown ones first
    ended: str = "completed"
    language: dict[str, Any] | None = None  # {"id", "name", "version"} of what ran
    times: dict[str, Any] | None = None  # {"compile_ms", "run_ms", "compile_cached"}


def _validated_spec(spec: dict[str, Any]) -> _Spec:
    signature = spec.get("signature")
    function = spec.get("function")
    if signature is not None:
        try:
            function = signature_parse(signature).function
        except SignatureError as exc:
            raise PermanentEvaluationError(f"evaluation_spec.signature: {exc}") from exc
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
            or not isinstance(test.get("visible", False), bool)
        ):
            raise PermanentEvaluationError(
                f"evaluation_spec.tests[{position}] needs a name, a list of args, expected and a boolean visible"
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
    cases = [_Case(t["name"], t["args"], t.get("visible", False), t["expected"]) for t in tests]
    return _Spec(function, cases, compare, float(time_limit), memory, signature)


def _shown(*values: Any) -> str:
    text = ", ".join(json.dumps(value, ensure_ascii=False) for value in values)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def _row(
    case: _Case, result: TestRun | None, compare: str, *, unreported: str = "not_run", time_ms: float = 0.0
) -> dict[str, Any]:
    """One test's row (`unreported`: its outcome when it sent no result). The only place that
    decides what a row shows: a hidden one carries nothing of what the test held or of what
    the answer printed, raised or returned."""
    outcome = unreported
    if result is not None:
        time_ms = result.time_ms
        outcome = STATUS_OUTCOMES.get(result.status, "ran")
        if outcome == "ran" and case.judged:
            outcome = "passed" if answer_matches(result.value, case.expected, compare) else "failed"
    row: dict[str, Any] = {"name": case.name, "visible": case.visible, "outcome": outcome, "time_ms": round(time_ms, 2)}
    if not case.visible:
        return row
    returned = result is not None and result.status == "ok"
    return row | {
        "input": _shown(*case.args),
        "expected": _shown(case.expected) if case.judged else None,
        "got": _shown(result.value) if returned else None,
        "stdout": result.output[:EXCERPT_CHARS] if result is not None else "",
        "error": result.message[:EXCERPT_CHARS] if result is not None and result.message else None,
    }


def _load_error(error: LoadError) -> dict[str, Any]:
    return {"kind": error.kind, "message": error.message, "line": error.line, "column": error.column}


@dataclass(frozen=True)
class _Executed:
    run: BoxRun | None  # None when the compiler refused the answer
    compile_error: dict[str, Any] | None
    language: dict[str, Any]  # {"id", "name", "version"}
    times: dict[str, Any]  # {"compile_ms", "run_ms", "compile_cached"}: limited and reported apart


def _execute(ordered: list[_Case], shown: int, *, answer: str, spec: _Spec, language: str) -> _Executed:
    """One sandboxed run of `ordered` (shown cases first) in `language`."""
    if language not in LANGUAGES:
        raise PermanentEvaluationError(f"unknown language {language!r}")
    about = language_about(language)
    common: dict[str, Any] = {
        "tests_args": [case.args for case in ordered[:shown]],
        "hidden_args": [case.args for case in ordered[shown:]],
        "cpu_limit_s": spec.time_limit_s,
        "memory_limit_mb": spec.memory_limit_mb,
    }
    if LANGUAGES[language].in_process:
        run = run_python(code=answer, function=spec.function, **common)
        times = {"compile_ms": None, "run_ms": round(run.wall_s * 1000, 1), "compile_cached": False}
        return _Executed(run, None, about, times)
    if spec.signature is None:
        raise PermanentEvaluationError("this question declares no signature, so it runs in Python only")
    signature = signature_parse(spec.signature)
    program = run_program(language=LANGUAGES[language], signature=signature, answer=answer, **common)
    compiled = program.compiled
    times = {
        "compile_ms": round(compiled.wall_s * 1000, 1) if compiled else None,
        "run_ms": round(program.run.wall_s * 1000, 1) if program.run else None,
        "compile_cached": compiled is not None and compiled.ended == "cached",
    }
    if program.run is None:
        assert compiled is not None
        error = {"kind": "compile", "message": compiled.message, "line": compiled.line, "column": compiled.column}
        return _Executed(None, error, about, times)
    return _Executed(program.run, None, about, times)


def _run_cases(cases: list[_Case], *, answer: str, spec: _Spec, language: str = DEFAULT_LANGUAGE) -> _Ran:
    """Run `cases` in one sandboxed process, shown ones first, and build every row."""
    ordered = [case for case in cases if case.visible] + [case for case in cases if not case.visible]
    shown = sum(1 for case in cases if case.visible)
    executed = _execute(ordered, shown, answer=answer, spec=spec, language=language)
    about, times, run = executed.language, executed.times, executed.run
    if run is None:
        return _Ran(executed.compile_error, None, [], "completed", about, times)
    logger.debug("code run: mode %s, ended %s, %.3f s CPU", run.mode, run.ended, run.cpu_s)
    if run.load_error is not None:
        return _Ran(_load_error(run.load_error), None, [], run.ended, about, times)
    rows: list[dict[str, Any]] = []
    stopped: dict[str, Any] | None = None
    if not run.loaded and run.tests:  # stopped before any test began, in the answer's top level
        stopped = {"test": None, "reason": STOP_REASONS.get(run.ended, "crashed"), "not_run": len(run.tests)}
    for position, (case, result) in enumerate(zip(ordered, run.tests, strict=True)):
        if result is not None or stopped is not None:
            rows.append(_row(case, result, spec.compare))
            continue
        # The first test that never reported is the one the run's end stopped.
        reason = STOP_REASONS.get(run.ended, "crashed")
        stopped = {"test": case.name, "reason": reason, "not_run": run.tests[position + 1 :].count(None)}
        spent = 0.0
        if reason == "timeout":  # it used what the earlier tests left of the run's budget
            budget = spec.time_limit_s if run.ended == "cpu" else run.wall_s
            spent = max(0.0, budget * 1000 - sum(row["time_ms"] for row in rows))
        rows.append(
            _row(case, None, spec.compare, unreported="error" if reason == "crashed" else reason, time_ms=spent)
        )
    return _Ran(None, stopped, rows, run.ended, about, times)


def _place(error: dict[str, Any]) -> str:
    if error["line"] is None:
        return ""
    return f"line {error['line']}" + (f", column {error['column']}" if error["column"] else "") + ": "


def _load_feedback(error: dict[str, Any], function: str) -> str:
    message = error["message"].rstrip(".")
    if error["kind"] == "compile":
        return f"Your code does not compile: {_place(error)}{message}. No tests ran."
    if error["kind"] == "missing":
        return f"Your code does not define a function named {function}. No tests ran."
    if error["kind"] == "output":
        return "Your code printed too much while loading. No tests ran."
    return f"Your code raised an error while loading: {_place(error)}{message}. No tests ran."


def _stop_feedback(ran: _Ran, spec: _Spec) -> str:
    assert ran.stopped is not None
    test = f"test `{ran.stopped['test']}`" if ran.stopped["test"] else "your code's top level"
    if ran.ended == "cpu":
        what = f"Time limit: {test} was still running when the {spec.time_limit_s:g} s of CPU for the whole run ran out"
    elif ran.ended == "wall":
        wall = f"{wall_limit_for(spec.time_limit_s):g} s of wall-clock time"
        what = f"Time limit: {test} was still running (sleeping or waiting?) when the {wall} for the whole run ran out"
    elif ran.ended == "memory":
        what = f"Memory limit: {test} needed more than the {spec.memory_limit_mb} MiB allowed"
    elif ran.ended == "output":
        what = f"Output limit: {test} wrote more output than allowed"
    else:
        what = f"Crash: the process running {test} died"
    not_run = ran.stopped["not_run"]
    if ran.stopped["test"] is None:
        return what + "; no tests ran."
    if not_run == 0:
        return what + "."
    return what + (
        "; the test after it did not run." if not_run == 1 else f"; the {not_run} tests after it did not run."
    )


def _feedback(ran: _Ran, spec: _Spec, passed: int) -> str:
    if ran.load_error is not None:
        return _load_feedback(ran.load_error, spec.function)
    stopped = ran.stopped["test"] if ran.stopped else None
    failing = [r for r in ran.rows if r["outcome"] in OUTCOME_WORDS and r["name"] != stopped]
    text = f"{passed} of {len(spec.cases)} tests passed"
    if failing:
        named = ", ".join(f"{r['name']} ({OUTCOME_WORDS[r['outcome']]})" for r in failing[:3])
        text += f"; failing: {named}" + (f" and {len(failing) - 3} more" if len(failing) > 3 else "")
    return text + "." + (" " + _stop_feedback(ran, spec) if ran.stopped else "")


class CodeRunnerEvaluator:
    name: ClassVar[str] = "code"

    def evaluate(self, request: EvaluationRequest) -> EvaluationOutcome:
        spec = _validated_spec(request.spec)
        answer = request.answer if isinstance(request.answer, str) else ""
        if len(answer) > MAX_ANSWER_CHARS:
            too_long = f"the answer is longer than {MAX_ANSWER_CHARS} characters"
            ran = _Ran({"kind": "compile", "message": too_long, "line": None, "column": None}, None, [])
        else:
            ran = _run_cases(spec.cases, answer=answer, spec=spec, language=request.language)
        passed = sum(1 for row in ran.rows if row["outcome"] == "passed")
        total = len(spec.cases)
        return EvaluationOutcome(
            score=round(MAX_SCORE * passed / total, 1),
            max_score=MAX_SCORE,
            feedback=_feedback(ran, spec, passed),
            details={
                "passed": passed,
                "total": total,
                "load_error": ran.load_error,
                "stopped": ran.stopped,
                "tests": ran.rows,
                "language": ran.language,
                "time": ran.times,
            },
        )


def _input_problem(value: Any, depth: int) -> str | None:
    if depth > MAX_INPUT_DEPTH:
        return f"it is nested more than {MAX_INPUT_DEPTH} levels deep"
    if isinstance(value, str):
        # Runs and their cases are stored as PostgreSQL jsonb, which holds no NUL character.
        return "a text holds a NUL character (\\u0000)" if "\x00" in value else None
    if value is None or isinstance(value, bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else "NaN and infinite numbers are not JSON"
    if isinstance(value, list):
        return next((p for item in value if (p := _input_problem(item, depth + 1))), None)
    if isinstance(value, dict):
        if not all(isinstance(key, str) and "\x00" not in key for key in value):
            return "object keys must be strings without a NUL character"
        return next((p for item in value.values() if (p := _input_problem(item, depth + 1))), None)
    return f"a {type(value).__name__} is not a JSON value"


def code_inputs_validate(inputs: Any) -> list[list[Any]]:
    """The custom inputs of a run, checked before anything is stored: InvalidInput (field
    "inputs") names what is wrong."""

    def refuse(message: str) -> InvalidInput:
        return InvalidInput(message, field="inputs")

    if not isinstance(inputs, list) or not all(isinstance(case, list) for case in inputs):
        raise refuse("inputs must be a list of cases, each a list of the function's arguments.")
    if not inputs:
        raise refuse("Give at least one input to run.")
    if len(inputs) > MAX_INPUTS:
        raise refuse(f"Give at most {MAX_INPUTS} inputs at a time, not {len(inputs)}.")
    for number, case in enumerate(inputs, start=1):
        problem = _input_problem(case, 0)
        if problem:
            raise refuse(f"Case {number} cannot be run: {problem}.")
    try:
        size = len(json.dumps(inputs, ensure_ascii=False).encode("utf-8"))
    except ValueError:  # an integer too long to write out, or text that is not valid Unicode
        raise refuse("inputs hold a number too long or text that is not valid Unicode.") from None
    if size > MAX_INPUTS_BYTES:
        raise refuse(f"inputs take {size} bytes as JSON; at most {MAX_INPUTS_BYTES} are allowed.")
    return inputs


def _custom_cases(inputs: list[list[Any]], spec: _Spec, reference: str) -> list[_Case]:
    """The candidate's own inputs as cases, each judged against the reference answer's value
    on it when there is a reference and it gives one."""
    values = (
        reference_values(
            reference=reference,
            function=spec.function,
            inputs=inputs,
            cpu_limit_s=spec.time_limit_s,
            memory_limit_mb=spec.memory_limit_mb,
        )  # fmt: skip
        if reference.strip()
        else None
    )
    if values is None:
        return [_Case(f"Case {n}", args, visible=True, judged=False) for n, args in enumerate(inputs, start=1)]
    return [
        _Case(
            f"Case {n}", args, visible=True, expected=ref.value, judged=ref.failed is None, reference_failed=ref.failed
        )
        for n, (args, ref) in enumerate(zip(inputs, values, strict=True), start=1)
    ]


def code_run(
    *,
    spec: dict[str, Any],
    answer: str,
    inputs: list[list[Any]] | None = None,
    language: str = DEFAULT_LANGUAGE,
    reference: str = "",
) -> dict[str, Any]:
    """Run `answer` on the question's shown tests (`inputs` None) or on each of `inputs` (lists
    of positional arguments), under the same sandbox and limits as a submission. A custom
    input's expected value is what `reference` (the question's Python reference answer, run in
    a box of its own) returns on it; where it fails, the case says so and has no verdict.
    Hidden tests never run here and nothing is scored.

    Raises InvalidInput for bad `inputs` or answer, PermanentEvaluationError for a bad spec or
    a refused sandbox, TransientEvaluationError when the sandbox could not start.
    """
    parsed = _validated_spec(spec)
    if not isinstance(answer, str):
        raise InvalidInput("answer must be a string.", field="answer")
    if len(answer) > MAX_ANSWER_CHARS:
        raise InvalidInput(f"The answer is longer than {MAX_ANSWER_CHARS} characters.", field="answer")
    if inputs is None:
        cases = [case for case in parsed.cases if case.visible]
        if not cases:
            raise InvalidInput("This question shows no examples to run; give your own inputs.", field="inputs")
    else:
        inputs = code_inputs_validate(inputs)
        in_process = language in LANGUAGES and LANGUAGES[language].in_process
        if not in_process and parsed.signature is not None:
            signature = signature_parse(parsed.signature)
            for number, args in enumerate(inputs, start=1):
                if problem := args_problem(signature, args):
                    raise InvalidInput(f"Case {number} does not fit the function: {problem}.", field="inputs")
        cases = _custom_cases(inputs, parsed, reference)
    ran = _run_cases(cases, answer=answer, spec=parsed, language=language)
    keys = ("name", "input", "expected", "got", "outcome", "stdout", "time_ms", "error")
    return {
        "load_error": ran.load_error,
        "stopped": ran.stopped,
        "cases": [
            {key: row[key] for key in keys} | {"reference_failed": case.reference_failed}
            for case, row in zip(cases, ran.rows, strict=False)
        ],
        "language": ran.language,
        "time": ran.times,
    }
