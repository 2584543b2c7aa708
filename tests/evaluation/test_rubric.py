"""The rubric evaluator: scoring, explanations, and every rubric question of the bank."""

from __future__ import annotations

import pytest

from evaluation.evaluators import EvaluationRequest, PermanentEvaluationError, get_evaluator
from evaluation.evaluators.rubric import RubricEvaluator, stem
from tests.questions.bank import bank_questions

pytestmark = pytest.mark.nodb

RUBRIC_QUESTIONS = bank_questions("system_design") + bank_questions("behavioral")

OFF_TOPIC_ANSWERS = {
    "cooking": (
        "To make a good tomato sauce, warm olive oil in a heavy pan over a low flame. Add a chopped onion "
        "and two cloves of garlic and let them soften slowly, stirring now and then. Pour in a tin of crushed "
        "tomatoes, a pinch of salt, a little sugar and a handful of torn basil leaves. Let the sauce simmer "
        "gently for half an hour until it thickens, then taste it and adjust the seasoning. Serve it over "
        "fresh pasta with grated cheese. Leftover sauce keeps in the fridge for three days and freezes well "
        "for a month."
    ),
    "holiday": (
        "Last summer we spent two weeks walking the coast of Portugal. Every morning we packed our bags, "
        "ate bread and fruit on the terrace and followed the cliffs to the next village. The best day was "
        "the hike from the lighthouse to a tiny beach where fishermen were mending their nets, and we swam "
        "until the sun went down. In the evenings we ate grilled sardines and talked about where to go next "
        "year. I would recommend comfortable shoes, a light rain jacket and a paper map, because the phone "
        "signal disappears in the valleys."
    ),
}

SPEC = {
    "criteria": [
        {
            "id": "scaling",
            "title": "Scaling",
            "weight": 3,
            "description": "Covers sharding and replication.",
            "why": "One machine is not enough.",
            "concepts": {"sharding": ["shard", "partition"], "replication": ["replica", "failover"]},
        },
        {
            "id": "cache",
            "title": "Caching",
            "weight": 1,
            "description": "Caches hot reads.",
            "concepts": {"caching": ["cache", "cdn"], "eviction": ["lru", "eviction"]},
            "required": 1,
        },
        {
            "id": "length",
            "title": "Length",
            "weight": 1,
            "description": "Enough words.",
            "type": "length",
            "min_words": 10,
            "max_words": 40,
        },
    ]
}


def evaluate(answer: str, spec: dict | None = None, kind: str = "system_design"):
    request = EvaluationRequest(
        question_slug="q", question_kind=kind, prompt="p", spec=SPEC if spec is None else spec, answer=answer
    )
    return RubricEvaluator().evaluate(request)


def criterion(outcome, cid: str) -> dict:
    return next(c for c in outcome.details["criteria"] if c["id"] == cid)


def test_registry_returns_the_rubric_evaluator() -> None:
    evaluator = get_evaluator("rubric")
    assert isinstance(evaluator, RubricEvaluator)
    assert evaluator.name == "rubric"


def test_full_answer_scores_the_weighted_maximum() -> None:
    outcome = evaluate("We shard the users table, keep a replica per shard and cache hot rows in Redis with LRU.")
    assert outcome.score == 100 and outcome.max_score == 100
    assert all(c["met"] for c in outcome.details["criteria"])
    assert outcome.details["word_count"] == 18


def test_partial_answer_scores_the_weighted_sum_and_explains_what_is_missing() -> None:
    outcome = evaluate("Partitioning the data across many nodes keeps each node small and simple to run well.")

    scaling = criterion(outcome, "scaling")
    assert scaling["score"] == 0.5 and not scaling["met"]
    assert scaling["found"] == ["sharding"]
    assert scaling["missing"] == ["replication"]
    assert "replication" in scaling["explanation"] and "One machine is not enough." in scaling["explanation"]
    assert criterion(outcome, "cache")["score"] == 0
    assert "caching" in criterion(outcome, "cache")["explanation"]
    # scaling 3 * 0.5 + cache 0 + length 1 * 1, out of 5.
    assert outcome.score == pytest.approx(50.0)
    assert "Caching" in outcome.feedback and "To improve" in outcome.feedback


def test_matching_is_case_insensitive_and_stemmed() -> None:
    outcome = evaluate("SHARDED tables, REPLICAS everywhere, CACHING at the edge, a few more words here.")
    assert criterion(outcome, "scaling")["found"] == ["sharding", "replication"]
    assert criterion(outcome, "cache")["met"]


def test_matching_respects_word_boundaries() -> None:
    outcome = evaluate("A cachet of sharpened replicants, written in words that match nothing at all here.")
    assert criterion(outcome, "scaling")["found"] == []
    assert criterion(outcome, "cache")["found"] == []


@pytest.mark.parametrize(
    ("word", "forms"),
    [
        ("shard", ["shards", "sharded", "sharding"]),
        ("cache", ["caches", "cached", "caching"]),
        ("queue", ["queues", "queued", "queueing"]),
        ("ship", ["shipped", "shipping"]),
        ("retry", ["retries"]),
        ("call", ["called", "calling", "calls"]),
    ],
)
def test_stemmer_joins_word_forms(word: str, forms: list[str]) -> None:
    assert {stem(form) for form in forms} == {stem(word)}


def test_regex_phrases_match_numbers() -> None:
    spec = {
        "criteria": [
            {
                "id": "n",
                "title": "Numbers",
                "weight": 1,
                "description": "Quantifies.",
                "concepts": {"percentage": [r"re:\b\d+(\.\d+)?\s?%"]},
            }
        ]
    }
    assert evaluate("Latency dropped by 35% after the change.", spec).score == 100
    assert evaluate("Latency dropped a lot after the change.", spec).score == 0


def test_length_bounds_reward_depth_and_penalise_rambling() -> None:
    spec = {
        "criteria": [
            {
                "id": "length",
                "title": "Length",
                "weight": 1,
                "description": "d",
                "type": "length",
                "min_words": 10,
                "max_words": 20,
            }
        ]
    }
    assert evaluate("one two three four five", spec).score == 50
    assert evaluate(" ".join(["word"] * 15), spec).score == 100
    assert evaluate(" ".join(["word"] * 30), spec).score == 50
    assert evaluate(" ".join(["word"] * 45), spec).score == 0
    short = criterion(evaluate("one two", spec), "length")
    assert short["missing"] == ["at least 10 words"] and "2 words" in short["explanation"]


@pytest.mark.parametrize("answer", ["", "   \n\t  "])
def test_empty_answer_scores_zero_with_a_message(answer: str) -> None:
    outcome = evaluate(answer)
    assert outcome.score == 0 and outcome.max_score == 100
    assert "empty" in outcome.feedback
    assert outcome.details["word_count"] == 0
    assert all(not c["met"] for c in outcome.details["criteria"])


def _one(**fields: object) -> dict:
    base = {"id": "a", "title": "t", "weight": 1, "description": "d", "concepts": {"a": ["b"]}}
    return {"criteria": [{k: v for k, v in (base | fields).items() if v is not None}]}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({}, "'criteria' must be a non-empty list"),
        ([], "must be a mapping"),
        ({"criteria": "all of them"}, "'criteria' must be a non-empty list"),
        (_one(id=None), "needs a non-empty string 'id'"),
        (_one(weight=-1), "'weight' must be a positive number"),
        (_one(weight=True), "'weight' must be a positive number"),
        (_one(concepts={}), "'concepts' must be a non-empty mapping"),
        (_one(concepts={"a": "b"}), "must list its phrases"),
        (_one(concepts={"a": ["re:("]}), "bad pattern"),
        (_one(required=2), "'required' must be an integer from 1 to 1"),
        (_one(type="vibes"), "unknown type 'vibes'"),
        (_one(type="length", min_words=50, max_words=10), "'max_words'"),
        (_one(description=""), "'description' must be a non-empty string"),
        ({"criteria": _one()["criteria"] * 2}, "duplicate id"),
    ],
)
def test_malformed_spec_is_a_permanent_error(spec: object, message: str) -> None:
    with pytest.raises(PermanentEvaluationError, match="malformed rubric spec") as caught:
        evaluate("some answer", spec)  # type: ignore[arg-type]
    assert message in str(caught.value)


@pytest.mark.parametrize("question", RUBRIC_QUESTIONS, ids=lambda q: q["slug"])
def test_reference_answer_scores_high(question: dict) -> None:
    outcome = evaluate(question["reference_answer"], question["evaluation_spec"], question["kind"])
    assert outcome.score >= 80, outcome.feedback


@pytest.mark.parametrize("question", RUBRIC_QUESTIONS, ids=lambda q: q["slug"])
@pytest.mark.parametrize("topic", sorted(OFF_TOPIC_ANSWERS))
def test_off_topic_answer_scores_low_and_says_what_is_missing(question: dict, topic: str) -> None:
    outcome = evaluate(OFF_TOPIC_ANSWERS[topic], question["evaluation_spec"], question["kind"])

    assert outcome.score <= 20, outcome.feedback
    for result in outcome.details["criteria"]:
        if not result["met"]:
            assert result["missing"], result
            assert all(missing in result["explanation"] for missing in result["missing"] if "words" not in missing)


@pytest.mark.parametrize("question", RUBRIC_QUESTIONS, ids=lambda q: q["slug"])
def test_first_paragraph_alone_scores_between_nothing_and_the_reference(question: dict) -> None:
    spec, kind = question["evaluation_spec"], question["kind"]
    first_paragraph = question["reference_answer"].split("\n\n")[0]
    partial = evaluate(first_paragraph, spec, kind).score
    assert evaluate(OFF_TOPIC_ANSWERS["cooking"], spec, kind).score < partial
    assert partial < evaluate(question["reference_answer"], spec, kind).score


@pytest.mark.parametrize("question", RUBRIC_QUESTIONS, ids=lambda q: q["slug"])
def test_every_criterion_describes_itself_for_a_model_grader(question: dict) -> None:
    for result in question["evaluation_spec"]["criteria"]:
        assert {"id", "title", "weight", "description"} <= set(result)
        assert len(result["description"].split()) >= 8
