"""Every coding question in every language, in the real sandbox: the reference answer passes
every test and the generated starter fails (it compiles and runs, and is wrong)."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from evaluation.evaluators.base import EvaluationRequest
from evaluation.evaluators.code import MAX_SCORE, CodeRunnerEvaluator
from evaluation.languages import LANGUAGES, language_available, signature_parse
from evaluation.sandbox import programs
from tests.questions.bank import BANK_DIR, bank_questions

pytestmark = pytest.mark.nodb

REFERENCES = BANK_DIR / "references"
EXTENSIONS = {"javascript": ".js", "java": ".java", "cpp": ".cpp", "go": ".go"}
# Two at a time: the machine has two cores, and compiles are CPU-bound.
PARALLEL = 2


def reference_answer(question: dict, language: str) -> str:
    if language == "python":
        return question["reference_answer"]
    return (REFERENCES / language / f"{question['slug']}{EXTENSIONS[language]}").read_text(encoding="utf-8")


def _evaluate(question: dict, language: str, answer: str) -> tuple[float, str]:
    request = EvaluationRequest(
        question_slug=question["slug"],
        question_kind="coding",
        prompt="",
        spec=question["evaluation_spec"],
        answer=answer,
        language=language,
    )
    outcome = CodeRunnerEvaluator().evaluate(request)
    return outcome.score, outcome.feedback


def _problems(question: dict, language: str) -> list[str]:
    problems = []
    score, feedback = _evaluate(question, language, reference_answer(question, language))
    if score != MAX_SCORE:
        problems.append(f"{question['slug']} reference scored {score}: {feedback}")
    starter = LANGUAGES[language].starter(signature_parse(question["evaluation_spec"]["signature"]))
    score, feedback = _evaluate(question, language, starter)
    if score == MAX_SCORE or "does not compile" in feedback or "while loading" in feedback:
        problems.append(f"{question['slug']} starter should run and fail, got {score}: {feedback}")
    return problems


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_every_reference_passes_and_every_starter_runs_and_fails(language):
    assert language_available(language), f"{language} is not installed: run scripts/setup-system.sh"
    questions = bank_questions("coding")
    with ThreadPoolExecutor(PARALLEL) as pool:
        problems = [p for found in pool.map(lambda q: _problems(q, language), questions) for p in found]
    assert problems == []


@pytest.mark.parametrize("language", list(EXTENSIONS))
def test_every_question_has_a_reference_in_every_language_and_no_other(language):
    slugs = {question["slug"] for question in bank_questions("coding")}
    files = {path.stem for path in (REFERENCES / language).glob(f"*{EXTENSIONS[language]}")}
    assert files == slugs


def test_the_same_sources_compile_once_and_a_change_compiles_again():
    question = next(q for q in bank_questions("coding") if q["slug"] == "sum-of-list")
    answer = reference_answer(question, "cpp") + f"\n// {uuid.uuid4()}\n"  # sources never compiled before

    def evaluate(text):
        request = EvaluationRequest("sum-of-list", "coding", "", question["evaluation_spec"], text, language="cpp")
        return CodeRunnerEvaluator().evaluate(request)

    first, second = evaluate(answer), evaluate(answer)
    changed = evaluate(answer + "// changed\n")
    assert [o.score for o in (first, second, changed)] == [MAX_SCORE] * 3
    assert [o.details["time"]["compile_cached"] for o in (first, second, changed)] == [False, True, False]
    assert second.details["time"]["compile_ms"] == 0.0
    # A compile error is never kept: the same broken text compiles (and fails) again.
    broken = [evaluate("long long sumOfList(const vector<long long>& n) { return x; }\n") for _ in range(2)]
    assert [o.details["load_error"]["kind"] for o in broken] == ["compile", "compile"]


def test_a_compiled_answer_that_cannot_be_kept_is_still_judged(monkeypatch, tmp_path):
    # Keeping is only a saving: a full disk, or another worker dropping entries while this one
    # prunes (seen once in 200 benchmark jobs), must never fail the answer.
    not_a_folder = tmp_path / "compiled"
    not_a_folder.write_text("")
    monkeypatch.setattr(programs, "_compiled_dir", lambda: str(not_a_folder))
    question = next(q for q in bank_questions("coding") if q["slug"] == "sum-of-list")
    text = f"{reference_answer(question, 'go')}\n// {uuid.uuid4()}\n"
    request = EvaluationRequest("sum-of-list", "coding", "", question["evaluation_spec"], text, language="go")
    outcome = CodeRunnerEvaluator().evaluate(request)
    assert outcome.score == MAX_SCORE
    assert outcome.details["time"]["compile_cached"] is False and not_a_folder.is_file()
