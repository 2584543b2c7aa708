"""The code evaluator's verdicts: outcomes, comparisons, scores, feedback and what details show."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import pytest

import evaluation.sandbox.launch as launch
import evaluation.sandbox.modes as modes
from evaluation.evaluators.base import EvaluationOutcome, PermanentEvaluationError
from evaluation.evaluators.code import CodeRunnerEvaluator, answer_matches
from evaluation.sandbox import current_mode, run_python
from tests.evaluation.sandbox_helpers import (
    TWO_SUM,
    TWO_SUM_SPEC,
    assert_normal_submission_scores,
    request_for,
)

pytestmark = pytest.mark.nodb


def evaluate(answer: str, spec: dict) -> EvaluationOutcome:
    return CodeRunnerEvaluator().evaluate(request_for(answer, spec))


def outcomes(outcome: EvaluationOutcome) -> dict[str, str]:
    return {row["name"]: row["outcome"] for row in outcome.details["tests"]}


def spec_with(function: str, *tests: tuple[str, list, object], visible: bool = False, **extra: object) -> dict:
    return {
        "function": function,
        "tests": [{"name": n, "args": a, "expected": e, "visible": visible} for n, a, e in tests],
        "time_limit_s": 1,
        **extra,
    }


HIDDEN_ROW = {"name", "visible", "outcome", "time_ms"}
SHOWN_ROW = HIDDEN_ROW | {"input", "expected", "got", "stdout", "error"}


def test_correct_answer_scores_full_marks():
    outcome = evaluate(TWO_SUM, TWO_SUM_SPEC)
    assert outcome.score == 100.0 and outcome.max_score == 100.0
    assert outcome.feedback == "3 of 3 tests passed."
    assert outcome.details["passed"] == 3 and outcome.details["total"] == 3
    assert outcome.details["load_error"] is None and outcome.details["stopped"] is None
    assert "mode" not in outcome.details  # the sandbox's internals are not the candidate's business
    assert all(isinstance(row["time_ms"], float) for row in outcome.details["tests"])


def test_shown_rows_carry_input_expected_and_got_and_hidden_rows_only_their_outcome():
    outcome = evaluate(TWO_SUM.replace("return [seen[target - n], i]", "return [i, seen[target - n]]"), TWO_SUM_SPEC)
    basic, middle, same = outcome.details["tests"]
    assert basic == {
        "name": "basic",
        "visible": True,
        "outcome": "failed",
        "time_ms": basic["time_ms"],
        "input": "[2, 7, 11, 15], 9",
        "expected": "[0, 1]",
        "got": "[1, 0]",
        "stdout": "",
        "error": None,
    }
    assert set(middle) == set(same) == HIDDEN_ROW
    assert middle["visible"] is False and middle["outcome"] == "failed"
    assert (
        outcome.feedback
        == "0 of 3 tests passed; failing: basic (wrong answer), middle (wrong answer), same (wrong answer)."
    )


def test_shown_tests_run_first_whatever_their_place_in_the_spec():
    spec = {**TWO_SUM_SPEC, "tests": [{**t, "visible": t["name"] == "same"} for t in TWO_SUM_SPEC["tests"]]}
    outcome = evaluate(TWO_SUM, spec)
    assert [(row["name"], row["visible"]) for row in outcome.details["tests"]] == [
        ("same", True),
        ("basic", False),
        ("middle", False),
    ]
    assert outcome.score == 100.0


def test_each_failure_kind_gets_its_own_outcome():
    answer = """
def solve(kind):
    if kind == "ok":
        print("debug line")
        return 1
    if kind == "wrong":
        return 2
    if kind == "raise":
        raise ValueError("bad input")
    if kind == "memory":
        return len(bytearray(1 << 31))
    if kind == "print":
        while True:
            print("y" * 10000)
    if kind == "set":
        return object()
"""
    spec = spec_with(
        "solve",
        ("passes", ["ok"], 1),
        ("wrong", ["wrong"], 1),
        ("raises", ["raise"], 1),
        ("memory", ["memory"], 1),
        ("prints", ["print"], 1),
        ("not_json", ["set"], 1),
        visible=True,
        memory_limit_mb=64,
    )
    outcome = evaluate(answer, spec)
    assert outcomes(outcome) == {
        "passes": "passed",
        "wrong": "failed",
        "raises": "error",
        "memory": "memory",
        "prints": "output_limit",
        "not_json": "error",
    }
    rows = {row["name"]: row for row in outcome.details["tests"]}
    assert rows["passes"]["stdout"] == "debug line\n" and rows["passes"]["got"] == "1"
    assert rows["wrong"]["got"] == "2" and rows["wrong"]["expected"] == "1"
    assert rows["raises"]["error"] == "ValueError: bad input (line 9)" and rows["raises"]["got"] is None
    assert rows["not_json"]["error"] == "returned a value of type object, which is not JSON"
    assert len(rows["prints"]["stdout"]) <= 1024
    assert outcome.details["stopped"] is None
    assert outcome.score == round(100 / 6, 1)
    assert outcome.feedback == (
        "1 of 6 tests passed; failing: wrong (wrong answer), raises (error), memory (memory limit) and 2 more."
    )


def test_time_limit_names_the_running_test_and_the_rest_did_not_run():
    answer = """
def slow(n):
    if n == 2:
        while True:
            pass
    return n
"""
    spec = spec_with("slow", ("a", [1], 1), ("deep", [2], 2), ("c", [3], 3), ("d", [4], 4), time_limit_s=0.5)
    outcome = evaluate(answer, spec)
    assert outcomes(outcome) == {"a": "passed", "deep": "timeout", "c": "not_run", "d": "not_run"}
    assert outcome.details["stopped"] == {"test": "deep", "reason": "timeout", "not_run": 2}
    rows = outcome.details["tests"]
    assert rows[1]["time_ms"] > 0 and rows[2]["time_ms"] == rows[3]["time_ms"] == 0.0
    assert outcome.score == 25.0
    # A CPU time-out on a machine that gives the box most of a core; a wall-clock one otherwise.
    assert outcome.feedback.startswith("1 of 4 tests passed. Time limit: test `deep` was still running")
    assert outcome.feedback.endswith("; the 2 tests after it did not run.")


def test_a_top_level_that_never_finishes_is_stopped_before_any_test():
    outcome = evaluate("while True:\n    pass\n", spec_with("f", ("a", [1], 1), ("b", [2], 2), time_limit_s=0.5))
    assert outcome.details["stopped"] == {"test": None, "reason": "timeout", "not_run": 2}
    assert outcomes(outcome) == {"a": "not_run", "b": "not_run"}
    assert outcome.feedback.startswith("0 of 2 tests passed. Time limit: your code's top level was still running")
    assert outcome.feedback.endswith("; no tests ran.")


def test_flooding_the_raw_output_stops_the_run_at_that_test():
    answer = "import os\ndef f(n):\n    while n == 2:\n        os.write(1, b'x' * 65536)\n    return n\n"
    outcome = evaluate(answer, spec_with("f", ("a", [1], 1), ("flood", [2], 2), ("c", [3], 3)))
    assert outcome.details["stopped"] == {"test": "flood", "reason": "output_limit", "not_run": 1}
    assert outcomes(outcome) == {"a": "passed", "flood": "output_limit", "c": "not_run"}
    assert outcome.feedback == (
        "1 of 3 tests passed. Output limit: test `flood` wrote more output than allowed; the test after it did not run."
    )


def test_a_process_that_dies_is_a_crash_of_that_test():
    answer = "import os\ndef f(n):\n    if n == 2:\n        os._exit(1)\n    return n\n"
    outcome = evaluate(answer, spec_with("f", ("a", [1], 1), ("dies", [2], 2)))
    assert outcome.details["stopped"] == {"test": "dies", "reason": "crashed", "not_run": 0}
    assert outcomes(outcome) == {"a": "passed", "dies": "error"}
    assert outcome.feedback == "1 of 2 tests passed. Crash: the process running test `dies` died."


def test_unordered_compare_accepts_any_order_and_sets():
    answer = "def f(xs):\n    return set(xs)\n"
    spec = spec_with("f", ("set", [[3, 1, 2]], [2, 3, 1]), compare="unordered")
    assert evaluate(answer, spec).score == 100.0
    spec = spec_with("f", ("missing", [[3, 1]], [1, 2]), compare="unordered")
    assert outcomes(evaluate(answer, spec)) == {"missing": "failed"}


def test_float_compare_uses_absolute_tolerance_recursively():
    answer = "def f(x):\n    return {'a': [x / 3, x]}\n"
    spec = spec_with("f", ("close", [1.0], {"a": [0.3333333, 1]}), compare="float")
    assert evaluate(answer, spec).score == 100.0
    spec = spec_with("f", ("far", [1.0], {"a": [0.33, 1]}), compare="float")
    assert evaluate(answer, spec).score == 0.0
    spec = spec_with("f", ("exact_needs_exact", [1.0], {"a": [0.3333333, 1]}))
    assert evaluate(answer, spec).score == 0.0


def test_exact_compare_keeps_booleans_apart_from_numbers():
    assert answer_matches(2.0, 2, "exact")
    assert not answer_matches(True, 1, "exact")
    assert not answer_matches([1, 2], [2, 1], "exact")
    assert answer_matches([[1, 2], [0]], [[0], [1, 2]], "unordered")


def test_syntax_error_is_one_message_with_its_line_and_column():
    answer = "def two_sum(nums, target):\n    seen = {}\n    for i n in enumerate(nums):\n        pass\n"
    outcome = evaluate(answer, TWO_SUM_SPEC)
    assert outcome.score == 0
    assert outcome.feedback == "Your code does not compile: line 3, column 11: invalid syntax. No tests ran."
    assert outcome.details == {
        "passed": 0,
        "total": 3,
        "load_error": {"kind": "compile", "message": "invalid syntax", "line": 3, "column": 11},
        "stopped": None,
        "tests": [],
        "language": {"id": "python", "name": "Python", "version": outcome.details["language"]["version"]},
        "time": {"compile_ms": None, "run_ms": outcome.details["time"]["run_ms"], "compile_cached": False},
    }
    assert outcome.details["language"]["version"].startswith("3.")


def test_missing_function_scores_zero_with_clear_feedback():
    outcome = evaluate("def twosum(nums, target):\n    return []\n", TWO_SUM_SPEC)
    assert outcome.score == 0
    assert outcome.feedback == "Your code does not define a function named two_sum. No tests ran."
    assert outcome.details["load_error"] == {"kind": "missing", "message": "", "line": None, "column": None}
    assert outcome.details["tests"] == []


def test_error_at_import_time_is_one_message_with_its_line():
    outcome = evaluate("import math\nimport nosuchmodule\n", TWO_SUM_SPEC)
    assert outcome.score == 0
    assert outcome.feedback == (
        "Your code raised an error while loading: line 2: ModuleNotFoundError: No module named 'nosuchmodule'. "
        "No tests ran."
    )
    assert outcome.details["load_error"]["kind"] == "exception" and outcome.details["tests"] == []


def test_standard_library_imports_work_inside_the_box():
    answer = """
import collections, heapq, itertools, functools, math, bisect, re, json, decimal, fractions
import dataclasses, typing, random, string
def f():
    return [json.dumps(sorted(collections.Counter("abca").items())), str(decimal.Decimal(1) / 4)]
"""
    spec = spec_with("f", ("imports", [], ['[["a", 2], ["b", 1], ["c", 1]]', "0.25"]))
    outcome = evaluate(answer, spec)
    assert outcome.score == 100.0, outcome.details


def test_details_never_hold_arguments_or_expected_values():
    answer = "def f(token):\n    return token[::-1]\n"
    spec = spec_with("f", ("hidden", ["ARGUMENT-TOKEN"], "EXPECTED-TOKEN"))
    outcome = evaluate(answer, spec)
    assert outcome.score == 0
    text = repr(outcome.details) + outcome.feedback
    assert "ARGUMENT-TOKEN" not in text and "EXPECTED-TOKEN" not in text
    assert "NEKOT-TNEMUGRA" not in text  # nor the returned value


def test_bad_spec_is_a_permanent_error():
    with pytest.raises(PermanentEvaluationError):
        evaluate(TWO_SUM, {"function": "two_sum", "tests": []})
    with pytest.raises(PermanentEvaluationError):
        evaluate(TWO_SUM, {**TWO_SUM_SPEC, "compare": "fuzzy"})


def test_concurrent_runs_never_share_a_uid(monkeypatch):
    runs = 4
    # Each run waits, holding its slot, until all of them hold one: the boxes are certain to
    # overlap, however slowly each one starts.
    all_held = threading.Barrier(runs)
    real = launch.slot_held

    @contextlib.contextmanager
    def held_together() -> Iterator[int]:
        with real() as slot:
            all_held.wait(timeout=60)
            yield slot

    current_mode()  # the probe's own run must not wait at the barrier
    monkeypatch.setattr(launch, "slot_held", held_together)
    answer = "import os\ndef f():\n    return os.getuid()\n"
    uids: list[object] = []

    def one() -> None:
        run = run_python(code=answer, function="f", tests_args=[[]], cpu_limit_s=1, memory_limit_mb=64)
        result = run.tests[0]
        uids.append(result.value if result is not None else run.ended)

    threads = [threading.Thread(target=one) for _ in range(runs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(uids) == runs and len(set(uids)) == runs, uids
    assert all(isinstance(uid, int) and 61000 <= uid < 61064 for uid in uids), uids


@pytest.fixture
def refused(monkeypatch):
    monkeypatch.setenv("SANDBOX_MODE", "refused")
    modes.forget_probe()
    yield
    monkeypatch.delenv("SANDBOX_MODE")
    modes.forget_probe()


def test_refused_mode_raises_permanent_error(refused):
    assert current_mode() == "refused"
    with pytest.raises(PermanentEvaluationError, match="refused"):
        evaluate(TWO_SUM, TWO_SUM_SPEC)


def test_forced_weaker_mode_is_used_and_stronger_is_ignored(monkeypatch):
    monkeypatch.setenv("SANDBOX_MODE", "rlimits+uid+seccomp")
    modes.forget_probe()
    try:
        assert current_mode() == "rlimits+uid+seccomp"
        assert_normal_submission_scores("rlimits+uid+seccomp")
        with pytest.raises(PermanentEvaluationError):
            run_python(
                code="", function="f", tests_args=[], cpu_limit_s=1, memory_limit_mb=64, mode="bwrap+seccomp+landlock"
            )
    finally:
        monkeypatch.delenv("SANDBOX_MODE")
        modes.forget_probe()


def test_probe_runs_once_and_is_cached(monkeypatch):
    calls = []
    real_probe = modes.probe_layers

    def counting_probe():
        calls.append(1)
        return real_probe()

    monkeypatch.setattr(modes, "probe_layers", counting_probe)
    modes.forget_probe()
    first = current_mode()
    assert current_mode() == first and current_mode() == first
    assert len(calls) == 1
