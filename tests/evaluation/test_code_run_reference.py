"""A custom input on Run is judged against the question's reference answer, run on the same
input in a sandbox of its own: `expected` is its value and `outcome` passed or failed; where
the reference itself fails (an input outside the problem), the case says so and gives no
verdict. Nothing of the reference but its return value reaches the candidate."""

from __future__ import annotations

import json

import pytest

from evaluation.evaluators.code import code_run
from evaluation.languages import language_available
from tests.questions.bank import bank_questions

pytestmark = pytest.mark.nodb

SECRET = "reference-secret-7Q"
SPEC = {
    "function": "halve",
    "signature": {"function": "halve", "params": [{"name": "n", "type": "int"}], "returns": "int", "summary": "Halve."},
    "tests": [{"name": "four", "args": [4], "expected": 2, "visible": True}],
    "time_limit_s": 1,
}
# Defined only on even numbers: an odd one is outside its domain. It prints, and its error
# names a secret, neither of which may reach the candidate.
REFERENCE = f"""
def halve(n):
    print("{SECRET}")
    if n % 2:
        raise ValueError("{SECRET}: odd")
    return n // 2
"""


def test_a_custom_input_gets_the_references_value_as_expected_and_a_verdict():
    answer = "def halve(n):\n    return n // 2 if n < 100 else 0\n"
    ran = code_run(spec=SPEC, answer=answer, inputs=[[10], [200]], reference=REFERENCE)
    assert [(c["expected"], c["got"], c["outcome"]) for c in ran["cases"]] == [
        ("5", "5", "passed"),
        ("100", "0", "failed"),
    ]
    assert [c["reference_failed"] for c in ran["cases"]] == [None, None]


def test_an_input_the_reference_fails_on_is_said_so_with_no_verdict():
    ran = code_run(spec=SPEC, answer="def halve(n):\n    return n // 2\n", inputs=[[3], [8]], reference=REFERENCE)
    odd, even = ran["cases"]
    assert odd | {"time_ms": 0} == {
        "name": "Case 1",
        "input": "3",
        "expected": None,
        "got": "1",
        "outcome": "ran",
        "stdout": "",
        "time_ms": 0,
        "error": None,
        "reference_failed": "error",
    }
    assert (even["expected"], even["outcome"], even["reference_failed"]) == ("4", "passed", None)


def test_nothing_the_reference_prints_or_raises_reaches_the_candidate():
    ran = code_run(spec=SPEC, answer="def halve(n):\n    return 0\n", inputs=[[3], [8]], reference=REFERENCE)
    shown = json.dumps(ran)
    assert SECRET not in shown
    assert "def halve" not in shown and "ValueError" not in shown


def test_a_reference_that_does_not_load_leaves_the_inputs_unjudged():
    ran = code_run(spec=SPEC, answer="def halve(n):\n    return 1\n", inputs=[[2]], reference="def halve(n)\n")
    assert [(c["expected"], c["outcome"], c["reference_failed"]) for c in ran["cases"]] == [(None, "ran", None)]


def test_an_answer_in_java_is_judged_against_the_python_reference():
    if not language_available("java"):
        pytest.skip("java is not installed here")
    question = next(q for q in bank_questions("coding") if q["slug"] == "sum-of-list")
    answer = "class Solution {\n    long sumOfList(long[] numbers) {\n        return numbers.length > 2 ? -1 : "
    answer += "Arrays.stream(numbers).sum();\n    }\n}\n"
    ran = code_run(
        spec=question["evaluation_spec"], answer=answer, inputs=[[[4, 5]], [[1, 2, 3]]], language="java",
        reference=question["reference_answer"],
    )  # fmt: skip
    assert [(c["expected"], c["got"], c["outcome"]) for c in ran["cases"]] == [
        ("9", "9", "passed"),
        ("6", "-1", "failed"),
    ]
