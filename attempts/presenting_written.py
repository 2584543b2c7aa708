"""A written answer's feedback as the page shows it: the candidate's own text with each evidence
sentence marked, per-criterion rows, the next steps and the insights, and the expected length.

Highlighting is done here by splitting the answer around the exact evidence sentences, so the
template escapes every piece as text: nothing from an answer or a result is ever markup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluation.evaluators.written import text as grader_text

# The grader's own idea of a word and of speaking pace, for the page's live count to agree with it.
WORD_PATTERN = grader_text.WORD.pattern
WORDS_PER_MINUTE = grader_text.SPEAKING_WORDS_PER_MINUTE

STAR_WORDS = {"situation": "Situation", "task": "Task", "action": "Action", "result": "Result"}
REASON_WORDS = {
    "blank": "the answer is blank",
    "too_short": "the answer is too short",
    "off_topic": "the answer is off topic",
    "not_english": "the answer is not in English",
}


@dataclass
class Mark:
    """Where one evidence sentence sits in the answer, and which criteria it earned."""

    start: int
    end: int
    labels: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence) and not isinstance(value, bytes):
        return ", ".join(str(item) for item in value)
    return "" if value is None else str(value)


def star_word(star: Any) -> str | None:
    return STAR_WORDS.get(str(star).lower()) if star else None


def _place(answer: str, sentence: str, marks: list[Mark]) -> Mark | None:
    """The first occurrence of `sentence` that overlaps no mark yet; a sentence already marked
    for another criterion shares that mark (one sentence, two labels) rather than moving."""
    for mark in marks:
        if answer[mark.start : mark.end] == sentence:
            return mark
    start = answer.find(sentence)
    while start != -1:
        end = start + len(sentence)
        if all(end <= mark.start or start >= mark.end for mark in marks):
            mark = Mark(start, end)
            marks.append(mark)
            return mark
        start = answer.find(sentence, start + 1)
    return None


def answer_segments(answer: str, criteria: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The answer cut into plain and marked pieces, in order, covering every character once.
    A marked piece carries the labels of the criteria it earned (the STAR part when the
    criterion has one, else its title). An evidence sentence not found verbatim is not marked."""
    marks: list[Mark] = []
    for criterion in criteria:
        title = _text(criterion.get("title") or criterion.get("id") or "Criterion")
        label = star_word(criterion.get("star")) or title
        for sentence in criterion.get("evidence") or []:
            if not isinstance(sentence, str) or not sentence.strip():
                continue
            mark = _place(answer, sentence, marks)
            if mark is not None and title not in mark.titles:
                mark.labels.append(label)
                mark.titles.append(title)
    segments: list[dict[str, Any]] = []
    position = 0
    for mark in sorted(marks, key=lambda m: m.start):
        if mark.start > position:
            segments.append({"text": answer[position : mark.start], "labels": [], "title": ""})
        segments.append({"text": answer[mark.start : mark.end], "labels": mark.labels, "title": "; ".join(mark.titles)})
        position = mark.end
    if position < len(answer):
        segments.append({"text": answer[position:], "labels": [], "title": ""})
    return segments


def criterion_view(row: Mapping[str, Any], answer: str | None) -> dict[str, Any]:
    score = row.get("score")
    scored = isinstance(score, int | float) and not isinstance(score, bool)
    met = row.get("met")
    if met is None and scored:
        met = score >= 1
    evidence = [sentence for sentence in row.get("evidence") or [] if isinstance(sentence, str)]
    return {
        "title": _text(row.get("title") or row.get("id") or "Criterion"),
        "weight": row.get("weight"),
        "percent": max(0.0, min(100.0, float(score) * 100)) if scored else None,
        "met": met,
        "star": star_word(row.get("star")),
        # Quoted under the criterion too; one the answer does not contain verbatim says so.
        "evidence": [{"text": s, "in_answer": answer is None or s in answer} for s in evidence],
        "missing": "" if met else _text(row.get("missing")),
    }


def _counted(rows: Any) -> list[str]:
    if not isinstance(rows, list):
        return []
    return [
        f"{row['word']} ({row['count']}×)"
        for row in rows
        if isinstance(row, Mapping) and isinstance(row.get("word"), str) and isinstance(row.get("count"), int)
    ]


def insights_view(insights: Any) -> dict[str, Any] | None:
    if not isinstance(insights, Mapping):
        return None
    words = insights.get("words")
    minutes = insights.get("speaking_minutes")
    return {
        "words": words if isinstance(words, int) else None,
        "speaking_minutes": minutes if isinstance(minutes, int | float) else None,
        "repeated_words": _counted(insights.get("repeated_words")),
        "filler_words": _counted(insights.get("filler_words")),
    }


def grader_words(grader: Any) -> str | None:
    """'Graded by all-MiniLM-L6-v2 (int8-onnx-2)', plus anything else the grader says of itself
    (that it stood in for the remote grader, say) as text."""
    if not isinstance(grader, Mapping):
        return None
    name = grader.get("model") or grader.get("id")
    if not name:
        return None
    version = grader.get("version")
    words = f"Graded by {name}" + (f" ({version})" if version else "")
    extra = [
        f"{key.replace('_', ' ')}: {value}" for key, value in grader.items() if key not in ("id", "model", "version")
    ]
    return "; ".join([words, *(_text(item) for item in extra)])


def written_view(details: Mapping[str, Any], answer: str | None) -> dict[str, Any]:
    """The prose parts of a result's details; `answer` is the graded submission's text (None
    when the page could not read it: then nothing is highlighted)."""
    rows = [row for row in details.get("criteria") or [] if isinstance(row, Mapping)]
    has_evidence = any(row.get("evidence") for row in rows)
    return {
        "criteria": [criterion_view(row, answer) for row in rows],
        "segments": answer_segments(answer, rows) if answer and has_evidence else [],
        "follow_up": _text(details.get("follow_up")),
        "practise_next": _text(details.get("practise_next")),
        "insights": insights_view(details.get("insights")),
        "grader": grader_words(details.get("grader")),
    }


def not_scored_words(reason: Any) -> str:
    """'Not scored: the answer is too short' (the result's feedback then says why in full)."""
    why = REASON_WORDS.get(str(reason or ""))
    return f"Not scored: {why}" if why else "Not scored"


def length_meter_view(expected: Mapping[str, int] | None) -> dict[str, Any] | None:
    """What the page shows and counts against before a submit: '150-900 words, about 1-7
    minutes to say', 'Answers under 25 words are not scored.', and, for the live count, the
    bounds, the grader's word pattern and speaking pace."""
    if not expected:
        return None
    low = max(1, round(expected["min"] / WORDS_PER_MINUTE))
    high = max(low, round(expected["max"] / WORDS_PER_MINUTE))
    if low == high:
        minutes = f"about {low} minute{'' if low == 1 else 's'}"
    else:
        minutes = f"about {low}-{high} minutes"
    return {
        **expected,
        "expected": f"{expected['min']}-{expected['max']} words, {minutes} to say",
        "minimum": f"Answers under {expected['min_scored']} words are not scored.",
        "word_pattern": WORD_PATTERN,
        "words_per_minute": WORDS_PER_MINUTE,
    }
