"""Loading the bank: idempotent upserts, clear errors, nothing half-loaded."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
import yaml
from django.core.management import CommandError, call_command

from attempts.models import Question
from attempts.services.questions import (
    QuestionFileError,
    question_upsert,
    questions_load,
)
from evaluation.languages import LANGUAGES, signature_parse
from tests.questions.bank import BANK_DIR, bank_files, bank_questions


def _snapshot() -> dict[str, tuple]:
    return {
        q.slug: (q.pk, q.updated_at, q.title, q.prompt, q.evaluation_spec, q.topics, q.examples)
        for q in Question.objects.all()
    }


def _write(directory: Path, name: str, data: object) -> Path:
    path = directory / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _valid_rubric_question(slug: str = "tell-me-about-a-bug") -> dict:
    return {
        "slug": slug,
        "title": "A bug you chased",
        "kind": "behavioral",
        "difficulty": "easy",
        "topics": ["debugging"],
        "prompt": "Tell me about a hard bug.",
        "evaluator": "rubric",
        "reference_answer": "I reproduced it, bisected the commits and found the race.",
        "evaluation_spec": {
            "criteria": [
                {
                    "id": "method",
                    "title": "Method",
                    "weight": 1,
                    "description": "Debugs methodically.",
                    "examples": [
                        "First I reproduced the crash on my laptop with the exact request from the logs.",
                        "I bisected the last forty commits and found the one that introduced the race.",
                    ],
                    "missing": "Say how you narrowed the bug down: reproducing it, then bisecting.",
                    "follow_up": "How did you know the fix was the right one?",
                },
            ]
        },
    }


@pytest.mark.django_db
def test_loading_the_bank_twice_changes_nothing_the_second_time() -> None:
    first = questions_load(directory=BANK_DIR)
    assert len(first.created) == len(bank_files())
    assert first.updated == [] and first.unchanged == []
    before = _snapshot()

    second = questions_load(directory=BANK_DIR)

    assert second.created == [] and second.updated == []
    assert sorted(second.unchanged) == sorted(before)
    assert _snapshot() == before, "a second load must not touch any row, updated_at included"


@pytest.mark.django_db
def test_wrong_answers_never_reach_the_database() -> None:
    questions_load(directory=BANK_DIR)
    wrong_answers = {q["slug"]: q["wrong_answer"] for q in bank_questions("coding")}
    for question in Question.objects.filter(kind="coding"):
        stored = " ".join(
            [
                question.prompt,
                question.starter_code,
                str(question.examples),
                str(question.evaluation_spec),
                question.reference_answer,
            ]
        )
        assert wrong_answers[question.slug].strip() not in stored


@pytest.mark.django_db
def test_an_edited_file_updates_only_its_question(tmp_path: Path) -> None:
    bank = tmp_path / "bank"
    shutil.copytree(BANK_DIR, bank)
    questions_load(directory=bank)
    before = _snapshot()
    edited = bank / "behavioral" / "mentoring-a-junior-engineer.yaml"
    data = yaml.safe_load(edited.read_text())
    data["title"] = "Growing a junior engineer"
    edited.write_text(yaml.safe_dump(data, sort_keys=False))

    report = questions_load(directory=bank)

    assert report.updated == ["mentoring-a-junior-engineer"]
    assert report.created == []
    after = _snapshot()
    assert after["mentoring-a-junior-engineer"][2] == "Growing a junior engineer"
    assert after["mentoring-a-junior-engineer"][1] > before["mentoring-a-junior-engineer"][1]
    del after["mentoring-a-junior-engineer"], before["mentoring-a-junior-engineer"]
    assert after == before


@pytest.mark.django_db
def test_question_upsert_reports_created_then_not_created() -> None:
    data = _valid_rubric_question()
    question, created = question_upsert(data=data)
    assert created
    again, created_again = question_upsert(data=data)
    assert not created_again
    assert again.pk == question.pk
    assert again.updated_at == question.updated_at


@pytest.mark.django_db
def test_management_command_prints_the_counts() -> None:
    out = io.StringIO()
    call_command("load_questions", "--dir", str(BANK_DIR), stdout=out)
    assert out.getvalue().strip() == f"{len(bank_files())} created, 0 updated, 0 unchanged"
    out = io.StringIO()
    call_command("load_questions", "--dir", str(BANK_DIR), stdout=out)
    assert out.getvalue().strip() == f"0 created, 0 updated, {len(bank_files())} unchanged"


@pytest.mark.django_db
def test_management_command_turns_a_bad_bank_into_a_command_error(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("slug: [unclosed\n")
    with pytest.raises(CommandError, match="broken.yaml"):
        call_command("load_questions", "--dir", str(tmp_path), stdout=io.StringIO())


def _mutations() -> list[tuple[str, dict, str]]:
    def without(key: str) -> dict:
        data = _valid_rubric_question()
        del data[key]
        return data

    def with_(**changes: object) -> dict:
        return _valid_rubric_question() | changes

    coding = next(q for q in bank_questions("coding") if q["slug"] == "compress-runs")

    def coding_with(**spec_changes: object) -> dict:
        return coding | {"evaluation_spec": coding["evaluation_spec"] | spec_changes}

    return [
        ("missing-prompt", without("prompt"), "field 'prompt': is required"),
        ("bad-kind", with_(kind="trivia"), "field 'kind': must be one of"),
        ("bad-difficulty", with_(difficulty="brutal"), "field 'difficulty'"),
        ("bad-slug", with_(slug="Not A Slug"), "field 'slug'"),
        ("unknown-field", with_(answer_key="x"), "field 'answer_key': unknown field"),
        ("wrong-evaluator", with_(evaluator="code"), "field 'evaluator'"),
        ("bad-topics", with_(topics="graphs"), "field 'topics'"),
        (
            "bad-weight",
            with_(
                evaluation_spec={
                    "criteria": [{"id": "a", "title": "A", "weight": 0, "description": "d", "concepts": {"x": ["y"]}}]
                }
            ),
            "criterion 'a': 'weight' must be a positive number",
        ),
        ("no-criteria", with_(evaluation_spec={"criteria": []}), "'criteria' must be a non-empty list"),
        ("coding-no-tests", coding_with(tests=[]), "field 'evaluation_spec.tests'"),
        (
            "coding-args-not-list",
            coding_with(tests=[{"name": "t", "args": "abc", "expected": "abc"}]),
            "field 'evaluation_spec.tests[0].args'",
        ),
        ("coding-bad-compare", coding_with(compare="fuzzy"), "field 'evaluation_spec.compare'"),
        (
            "coding-reference-misses-the-function",
            coding | {"reference_answer": "def compress(text):\n    return text\n"},
            "field 'reference_answer': must be Python source defining the function 'compress_runs'",
        ),
        (
            "coding-wrong-answer-misses-the-function",
            coding | {"wrong_answer": "def compress(text):\n    return text\n"},
            "field 'wrong_answer': must be Python source defining 'compress_runs'",
        ),
        (
            "coding-no-signature",
            coding | {"evaluation_spec": {k: v for k, v in coding["evaluation_spec"].items() if k != "signature"}},
            "field 'evaluation_spec.signature': is required",
        ),
        (
            "coding-function-instead-of-signature",
            coding_with(function="compress_runs"),
            "field 'evaluation_spec.function': is replaced by evaluation_spec.signature",
        ),
        (
            "coding-unknown-type",
            coding_with(signature=coding["evaluation_spec"]["signature"] | {"returns": "str"}),
            "field 'evaluation_spec.signature': type 'str': unknown type 'str'",
        ),
        (
            "coding-camel-case-function",
            coding_with(signature=coding["evaluation_spec"]["signature"] | {"function": "compressRuns"}),
            "field 'evaluation_spec.signature': signature.function must be a snake_case name",
        ),
        (
            "coding-args-do-not-fit",
            coding_with(tests=[{"name": "t", "args": [5], "expected": "5", "visible": True}]),
            "field 'evaluation_spec.tests[0].args': do not fit the signature: text must be text",
        ),
        (
            "coding-too-many-args",
            coding_with(tests=[{"name": "t", "args": ["a", "b"], "expected": "a", "visible": True}]),
            "field 'evaluation_spec.tests[0].args': do not fit the signature: 1 arguments are expected, not 2",
        ),
        (
            "coding-expected-does-not-fit",
            coding_with(tests=[{"name": "t", "args": ["aa"], "expected": ["a", 2], "visible": True}]),
            "field 'evaluation_spec.tests[0].expected': does not fit the signature's return type string",
        ),
        (
            "coding-starter-code-in-the-file",
            coding | {"starter_code": "def compress_runs(text):\n    pass\n"},
            "field 'starter_code': is generated from the signature",
        ),
        ("coding-bad-time-limit", coding_with(time_limit_s=-1), "field 'evaluation_spec.time_limit_s'"),
        (
            "coding-visible-not-bool",
            coding_with(tests=[{"name": "t", "args": ["a"], "expected": "a", "visible": "yes"}]),
            "field 'evaluation_spec.tests[0].visible': must be true or false",
        ),
        (
            "coding-nothing-visible",
            coding_with(tests=[{**t, "visible": False} for t in coding["evaluation_spec"]["tests"]]),
            "field 'evaluation_spec.tests': at least one test must be visible",
        ),
    ]


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "data", "message"), _mutations(), ids=[m[0] for m in _mutations()])
def test_malformed_question_names_file_and_field(tmp_path: Path, name: str, data: dict, message: str) -> None:
    _write(tmp_path, "good.yaml", _valid_rubric_question("a-good-one"))
    _write(tmp_path, f"{name}.yaml", data)

    with pytest.raises(QuestionFileError) as caught:
        questions_load(directory=tmp_path)

    assert f"{name}.yaml" in str(caught.value)
    assert message in str(caught.value)
    assert Question.objects.count() == 0, "one bad file must load nothing, not the good ones either"


@pytest.mark.django_db
def test_a_coding_question_is_stored_without_starter_code_and_shows_one_per_language() -> None:
    questions_load(directory=BANK_DIR)
    assert set(Question.objects.filter(kind="coding").values_list("starter_code", flat=True)) == {""}
    question = Question.objects.get(slug="sum-of-list")
    assert question.evaluation_spec["signature"]["function"] == "sum_of_list"
    python = LANGUAGES["python"].starter(signature_parse(question.evaluation_spec["signature"]))
    assert python.startswith("def sum_of_list(numbers: list[int]) -> int:\n")


@pytest.mark.django_db
def test_invalid_yaml_and_duplicate_slugs_are_all_reported_at_once(tmp_path: Path) -> None:
    (tmp_path / "syntax.yaml").write_text("slug: [unclosed\n")
    _write(tmp_path, "first.yaml", _valid_rubric_question("same-slug"))
    _write(tmp_path, "second.yaml", _valid_rubric_question("same-slug"))

    with pytest.raises(QuestionFileError) as caught:
        questions_load(directory=tmp_path)

    message = str(caught.value)
    assert "2 question file(s) are malformed" in message
    assert "syntax.yaml" in message and "is not valid YAML" in message
    assert "second.yaml field 'slug': 'same-slug' is already used by" in message


@pytest.mark.django_db
def test_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(QuestionFileError, match="is not a directory"):
        questions_load(directory=tmp_path / "nope")
