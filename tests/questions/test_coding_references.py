"""Every coding question through the real code runner: the reference passes, the naive answer and
the bare Python starter (generated from the signature) do not. Skipped until the code evaluator exists."""

from __future__ import annotations

import importlib.util

import pytest

from evaluation.evaluators import EvaluationRequest, get_evaluator
from evaluation.evaluators.code import code_run
from evaluation.languages import LANGUAGES, signature_parse
from tests.questions.bank import bank_questions

pytestmark = [
    pytest.mark.nodb,
    pytest.mark.skipif(
        importlib.util.find_spec("evaluation.evaluators.code") is None,
        reason="the code runner (evaluation.evaluators.code) is not in this tree yet",
    ),
]

CODING_QUESTIONS = bank_questions("coding")


def run(question: dict, answer: str):
    request = EvaluationRequest(
        question_slug=question["slug"],
        question_kind="coding",
        prompt=question["prompt"],
        spec=question["evaluation_spec"],
        answer=answer,
    )
    return get_evaluator("code").evaluate(request)


@pytest.mark.parametrize("question", CODING_QUESTIONS, ids=lambda q: q["slug"])
def test_reference_answer_passes_every_test(question: dict) -> None:
    outcome = run(question, question["reference_answer"])
    assert outcome.score == 100 == outcome.max_score, outcome.feedback


@pytest.mark.parametrize("question", CODING_QUESTIONS, ids=lambda q: q["slug"])
def test_reference_passes_the_shown_examples_on_the_run_button(question: dict) -> None:
    ran = code_run(spec=question["evaluation_spec"], answer=question["reference_answer"])
    shown = [t["name"] for t in question["evaluation_spec"]["tests"] if t.get("visible")]
    assert [case["name"] for case in ran["cases"]] == shown
    assert all(case["outcome"] == "passed" for case in ran["cases"]), ran


@pytest.mark.parametrize("question", CODING_QUESTIONS, ids=lambda q: q["slug"])
def test_naive_wrong_answer_fails_some_test(question: dict) -> None:
    outcome = run(question, question["wrong_answer"])
    assert outcome.score < 100, outcome.feedback


@pytest.mark.parametrize("question", CODING_QUESTIONS, ids=lambda q: q["slug"])
def test_starter_code_alone_does_not_pass(question: dict) -> None:
    starter = LANGUAGES["python"].starter(signature_parse(question["evaluation_spec"]["signature"]))
    outcome = run(question, starter)
    assert outcome.score < 100, outcome.feedback
