"""Every written question of the bank, graded: strong above weak, every stuffing (authored, and
generated from the rubric's own example sentences) below the honest short answer, off-topic and
blank answers refused, every evidence a sentence of the answer."""

from __future__ import annotations

from functools import cache

import pytest

from evaluation.evaluators import EvaluationOutcome, EvaluationRequest
from evaluation.evaluators.rubric import local_grade
from evaluation.evaluators.written.calibration import generated_stuffing
from evaluation.evaluators.written.text import sentences
from tests.evaluation.written_questions import OFF_TOPIC
from tests.questions.bank import bank_questions

pytestmark = pytest.mark.nodb

# Each question's tests run in one test process (`--dist loadgroup`), so an answer several of
# them grade (strong, weak, honest_short) is graded once there: the model is most of their cost.
PROSE = [
    pytest.param(q, id=q["slug"], marks=pytest.mark.xdist_group(f"written-{q['slug']}"))
    for q in bank_questions("system_design") + bank_questions("behavioral")
]
_QUESTIONS = {p.values[0]["slug"]: p.values[0] for p in PROSE}


def grade(question: dict, answer: str) -> EvaluationOutcome:
    return _grade(question["slug"], answer)


@cache
def _grade(slug: str, answer: str) -> EvaluationOutcome:
    question = _QUESTIONS[slug]
    request = EvaluationRequest(
        question_slug=question["slug"],
        question_kind=question["kind"],
        prompt=question["prompt"],
        spec=question["evaluation_spec"],
        answer=answer,
    )
    return local_grade(request)


@pytest.mark.parametrize("question", PROSE)
def test_strong_answer_scores_above_weak(question: dict) -> None:
    labelled = question["labelled_answers"]
    strong, weak = grade(question, labelled["strong"]), grade(question, labelled["weak"])
    assert strong.outcome == weak.outcome == "scored"
    assert strong.score > weak.score


@pytest.mark.parametrize("question", PROSE)
def test_every_stuffing_scores_below_the_honest_short_answer(question: dict) -> None:
    labelled = question["labelled_answers"]
    honest = grade(question, labelled["honest_short"])
    assert honest.outcome == "scored"
    stuffings = {f"stuffed[{i}]": s for i, s in enumerate(labelled.get("stuffed", []))}
    stuffings |= generated_stuffing(question["evaluation_spec"])
    # A stuffing may also be refused (off-topic, too short): either way it earns no score.
    above = {
        name: o.score
        for name, o in ((n, grade(question, s)) for n, s in stuffings.items())
        if o.score is not None and o.score >= honest.score
    }
    assert not above, f"honest_short scored {honest.score}"


@pytest.mark.parametrize("question", PROSE)
def test_blank_and_off_topic_answers_are_refused(question: dict) -> None:
    assert grade(question, "").reason == "blank"
    assert grade(question, OFF_TOPIC).reason == "off_topic"


@pytest.mark.parametrize("question", PROSE)
def test_every_evidence_is_a_sentence_of_the_answer(question: dict) -> None:
    for answer in (question["labelled_answers"][name] for name in ("strong", "weak", "honest_short")):
        for c in grade(question, answer).details["criteria"]:
            assert all(quoted in sentences(answer) for quoted in c["evidence"])
