"""The loader records a change of what grades a question's answers, and only that."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from attempts.models import Question, QuestionChange
from attempts.services.questions import questions_load
from tests.attempts.regrade_helpers import scored_attempt
from tests.questions.bank import BANK_DIR

pytestmark = pytest.mark.django_db

CODING = "coding/brackets-balanced.yaml"
WRITTEN = "behavioral/receiving-critical-feedback.yaml"


def _bank(tmp_path: Path) -> Path:
    for name in (CODING, WRITTEN):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(BANK_DIR / name, tmp_path / name)
    return tmp_path


def _edit(directory: Path, name: str, edit) -> None:
    path = directory / name
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def _changes() -> list[tuple[str, list[str], str]]:
    return [(c.question.slug, c.fields, c.summary) for c in QuestionChange.objects.order_by("id")]


def test_a_first_load_and_an_identical_reload_record_no_change(tmp_path):
    bank = _bank(tmp_path)
    questions_load(directory=bank)
    report = questions_load(directory=bank)
    assert sorted(report.unchanged) == ["brackets-balanced", "receiving-critical-feedback"]
    assert _changes() == []


def test_a_change_outside_grading_records_no_change(tmp_path):
    bank = _bank(tmp_path)
    questions_load(directory=bank)

    def retitle(data):
        data["title"] += " (again)"
        data["hints"] = [*data.get("hints", []), "Think of a stack."]

    _edit(bank, CODING, retitle)
    report = questions_load(directory=bank)
    assert report.updated == ["brackets-balanced"]
    assert Question.objects.get(slug="brackets-balanced").title.endswith("(again)")
    assert _changes() == []


def test_changed_hidden_tests_record_one_change_and_reloading_records_no_second(tmp_path):
    bank = _bank(tmp_path)
    questions_load(directory=bank)

    def add_test(data):
        data["evaluation_spec"]["tests"].append({"name": "only openers", "args": ["(((("], "expected": False})

    _edit(bank, CODING, add_test)
    questions_load(directory=bank)
    questions_load(directory=bank)
    assert _changes() == [("brackets-balanced", ["tests"], "the question's hidden tests changed")]


def test_a_rubric_and_a_reference_answer_are_named_as_changed(tmp_path):
    bank = _bank(tmp_path)
    questions_load(directory=bank)

    def reweigh(data):
        data["evaluation_spec"]["criteria"][0]["weight"] += 1
        data["reference_answer"] += "\nAnd I thanked them for it."

    _edit(bank, WRITTEN, reweigh)
    _edit(bank, CODING, lambda data: data.update(reference_answer=data["reference_answer"] + "\n# a comment\n"))
    questions_load(directory=bank)
    assert sorted(_changes()) == [
        ("brackets-balanced", ["reference"], "the question's reference answer changed"),
        (
            "receiving-critical-feedback",
            ["rubric", "reference"],
            "the question's rubric and reference answer changed",
        ),
    ]


def test_the_loaders_summary_offers_the_regrade_of_a_changed_question_with_its_scored_answers(tmp_path):
    bank = _bank(tmp_path)
    questions_load(directory=bank)
    question = Question.objects.get(slug="brackets-balanced")
    scored_attempt(question)
    scored_attempt(question)

    def add_test(data):
        data["evaluation_spec"]["tests"].append({"name": "only openers", "args": ["(((("], "expected": False})

    _edit(bank, CODING, add_test)
    _edit(bank, WRITTEN, lambda data: data.update(title=data["title"] + " (again)"))
    out = io.StringIO()
    call_command("load_questions", "--dir", str(bank), stdout=out)
    change = QuestionChange.objects.get()
    assert out.getvalue().splitlines() == [
        "0 created, 2 updated, 0 unchanged",
        "brackets-balanced: the question's hidden tests changed; 2 scored answers keep their old scores until "
        "staff start the regrade (admin, question changes, or POST /api/v1/ops/questions/brackets-balanced/regrade/)",
    ]
    assert change.regrade_started_at is None  # offered, never started by a load

    questions_load(directory=bank)
    out = io.StringIO()
    call_command("load_questions", "--dir", str(bank), stdout=out)
    assert out.getvalue().splitlines() == ["0 created, 0 updated, 2 unchanged"]
