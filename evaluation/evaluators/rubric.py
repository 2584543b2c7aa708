"""Scores prose answers (system design, behavioural) against a question's weighted rubric.

The rubric lives in the question's `evaluation_spec` and is plain data, so the remote model
evaluator can send the very same criteria to a model. Matching is deliberately simple and
explainable: case-insensitive, on word boundaries, after a light suffix-stripping stemmer, so
"shard", "sharded" and "sharding" all count and "cachet" never counts as "cache". Every point
given or withheld is traceable to a phrase in the answer or to its absence.

Spec format (see `questions/README.md` for the authoring guide)::

    {"criteria": [
        {"id": "scaling", "title": "Scaling the write path", "weight": 20,
         "description": "What the answer must show, in words a human or a model can judge.",
         "why": "Why it matters; quoted when it is missing.",
         "type": "concepts",                         # the default
         "concepts": {"sharding": ["shard", "partition", "consistent hashing"], ...},
         "required": 2},                             # concepts needed for full marks
        {"id": "length", "title": "Depth", "weight": 10, "description": "...",
         "type": "length", "min_words": 150, "max_words": 900},
    ]}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from evaluation.evaluators.base import (
    EvaluationOutcome,
    EvaluationRequest,
    PermanentEvaluationError,
)

MAX_SCORE = 100.0
REGEX_PREFIX = "re:"
CRITERION_TYPES = ("concepts", "length")

# Apostrophes are dropped rather than split on, so "didn't" is one token, not "didn" + "t".
_APOSTROPHES = re.compile(r"['\u2019]")
_TOKEN = re.compile(r"[a-z0-9]+")
# Doubled final consonants left by "-ing"/"-ed" ("shipped" -> "shipp") are undoubled, except
# these, whose doubling is part of the word ("called", "passed", "buzzed").
_KEEP_DOUBLE = frozenset("lsz")


def stem(token: str) -> str:
    """A light stemmer: enough to join plurals and verb forms, never so eager that unrelated
    words collide. Applied identically to answers and to rubric phrases."""
    word = token
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    stripped = False
    if len(word) >= 6 and word.endswith("ing"):
        word, stripped = word[:-3], True
    elif len(word) >= 5 and word.endswith("ed"):
        word, stripped = word[:-2], True
    if stripped and len(word) > 2 and word[-1] == word[-2] and word[-1] not in _KEEP_DOUBLE:
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(_APOSTROPHES.sub("", text.lower()))


def _stemmed_line(text: str) -> str:
    # Padded with spaces so a substring test on " phrase " is a whole-word, whole-phrase test.
    return " " + " ".join(stem(token) for token in tokenize(text)) + " "


@lru_cache(maxsize=4096)
def _compile_phrase(phrase: str) -> re.Pattern[str] | str:
    if phrase.startswith(REGEX_PREFIX):
        return re.compile(phrase[len(REGEX_PREFIX) :], re.IGNORECASE)
    return _stemmed_line(phrase)


@dataclass(frozen=True)
class _Answer:
    raw: str
    stemmed: str
    word_count: int

    @classmethod
    def of(cls, text: str) -> _Answer:
        return cls(raw=text, stemmed=_stemmed_line(text), word_count=len(tokenize(text)))

    def first_match(self, phrases: list[str]) -> str | None:
        for phrase in phrases:
            compiled = _compile_phrase(phrase)
            if isinstance(compiled, str):
                if compiled.strip() and compiled in self.stemmed:
                    return phrase
            elif compiled.search(self.raw):
                return phrase
        return None


def _fail(criterion_id: str | None, message: str) -> PermanentEvaluationError:
    where = f"criterion {criterion_id!r}: " if criterion_id else ""
    return PermanentEvaluationError(f"malformed rubric spec: {where}{message}")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _validate_concepts(criterion: Mapping[str, Any], cid: str) -> None:
    concepts = criterion.get("concepts")
    if not isinstance(concepts, Mapping) or not concepts:
        raise _fail(cid, "'concepts' must be a non-empty mapping of concept -> list of phrases")
    for label, phrases in concepts.items():
        if not isinstance(label, str) or not label.strip():
            raise _fail(cid, "every concept needs a non-empty name")
        if not isinstance(phrases, list) or not all(isinstance(p, str) and p for p in phrases):
            raise _fail(cid, f"concept {label!r} must list its phrases as non-empty strings")
        for phrase in phrases:
            if phrase.startswith(REGEX_PREFIX):
                try:
                    _compile_phrase(phrase)
                except re.error as exc:
                    raise _fail(cid, f"concept {label!r} has a bad pattern {phrase!r}: {exc}") from exc
            elif not tokenize(phrase):
                raise _fail(cid, f"concept {label!r} has a phrase with no words: {phrase!r}")
    required = criterion.get("required", len(concepts))
    if not isinstance(required, int) or isinstance(required, bool) or not 1 <= required <= len(concepts):
        raise _fail(cid, f"'required' must be an integer from 1 to {len(concepts)}")


def _validate_length(criterion: Mapping[str, Any], cid: str) -> None:
    low, high = criterion.get("min_words"), criterion.get("max_words")
    if not isinstance(low, int) or isinstance(low, bool) or low < 0:
        raise _fail(cid, "'min_words' must be a non-negative integer")
    if high is not None and (not isinstance(high, int) or isinstance(high, bool) or high < low):
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
    for index, criterion in enumerate(criteria):
        if not isinstance(criterion, Mapping):
            raise _fail(None, f"criterion #{index} must be a mapping")
        cid = criterion.get("id")
        if not isinstance(cid, str) or not cid:
            raise _fail(None, f"criterion #{index} needs a non-empty string 'id'")
        if cid in seen:
            raise _fail(cid, "duplicate id")
        seen.add(cid)
        for text_field in ("title", "description"):
            if not isinstance(criterion.get(text_field), str) or not criterion[text_field].strip():
                raise _fail(cid, f"'{text_field}' must be a non-empty string")
        weight = criterion.get("weight")
        if not _is_number(weight) or weight <= 0:
            raise _fail(cid, "'weight' must be a positive number")
        kind = criterion.get("type", "concepts")
        if kind == "concepts":
            _validate_concepts(criterion, cid)
        elif kind == "length":
            _validate_length(criterion, cid)
        else:
            raise _fail(cid, f"unknown type {kind!r}; expected one of {', '.join(CRITERION_TYPES)}")
    return [dict(criterion) for criterion in criteria]


def _join(items: list[str]) -> str:
    return ", ".join(items)


def _score_concepts(criterion: dict[str, Any], answer: _Answer) -> dict[str, Any]:
    concepts: Mapping[str, list[str]] = criterion["concepts"]
    required: int = criterion.get("required", len(concepts))
    found: list[str] = []
    evidence: dict[str, str] = {}
    missing: list[str] = []
    for label, phrases in concepts.items():
        # The concept's own name counts as one of its phrases, so authors need not repeat it.
        hit = answer.first_match([label, *phrases])
        if hit is None:
            missing.append(label)
        else:
            found.append(label)
            evidence[label] = hit
    score = min(1.0, len(found) / required)
    met = len(found) >= required
    why = criterion.get("why") or criterion["description"]
    if met:
        explanation = f"Covered {_join(found)}."
        if missing:
            explanation += f" Could also mention {_join(missing)}."
    else:
        shortfall = required - len(found)
        covered = f"Covered {_join(found)}; " if found else "Nothing on this yet; "
        explanation = f"{covered}needs {shortfall} more of: {_join(missing)}. {why}"
    return {
        "score": round(score, 4),
        "met": met,
        "found": found,
        "missing": missing,
        "evidence": evidence,
        "required": required,
        "explanation": explanation,
    }


def _score_length(criterion: dict[str, Any], answer: _Answer) -> dict[str, Any]:
    low: int = criterion["min_words"]
    high: int | None = criterion.get("max_words")
    words = answer.word_count
    why = criterion.get("why") or criterion["description"]
    if words < low:
        score = words / low if low else 1.0
        explanation = f"{words} words; at least {low} are needed to show enough depth. {why}"
        missing = [f"at least {low} words"]
    elif high is not None and words > high:
        # Over-long answers lose credit gradually, reaching zero at twice the limit.
        score = max(0.0, 1.0 - (words - high) / high)
        explanation = f"{words} words; keep it under {high}: an interviewer stops listening. {why}"
        missing = [f"at most {high} words"]
    else:
        score = 1.0
        bounds = f"{low}-{high}" if high is not None else f"{low}+"
        explanation = f"{words} words, within the expected {bounds}."
        missing = []
    return {
        "score": round(score, 4),
        "met": score >= 1.0,
        "found": [f"{words} words"],
        "missing": missing,
        "explanation": explanation,
    }


class RubricEvaluator:
    name: ClassVar[str] = "rubric"

    def evaluate(self, request: EvaluationRequest) -> EvaluationOutcome:
        criteria = validate_rubric_spec(request.spec)
        total_weight = float(sum(criterion["weight"] for criterion in criteria))
        answer = _Answer.of(request.answer or "")

        if answer.word_count == 0:
            return EvaluationOutcome(
                score=0.0,
                max_score=MAX_SCORE,
                feedback="The answer is empty, so nothing could be scored. Write out your answer and submit again.",
                details={
                    "criteria": [
                        {
                            "id": c["id"],
                            "title": c["title"],
                            "weight": c["weight"],
                            "score": 0.0,
                            "met": False,
                            "found": [],
                            "missing": list(c.get("concepts", {})) or ["an answer"],
                            "explanation": "No answer was given.",
                        }
                        for c in criteria
                    ],
                    "word_count": 0,
                },
            )

        results: list[dict[str, Any]] = []
        weighted = 0.0
        for criterion in criteria:
            if criterion.get("type", "concepts") == "length":
                scored = _score_length(criterion, answer)
            else:
                scored = _score_concepts(criterion, answer)
            weighted += criterion["weight"] * scored["score"]
            results.append({"id": criterion["id"], "title": criterion["title"], "weight": criterion["weight"]} | scored)

        score = round(min(MAX_SCORE, MAX_SCORE * weighted / total_weight), 1)
        return EvaluationOutcome(
            score=score,
            max_score=MAX_SCORE,
            feedback=_feedback(score, results),
            details={"criteria": results, "word_count": answer.word_count},
        )


def _feedback(score: float, results: list[dict[str, Any]]) -> str:
    strong = [r["title"] for r in results if r["met"]]
    weak = sorted((r for r in results if not r["met"]), key=lambda r: -r["weight"] * (1 - r["score"]))
    lines = [f"Score {score:g}/{MAX_SCORE:g}."]
    if strong:
        lines.append(f"Strong: {_join(strong)}.")
    if weak:
        lines.append("To improve:")
        lines.extend(f"- {r['title']}: {r['explanation']}" for r in weak)
    else:
        lines.append("Every criterion was met.")
    return "\n".join(lines)
