"""The rubric of a written answer (system design, behavioural): its format, checked with messages that
name the criterion and the field, and the length rule the grader and the answer page share.

    {"criteria": [
        {"id": "result", "title": "...", "weight": 15, "star": "result", "description": "...",
         "examples": ["two or three sentences in the voice of an answer"], "specific": true,
         "missing": "what an answer that meets it says", "follow_up": "a question to ask next"},
        {"id": "length", "title": "...", "weight": 10, "type": "length", "min_words": 150, "max_words": 900},
    ]}

docs/written-answers.md is the authoring guide.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluation.evaluators.base import PermanentEvaluationError
from evaluation.evaluators.written.text import words

CRITERION_TYPES = ("idea", "length")
STAR_PARTS = ("situation", "task", "action", "result")
EXAMPLES_PER_CRITERION = (2, 3)
EXAMPLE_WORDS = (10, 35)
# Fewer words than this is refused as too short, whatever the rubric asks for.
MIN_SCORED_WORDS = 25
# A rubric without a length criterion still has bounds, for the insights and the page.
DEFAULT_LENGTH = (150, 900)
_IDEA_FIELDS = {"id", "title", "weight", "star", "description", "examples", "specific", "missing", "follow_up", "type"}
_LENGTH_FIELDS = {"id", "title", "weight", "type", "min_words", "max_words", "description"}


def _fail(criterion_id: str | None, message: str) -> PermanentEvaluationError:
    where = f"criterion {criterion_id!r}: " if criterion_id else ""
    return PermanentEvaluationError(f"malformed rubric spec: {where}{message}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(criterion: Mapping[str, Any], cid: str, name: str) -> None:
    value = criterion.get(name)
    if not isinstance(value, str) or not value.strip():
        raise _fail(cid, f"'{name}' must be a non-empty string")


def _validate_idea(criterion: Mapping[str, Any], cid: str) -> None:
    if unknown := sorted(set(criterion) - _IDEA_FIELDS):
        raise _fail(cid, f"unknown field {unknown[0]!r}")
    for name in ("description", "missing", "follow_up"):
        _text(criterion, cid, name)
    examples = criterion.get("examples")
    low, high = EXAMPLES_PER_CRITERION
    if not isinstance(examples, list) or not low <= len(examples) <= high:
        raise _fail(cid, f"'examples' must list {low} to {high} sentences in the voice of an answer")
    for index, example in enumerate(examples):
        if not isinstance(example, str) or not EXAMPLE_WORDS[0] <= len(words(example)) <= EXAMPLE_WORDS[1]:
            raise _fail(cid, f"example #{index} must be a sentence of {EXAMPLE_WORDS[0]} to {EXAMPLE_WORDS[1]} words")
    star = criterion.get("star")
    if star is not None and star not in STAR_PARTS:
        raise _fail(cid, f"'star' must be one of {', '.join(STAR_PARTS)}, not {star!r}")
    if not isinstance(criterion.get("specific", False), bool):
        raise _fail(cid, "'specific' must be true or false")


def _validate_length(criterion: Mapping[str, Any], cid: str) -> None:
    if unknown := sorted(set(criterion) - _LENGTH_FIELDS):
        raise _fail(cid, f"unknown field {unknown[0]!r}")
    low, high = criterion.get("min_words"), criterion.get("max_words")
    if not _is_int(low) or low < MIN_SCORED_WORDS:
        raise _fail(cid, f"'min_words' must be an integer of at least {MIN_SCORED_WORDS}")
    if not _is_int(high) or high < low:
        raise _fail(cid, "'max_words' must be an integer no smaller than 'min_words'")


def validate_rubric_spec(spec: Any) -> list[dict[str, Any]]:
    """Return the criteria of a well-formed spec, or raise `PermanentEvaluationError` saying
    exactly what is wrong: a bad rubric is the question's fault and no retry can fix it."""
    if not isinstance(spec, Mapping):
        raise _fail(None, "the spec must be a mapping with a 'criteria' list")
    criteria = spec.get("criteria")
    if not isinstance(criteria, list) or not criteria:
        raise _fail(None, "'criteria' must be a non-empty list")
    seen: set[str] = set()
    lengths = 0
    for index, criterion in enumerate(criteria):
        if not isinstance(criterion, Mapping):
            raise _fail(None, f"criterion #{index} must be a mapping")
        cid = criterion.get("id")
        if not isinstance(cid, str) or not cid:
            raise _fail(None, f"criterion #{index} needs a non-empty string 'id'")
        if cid in seen:
            raise _fail(cid, "duplicate id")
        seen.add(cid)
        _text(criterion, cid, "title")
        weight = criterion.get("weight")
        if not isinstance(weight, int | float) or isinstance(weight, bool) or weight <= 0:
            raise _fail(cid, "'weight' must be a positive number")
        kind = criterion.get("type", "idea")
        if kind == "idea":
            _validate_idea(criterion, cid)
        elif kind == "length":
            _validate_length(criterion, cid)
            lengths += 1
        else:
            raise _fail(cid, f"unknown type {kind!r}; expected one of {', '.join(CRITERION_TYPES)} (or none)")
    if lengths > 1:
        raise _fail(None, "at most one criterion may be of type 'length'")
    if lengths == len(criteria):
        raise _fail(None, "at least one criterion must be an idea with examples, not only a length")
    return [dict(criterion) for criterion in criteria]


def length_rule(spec: Mapping[str, Any]) -> tuple[int, int, int]:
    """(min_scored_words, min_words, max_words): under `min_scored_words` an answer is refused as
    too short; between it and `min_words` it is scored, with partial credit for length."""
    for criterion in spec.get("criteria", []) if isinstance(spec, Mapping) else []:
        if isinstance(criterion, Mapping) and criterion.get("type") == "length":
            return MIN_SCORED_WORDS, int(criterion["min_words"]), int(criterion["max_words"])
    return MIN_SCORED_WORDS, *DEFAULT_LENGTH
