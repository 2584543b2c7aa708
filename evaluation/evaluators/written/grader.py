"""The written-answer grader: it scores ideas, not words.

Each criterion carries example sentences in the voice of an answer. Every sentence of the answer
that can carry an idea (the density gate in text.py) is compared with every example by the
embedding model; a sentence earns at most one criterion, and each criterion is earned by one
sentence, the pairing that earns the most weighted credit (exact, not greedy: greedy pairing let a
sentence that fits two criteria take the wrong one). A criterion marked `specific` gives at most half its
credit to a sentence with no number or quantity in it. Repeating terms therefore earns nothing:
lists and short sentences are gated out, and one sentence cannot collect several criteria.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from evaluation.evaluators.base import EvaluationOutcome
from evaluation.evaluators.written import refusals
from evaluation.evaluators.written.spec import length_rule, validate_rubric_spec
from evaluation.evaluators.written.text import carries_an_idea, insights, is_specific, sentences, words

MAX_SCORE = 100.0
# A criterion counts as met from this share of its credit.
MET_FROM = 0.6
# Without a number, a sentence earns a `specific` criterion at most this share of its credit.
UNSPECIFIC_CAP = 0.5


class Embeds(Protocol):
    def embed(self, texts: list[str], *, remember: bool = False) -> np.ndarray: ...


class Thresholds(Protocol):
    earn_from: float
    earn_full: float
    on_topic: float


@dataclass(frozen=True)
class _Idea:
    criterion: dict[str, Any]
    examples: np.ndarray  # one row per example sentence


def _credit(similarity: float, thresholds: Thresholds) -> float:
    span = thresholds.earn_full - thresholds.earn_from
    return float(min(1.0, max(0.0, (similarity - thresholds.earn_from) / span)))


def _gains(ideas: list[_Idea], sentence_texts: list[str], vectors: np.ndarray, thresholds: Thresholds) -> np.ndarray:
    """credit[sentence, criterion] for every pair."""
    credit = np.zeros((len(sentence_texts), len(ideas)))
    for c_index, idea in enumerate(ideas):
        similarity = (vectors @ idea.examples.T).max(axis=1)
        for s_index, sim in enumerate(similarity):
            credit[s_index, c_index] = _credit(float(sim), thresholds)
            if idea.criterion.get("specific") and not is_specific(sentence_texts[s_index]):
                credit[s_index, c_index] = min(credit[s_index, c_index], UNSPECIFIC_CAP)
    return credit


def _assign(credit: np.ndarray, weights: np.ndarray) -> dict[int, int]:
    """criterion index -> sentence index, maximising the weighted credit with each sentence earning
    at most one criterion and each criterion earned once. Exact, by dynamic programming over the
    set of criteria already earned (a rubric has a handful), one sentence at a time."""
    sentences_count, criteria_count = credit.shape
    states = 1 << criteria_count
    best = np.full(states, -np.inf)
    best[0] = 0.0
    choices = np.full((sentences_count, states), -1, dtype=np.int16)
    masks = np.arange(states)
    for s_index in range(sentences_count):
        after = best.copy()
        for c_index in range(criteria_count):
            gain = credit[s_index, c_index] * weights[c_index]
            if gain <= 0:
                continue
            bit = 1 << c_index
            free = masks[(masks & bit) == 0]
            candidate = best[free] + gain
            target = free | bit
            better = candidate > after[target]
            after[target[better]] = candidate[better]
            choices[s_index, target[better]] = c_index
        best = after
    assigned: dict[int, int] = {}
    state = int(np.argmax(best))
    for s_index in range(sentences_count - 1, -1, -1):
        c_index = int(choices[s_index, state])
        if c_index >= 0:
            assigned[c_index] = s_index
            state ^= 1 << c_index
    return assigned


def _length_score(idea_words: int, low: int, high: int) -> float:
    if idea_words < low:
        return idea_words / low
    if idea_words > high:
        # Over-long answers lose credit gradually, reaching zero at twice the limit.
        return max(0.0, 1.0 - (idea_words - high) / high)
    return 1.0


def _criterion_result(criterion: Mapping[str, Any], score: float, evidence: list[str], missing: str) -> dict[str, Any]:
    met = score >= MET_FROM
    return {
        "id": criterion["id"],
        "title": criterion["title"],
        "weight": criterion["weight"],
        "score": round(score, 3),
        "met": met,
        "evidence": evidence,
        "missing": None if met else missing,
        "star": criterion.get("star"),
    }


def prose_grade(
    *, spec: Mapping[str, Any], prompt: str, answer: str, model: Embeds, thresholds: Thresholds, grader: dict[str, Any]
) -> EvaluationOutcome:
    criteria = validate_rubric_spec(spec)
    text = answer or ""
    said = insights(text)
    min_scored, low, high = length_rule(spec)
    refusal = refusals.refusal_by_text(text, min_scored_words=min_scored, min_words=low, max_words=high)
    if refusal is not None:
        return refusals.not_scored(refusal, max_score=MAX_SCORE, grader=grader, insights=said)

    all_sentences = sentences(text)
    idea_sentences = [s for s in all_sentences if carries_an_idea(s)]
    idea_criteria = [c for c in criteria if c.get("type", "idea") != "length"]
    examples = [e for c in idea_criteria for e in c["examples"]]
    reference = model.embed(examples + sentences(prompt), remember=True)
    answer_vectors = model.embed(all_sentences)
    closest = float((answer_vectors @ reference.T).max()) if len(answer_vectors) else 0.0
    if closest < thresholds.on_topic:
        refusal = refusals.Refusal("off_topic", refusals.off_topic_message())
        return refusals.not_scored(refusal, max_score=MAX_SCORE, grader=grader, insights=said)

    ideas, start = [], 0
    for criterion in idea_criteria:
        count = len(criterion["examples"])
        ideas.append(_Idea(criterion, reference[start : start + count]))
        start += count
    idea_vectors = answer_vectors[[i for i, s in enumerate(all_sentences) if carries_an_idea(s)]]
    credit = _gains(ideas, idea_sentences, idea_vectors, thresholds)
    assigned = _assign(credit, np.array([float(i.criterion["weight"]) for i in ideas]))
    idea_words = sum(len(words(s)) for s in idea_sentences)

    results: list[dict[str, Any]] = []
    for criterion in criteria:
        if criterion.get("type") == "length":
            missing = f"Aim for {low} to {high} words of explanation; {idea_words} of yours carried an idea."
            results.append(_criterion_result(criterion, _length_score(idea_words, low, high), [], missing))
        else:
            c_index = next(i for i, idea in enumerate(ideas) if idea.criterion["id"] == criterion["id"])
            s_index = assigned.get(c_index)
            earned = 0.0 if s_index is None else float(credit[s_index, c_index])
            evidence = [] if s_index is None else [idea_sentences[s_index]]
            results.append(_criterion_result(criterion, earned, evidence, criterion["missing"]))
    total_weight = float(sum(c["weight"] for c in criteria))
    score = round(min(MAX_SCORE, MAX_SCORE * sum(r["weight"] * r["score"] for r in results) / total_weight), 1)
    follow_up, practise_next = next_steps(results, follow_ups={c["id"]: c["follow_up"] for c in idea_criteria})
    return EvaluationOutcome(
        score=score,
        max_score=MAX_SCORE,
        feedback=_feedback(score, results, practise_next),
        details={
            "grader": grader,
            "criteria": results,
            "follow_up": follow_up,
            "practise_next": practise_next,
            "insights": said.as_dict(),
        },
    )


def next_steps(results: Sequence[dict[str, Any]], *, follow_ups: Mapping[str, str]) -> tuple[str | None, str]:
    """The follow-up question and the next thing to practise, both aimed at the weakest criterion
    (the most weight left unearned) among those with a follow-up."""
    ideas = [r for r in results if r["id"] in follow_ups]
    if not ideas:
        return None, "Practise the answer aloud, within the time an interviewer would give you."
    weakest = max(ideas, key=lambda r: (r["weight"] * (1 - r["score"]), r["weight"]))
    if weakest["met"]:
        practise = "Every criterion was met: practise telling the same answer in fewer words."
    else:
        practise = f"Practise {weakest['title'].lower()}: {weakest['missing']}"
    return follow_ups[weakest["id"]], practise


def _feedback(score: float, results: Sequence[dict[str, Any]], practise_next: str) -> str:
    strong = [r["title"] for r in results if r["met"]]
    weak = sorted((r for r in results if not r["met"]), key=lambda r: -r["weight"] * (1 - r["score"]))
    lines = [f"Score {score:g}/{MAX_SCORE:g}."]
    if strong:
        lines.append(f"Strong: {', '.join(strong)}.")
    if weak:
        lines.append("To improve:")
        lines.extend(f"- {r['title']}: {r['missing']}" for r in weak)
    lines.append(f"Next: {practise_next}")
    return "\n".join(lines)
