"""A value is written the same way in the examples, a run's cases and a result's tests, in the
notation of the language the candidate chose: Python's `True`, Java's `true`. The examples are
stored in Python; where one is a visible test, it is shown through that test's values."""

from __future__ import annotations

from pathlib import Path

import pytest

from attempts.presenting import case_view, examples_view, result_view, run_view
from evaluation.evaluators.base import EvaluationRequest
from evaluation.evaluators.code import CodeRunnerEvaluator, code_run
from evaluation.languages import language_available
from tests.questions.bank import bank_questions

pytestmark = pytest.mark.nodb

REPOSITORY = Path(__file__).resolve().parents[2]
# brackets-balanced: its first example is `text = "call(a[1], {b: 2})"` giving True.
SHOWN = {
    "python": {"Input": 'text = "call(a[1], {b: 2})"', "Output": "True", "Expected": "True", "Got": "True"},
    "java": {"Input": 'text = "call(a[1], {b: 2})"', "Output": "true", "Expected": "true", "Got": "true"},
}


def _question() -> dict:
    return next(q for q in bank_questions("coding") if q["slug"] == "brackets-balanced")


def _answer(question: dict, language: str) -> str:
    if language == "python":
        return question["reference_answer"]
    return (REPOSITORY / "questions" / "references" / language / "brackets-balanced.java").read_text()


@pytest.mark.parametrize("language", list(SHOWN))
def test_examples_run_cases_and_result_tests_write_a_value_alike(language):
    if not language_available(language):
        pytest.skip(f"{language} is not installed here")
    question, expected = _question(), SHOWN[language]
    spec = question["evaluation_spec"]
    example = dict(examples_view(question["examples"], tests=spec["tests"], language=language)[0])
    assert {"Input": example["Input"], "Output": example["Output"]} == {k: expected[k] for k in ("Input", "Output")}

    ran = code_run(spec=spec, answer=_answer(question, language), language=language)
    case = run_view({"status": "completed", **ran})["cases"][0]["shown"]
    assert (case["Expected"], case["Got"]) == (expected["Expected"], expected["Got"])

    request = EvaluationRequest(
        question_slug=question["slug"], question_kind="coding", prompt="", spec=spec,
        answer=_answer(question, language), language=language,
    )  # fmt: skip
    outcome = CodeRunnerEvaluator().evaluate(request)
    test = result_view({"score": outcome.score, "max_score": 100, "details": outcome.details})["tests"][0]["shown"]
    assert (test["Expected"], test["Got"]) == (expected["Expected"], expected["Got"])


def test_python_writes_none_and_nested_words_and_leaves_strings_as_they_are():
    row = {"visible": True, "input": '[true, null], "null true"', "expected": '{"a": false}', "got": "null"}
    assert case_view(row, language="python")["shown"] == {
        "Input": '[True, None], "null true"',
        "Expected": '{"a": False}',
        "Got": "None",
    }
    assert case_view(row, language="go")["shown"] == {
        "Input": '[true, null], "null true"',
        "Expected": '{"a": false}',
        "Got": "null",
    }


def test_an_example_names_parameters_as_the_language_does_and_one_unlike_its_test_stays_as_written():
    examples = [
        {"input": "course_count = 3, prerequisites = [[1, 0]]", "output": "True"},
        {"input": "course_count = 2, prerequisites = []", "output": "False"},
    ]
    tests = [
        {"name": "a", "visible": True, "args": [3, [[1, 0]]], "expected": True},
        {"name": "b", "visible": True, "args": [2, [[0, 1]]], "expected": False},  # not the example's
    ]
    assert examples_view(examples, tests=tests, language="cpp") == [
        [("Input", "courseCount = 3, prerequisites = [[1, 0]]"), ("Output", "true")],
        [("Input", "course_count = 2, prerequisites = []"), ("Output", "False")],
    ]


def test_a_custom_input_the_reference_fails_on_says_so_in_place_of_expected():
    row = {"input": "3", "expected": None, "got": "1", "outcome": "ran", "reference_failed": "error"}
    shown = run_view({"status": "completed", "language": {"id": "python"}, "cases": [row]})["cases"][0]["shown"]
    assert shown["Expected"] == (
        "None: the reference solution fails on this input (error), so it may be outside the problem's domain; "
        "no verdict."
    )
