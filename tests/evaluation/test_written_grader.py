"""The written-answer grader on the tests' own question: ideas score, stuffing does not, refusals
say why, feedback quotes the answer, and the rubric format is checked with clear messages."""

from __future__ import annotations

import copy
import re

import pytest

from evaluation.evaluators import EvaluationOutcome, EvaluationRequest, PermanentEvaluationError, get_evaluator
from evaluation.evaluators.rubric import RubricEvaluator
from evaluation.evaluators.written import length_rule, validate_rubric_spec
from evaluation.evaluators.written.calibration import generated_stuffing
from evaluation.evaluators.written.text import insights, sentences
from tests.evaluation import written_questions as W

pytestmark = pytest.mark.nodb


def grade(answer: str, spec: dict | None = None) -> EvaluationOutcome:
    request = EvaluationRequest(
        question_slug="url-shortener",
        question_kind="system_design",
        prompt=W.PROMPT,
        spec=spec or W.SPEC,
        answer=answer,
    )
    return get_evaluator("rubric").evaluate(request)


def criterion(outcome: EvaluationOutcome, cid: str) -> dict:
    return next(c for c in outcome.details["criteria"] if c["id"] == cid)


def test_registry_returns_the_local_grader() -> None:
    assert isinstance(get_evaluator("rubric"), RubricEvaluator)


def test_strong_answer_meets_every_criterion_and_quotes_its_own_sentences() -> None:
    outcome = grade(W.STRONG)
    assert outcome.outcome == "scored" and outcome.score == 100
    assert all(c["met"] and c["missing"] is None for c in outcome.details["criteria"])
    assert criterion(outcome, "expiry")["evidence"] == [
        "Links may carry an expiry date, and a nightly job removes expired links."
    ]
    assert outcome.details["grader"] == {"id": "rubric", "model": "all-MiniLM-L6-v2", "version": "int8-onnx-2"}


def test_strong_beats_honest_short_beats_weak() -> None:
    strong, honest, weak = grade(W.STRONG).score, grade(W.HONEST_SHORT).score, grade(W.WEAK).score
    assert strong > weak and honest > weak


@pytest.mark.parametrize(
    "kind", ["bare_list", "run_on_terms", "one_word_sentences", "short_sentences", "generic_template"]
)
def test_every_kind_of_stuffing_scores_below_the_honest_short_answer(kind: str) -> None:
    outcome = grade(generated_stuffing(W.SPEC)[kind])
    assert outcome.score is None or outcome.score < grade(W.HONEST_SHORT).score


def test_stuffing_is_made_of_the_rubric_examples_own_content_words() -> None:
    stuffing = generated_stuffing(W.SPEC)
    assert stuffing["bare_list"].startswith("new, link, takes, next, value, counter, encode, number, base62, codes")
    assert stuffing["short_sentences"].startswith("I used new there. I used link there.")


def test_every_evidence_is_a_sentence_of_the_answer() -> None:
    for answer in (W.STRONG, W.WEAK, W.HONEST_SHORT):
        for c in grade(answer).details["criteria"]:
            for quoted in c["evidence"]:
                assert quoted in answer and quoted in sentences(answer)


def test_a_missed_criterion_says_what_an_answer_that_meets_it_says() -> None:
    outcome = grade(W.WEAK)
    codes = criterion(outcome, "codes")
    assert codes["met"] is False and codes["evidence"] == []
    assert codes["missing"] == "Say how a short code is generated and why two links can never get the same one."
    assert (
        outcome.details["follow_up"]
        == "What happens to your code generation when two servers create links at the same moment?"
    )
    assert outcome.details["practise_next"].startswith("Practise generating short codes: Say how a short code")


def test_a_result_criterion_needs_a_number() -> None:
    vague = W.HONEST_SHORT.replace(
        "At about a hundred million redirects a day we need roughly twelve hundred reads per\nsecond.",
        "With a great many redirects every day we need to serve a lot of reads each second.",
    )
    assert criterion(grade(W.HONEST_SHORT), "scale")["met"] is True
    scale = criterion(grade(vague), "scale")
    assert scale["met"] is False and scale["score"] <= 0.5


def test_one_sentence_earns_at_most_one_criterion() -> None:
    outcome = grade(W.STRONG)
    quoted = [q for c in outcome.details["criteria"] for q in c["evidence"]]
    assert len(quoted) == len(set(quoted))


@pytest.mark.parametrize(
    ("answer", "reason", "words"),
    [
        ("", "blank", "blank"),
        ("   \n\t ", "blank", "blank"),
        ("I would use a cache and a counter.", "too_short", "at least 25"),
        (W.OFF_TOPIC, "off_topic", "not seem to be about this question"),
        (W.SPANISH, "not_english", "English"),
    ],
    ids=["empty", "whitespace", "too short", "off topic", "spanish"],
)
def test_refusals_are_not_scored_and_say_why(answer: str, reason: str, words: str) -> None:
    outcome = grade(answer)
    assert (outcome.outcome, outcome.score, outcome.reason) == ("not_scored", None, reason)
    assert words in outcome.feedback


def test_insights_count_speaking_time_repetition_and_fillers() -> None:
    said = insights(
        "Basically the cache holds codes. Um, the cache is, like, basically a map, you know, and the cache "
        "holds the codes for a day."
    )
    assert said.words == 24
    assert said.speaking_minutes == 0.2
    assert said.repeated_words == [{"word": "cache", "count": 3}]
    assert said.filler_words == [
        {"word": "basically", "count": 2},
        {"word": "like", "count": 1},
        {"word": "um", "count": 1},
        {"word": "you know", "count": 1},
    ]


def test_length_rule_is_the_rubric_bounds_and_the_refusal_floor() -> None:
    assert length_rule(W.SPEC) == (25, 150, 900)
    no_length = {"criteria": [c for c in W.SPEC["criteria"] if c["id"] != "length"]}
    assert length_rule(no_length) == (25, 150, 900)


def _spec_with(index: int, **changes: object) -> dict:
    spec = copy.deepcopy(W.SPEC)
    spec["criteria"][index].update(changes)
    return spec


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"criteria": []}, "'criteria' must be a non-empty list"),
        (
            _spec_with(0, examples=["Only one example sentence of enough words to count here."]),
            "'examples' must list 2 to 3",
        ),
        (_spec_with(0, examples=["Too short.", "Also too short."]), "example #0 must be a sentence of 10 to 35 words"),
        (_spec_with(0, star="outcome"), "'star' must be one of situation, task, action, result"),
        (_spec_with(0, missing=""), "criterion 'codes': 'missing' must be a non-empty string"),
        (_spec_with(0, concepts={"a": ["b"]}), "unknown field 'concepts'"),
        (_spec_with(4, min_words=10), "'min_words' must be an integer of at least 25"),
        (_spec_with(1, id="codes"), "criterion 'codes': duplicate id"),
    ],
    ids=["no criteria", "one example", "short examples", "bad star", "no missing", "old concepts", "low min", "dup id"],
)
def test_malformed_rubrics_are_refused_with_the_field_named(spec: dict, message: str) -> None:
    with pytest.raises(PermanentEvaluationError, match=re.escape(message)):
        validate_rubric_spec(spec)
    with pytest.raises(PermanentEvaluationError, match=re.escape(message)):
        grade(W.STRONG, spec)
