"""`code_run`, behind the Run button: the shown examples or the candidate's own inputs, through
the same sandbox and rows as a submission, never a hidden test."""

from __future__ import annotations

import pytest

from evaluation.evaluators.code import code_run
from interviewprep.errors import InvalidInput
from tests.evaluation.sandbox_helpers import TWO_SUM, TWO_SUM_SPEC

pytestmark = pytest.mark.nodb

CASE_KEYS = {"name", "input", "expected", "got", "outcome", "stdout", "time_ms", "error", "reference_failed"}
SPEC = {
    **TWO_SUM_SPEC,
    "tests": [
        {"name": "basic", "args": [[2, 7, 11, 15], 9], "expected": [0, 1], "visible": True},
        {"name": "middle", "args": [[3, 2, 4], 6], "expected": [1, 2], "visible": True},
        {"name": "hidden", "args": [[1, 5], 6], "expected": [0, 1]},
    ],
}


def test_without_inputs_it_runs_the_shown_examples_only():
    answer = TWO_SUM.replace("def two_sum(nums, target):", "def two_sum(nums, target):\n    print(len(nums))")
    ran = code_run(spec=SPEC, answer=answer)
    assert ran["load_error"] is None and ran["stopped"] is None
    assert [case["name"] for case in ran["cases"]] == ["basic", "middle"]
    basic = ran["cases"][0]
    assert set(basic) == CASE_KEYS
    assert basic | {"time_ms": 0} == {
        "name": "basic",
        "input": "[2, 7, 11, 15], 9",
        "expected": "[0, 1]",
        "got": "[0, 1]",
        "outcome": "passed",
        "stdout": "4\n",
        "time_ms": 0,
        "error": None,
        "reference_failed": None,
    }


def test_a_wrong_example_is_failed_with_what_came_back():
    ran = code_run(spec=SPEC, answer="def two_sum(nums, target):\n    return [1, 0]\n")
    assert [(c["outcome"], c["got"]) for c in ran["cases"]] == [("failed", "[1, 0]"), ("failed", "[1, 0]")]


def test_custom_inputs_without_a_reference_run_with_nothing_to_compare():
    answer = """
def two_sum(nums, target, seen=[]):
    seen.append(target)
    if target < 0:
        raise ValueError("negative target")
    print("seen", seen)
    return [len(nums), "é"]
"""
    ran = code_run(spec=SPEC, answer=answer, inputs=[[[1, 2], 3], [[], -1], [["a"], 0]])
    one, two, three = ran["cases"]
    assert one | {"time_ms": 0} == {
        "name": "Case 1",
        "input": "[1, 2], 3",
        "expected": None,
        "got": '[2, "é"]',
        "outcome": "ran",
        "stdout": "seen [3]\n",
        "time_ms": 0,
        "error": None,
        "reference_failed": None,
    }
    assert two["outcome"] == "error" and two["got"] is None
    assert two["error"] == "ValueError: negative target (line 5)"
    assert three["stdout"] == "seen [0]\n", "each case starts from fresh state"


def test_a_case_that_runs_out_of_time_stops_the_rest():
    answer = "def two_sum(nums, target):\n    while target:\n        pass\n    return []\n"
    ran = code_run(spec={**SPEC, "time_limit_s": 0.5}, answer=answer, inputs=[[[], 0], [[], 1], [[], 0]])
    assert ran["stopped"] == {"test": "Case 2", "reason": "timeout", "not_run": 1}
    assert [c["outcome"] for c in ran["cases"]] == ["ran", "timeout", "not_run"]


def test_a_compile_error_is_one_message_and_no_cases():
    ran = code_run(spec=SPEC, answer="def two_sum(nums, target)\n    return []\n", inputs=[[[1], 1]])
    assert ran == {
        "load_error": {"kind": "compile", "message": "expected ':'", "line": 1, "column": 26},
        "stopped": None,
        "cases": [],
        "language": {"id": "python", "name": "Python", "version": ran["language"]["version"]},
        "time": {"compile_ms": None, "run_ms": ran["time"]["run_ms"], "compile_cached": False},
    }


def test_a_question_without_shown_examples_asks_for_inputs():
    hidden_only = {**SPEC, "tests": [{k: v for k, v in t.items() if k != "visible"} for t in SPEC["tests"]]}
    with pytest.raises(InvalidInput, match="no examples") as caught:
        code_run(spec=hidden_only, answer=TWO_SUM)
    assert caught.value.extra == {"field": "inputs"}


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


BAD_INPUTS = {
    "not_a_list": ({"nums": [1]}, "must be a list of cases"),
    "case_not_a_list": ([[1, 2], 3], "must be a list of cases"),
    "no_case": ([], "at least one input"),
    "eleven_cases": ([[1]] * 11, "at most 10 inputs at a time, not 11"),
    "a_set": ([[{1, 2}]], "Case 1 cannot be run: a set is not a JSON value"),
    "a_tuple": ([[1], [(1, 2)]], "Case 2 cannot be run: a tuple is not a JSON value"),
    "nan": ([[float("nan")]], "NaN and infinite numbers are not JSON"),
    "number_keys": ([[{1: "a"}]], "object keys must be strings"),
    "too_deep": ([[nested(40)]], "nested more than 32 levels"),
    "too_big": ([["x" * 70000]], "at most 65536 are allowed"),
    "huge_number": ([[10**5000]], "a number too long"),
}


@pytest.mark.parametrize(("inputs", "message"), BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_invalid_inputs_are_refused_before_anything_runs(inputs, message):
    with pytest.raises(InvalidInput) as caught:
        code_run(spec=SPEC, answer=TWO_SUM, inputs=inputs)
    assert message in caught.value.detail
    assert caught.value.extra == {"field": "inputs"}


def test_an_answer_too_long_is_refused():
    with pytest.raises(InvalidInput) as caught:
        code_run(spec=SPEC, answer="#" * (256 * 1024 + 1))
    assert caught.value.extra == {"field": "answer"}
