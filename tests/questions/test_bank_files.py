"""Every file of the bank is a valid question, and the bank has the promised breadth."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest

from attempts.services.questions import question_file_read, question_validate
from tests.questions.bank import bank_files, bank_questions

pytestmark = pytest.mark.nodb


@pytest.mark.parametrize("path", bank_files(), ids=lambda p: p.stem)
def test_every_question_file_validates(path: Path) -> None:
    data = question_file_read(path=path)
    fields = question_validate(data=data, source=str(path))
    assert fields["slug"] == path.stem, "file names follow slugs so a question is easy to find"
    assert path.parent.name == fields["kind"]


def test_bank_has_the_promised_counts_per_kind() -> None:
    kinds = Counter(q["kind"] for q in bank_questions())
    assert kinds["coding"] >= 20
    assert kinds["system_design"] >= 10
    assert kinds["behavioral"] >= 10


def test_every_kind_spans_difficulties() -> None:
    for kind in ("coding", "system_design", "behavioral"):
        difficulties = {q["difficulty"] for q in bank_questions(kind)}
        assert difficulties == {"easy", "medium", "hard"}, kind


def test_slugs_are_unique() -> None:
    slugs = Counter(q["slug"] for q in bank_questions())
    assert [slug for slug, count in slugs.items() if count > 1] == []


def test_coding_questions_cover_the_core_topics() -> None:
    topics = {topic for q in bank_questions("coding") for topic in q["topics"]}
    expected = {
        "arrays",
        "strings",
        "hashing",
        "two-pointers",
        "graphs",
        "dynamic-programming",
        "intervals",
        "stacks",
        "binary-search",
        "heaps",
    }
    assert expected <= topics


@pytest.mark.parametrize("question", bank_questions("coding"), ids=lambda q: q["slug"])
def test_coding_question_has_enough_hidden_tests_and_a_wrong_answer(question: dict) -> None:
    tests = question["evaluation_spec"]["tests"]
    assert len(tests) >= 8
    assert question["wrong_answer"].strip() != question["reference_answer"].strip()
    visible = str(question["examples"]) + question["prompt"] + str(question["evaluation_spec"]["signature"])
    assert "wrong_answer" not in visible


def _as_json(value: object) -> object:
    return [_as_json(item) for item in value] if isinstance(value, tuple | list) else value


def _shown(text: str) -> object:
    """An example's Python literal as JSON data (tuples become lists, as arguments arrive)."""
    return _as_json(ast.literal_eval(text.strip()))


@pytest.mark.parametrize("question", bank_questions("coding"), ids=lambda q: q["slug"])
def test_visible_tests_are_exactly_the_shown_examples(question: dict) -> None:
    visible = [t for t in question["evaluation_spec"]["tests"] if t.get("visible")]
    examples = question["examples"]
    assert len(visible) == len(examples) >= 1
    for test, example in zip(visible, examples, strict=True):
        # "name = value, other = value": the values, in order, are the test's arguments.
        values = re.split(r"(?:^|, )[a-z_]+ = ", example["input"].strip())[1:]
        assert [_shown(v) for v in values] == test["args"], (test["name"], example["input"])
        assert _shown(example["output"]) == test["expected"], (test["name"], example["output"])
