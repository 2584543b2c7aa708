"""Calibrating a rubric: the ways of gaming it, generated from its own example sentences (their
content words, the worst case a candidate who had read the rubric could write), and how far apart
a question's labelled answers score. Read by `manage.py calibrate_rubrics` and the bank's tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from evaluation.evaluators.base import EvaluationOutcome, EvaluationRequest
from evaluation.evaluators.written.text import FUNCTION_WORDS, words

GENERIC_TEMPLATE = (
    "The situation was difficult. I had a task. I took action. I worked hard. The result was good. "
    "I learned a lesson. The team was happy. I would do it again. It was a success. I grew a lot. "
    "We communicated well. I made a plan. The plan worked. I solved the problem. Everyone agreed."
)


def content_terms(spec: Mapping[str, Any]) -> list[str]:
    """Every distinct content word of the rubric's example sentences, in order of first use."""
    seen: dict[str, None] = {}
    for criterion in spec.get("criteria", []):
        for example in criterion.get("examples", []):
            for word in words(example):
                lowered = word.lower()
                if lowered not in FUNCTION_WORDS and len(lowered) > 2:
                    seen.setdefault(lowered, None)
    return list(seen)


def generated_stuffing(spec: Mapping[str, Any]) -> dict[str, str]:
    """Each kind of stuffing the grader must score below an honest short answer."""
    terms = content_terms(spec)
    return {
        "bare_list": ", ".join(terms),
        "run_on_terms": "We used " + " and ".join(terms) + ".",
        "one_word_sentences": " ".join(f"{term.capitalize()}." for term in terms),
        "short_sentences": " ".join(f"I used {term} there." for term in terms),
        "generic_template": GENERIC_TEMPLATE,
    }


@dataclass(frozen=True)
class Calibration:
    label: str
    outcome: EvaluationOutcome

    @property
    def shown(self) -> str:
        if self.outcome.score is None:
            return f"not scored ({self.outcome.reason})"
        return f"{self.outcome.score:5.1f}"


def calibrate(
    *, spec: Mapping[str, Any], labelled: Mapping[str, Any], grade: Callable[[str], EvaluationOutcome]
) -> list[Calibration]:
    """Every labelled answer and every generated stuffing, graded."""
    answers: list[tuple[str, str]] = [
        (name, labelled[name]) for name in ("strong", "weak", "honest_short") if name in labelled
    ]
    answers += [(f"stuffed[{i}]", text) for i, text in enumerate(labelled.get("stuffed", []))]
    answers += [(f"generated:{name}", text) for name, text in generated_stuffing(spec).items()]
    return [Calibration(label, grade(text)) for label, text in answers]


def calibration_problems(results: list[Calibration]) -> list[str]:
    """What is out of order: strong must beat weak; every stuffing must score below honest_short
    (or be refused)."""
    scores = {r.label: r.outcome.score for r in results}
    problems = []
    strong, weak, honest = scores.get("strong"), scores.get("weak"), scores.get("honest_short")
    for label in ("strong", "weak", "honest_short"):
        if label in scores and scores[label] is None:
            problems.append(f"{label} was not scored")
    if strong is not None and weak is not None and strong <= weak:
        problems.append(f"strong {strong:g} does not beat weak {weak:g}")
    if honest is not None:
        for r in results:
            if (
                r.label.startswith(("stuffed", "generated"))
                and r.outcome.score is not None
                and r.outcome.score >= honest
            ):
                problems.append(f"{r.label} {r.outcome.score:g} is not below honest_short {honest:g}")
    return problems


@dataclass(frozen=True)
class QuestionCalibration:
    slug: str
    results: list[Calibration]
    problems: list[str]


def bank_calibrate(
    *, directory: Path, grade: Callable[[EvaluationRequest], EvaluationOutcome], slug: str | None = None
) -> list[QuestionCalibration]:
    """Every written question file under `directory` that has labelled answers, calibrated.
    Labelled answers live only in the files (the loader drops them), so the files are read here."""
    calibrated = []
    for path in sorted(directory.rglob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not data.get("labelled_answers") or data.get("kind") == "coding":
            continue
        if slug is not None and data.get("slug") != slug:
            continue

        def graded(text: str, data: dict[str, Any] = data) -> EvaluationOutcome:
            return grade(
                EvaluationRequest(
                    question_slug=data["slug"],
                    question_kind=data["kind"],
                    prompt=data["prompt"],
                    spec=data["evaluation_spec"],
                    answer=text,
                )
            )

        results = calibrate(spec=data["evaluation_spec"], labelled=data["labelled_answers"], grade=graded)
        calibrated.append(QuestionCalibration(data["slug"], results, calibration_problems(results)))
    return calibrated
