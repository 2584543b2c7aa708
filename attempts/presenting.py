"""Words and shapes the pages show a candidate: statuses, test outcomes, results and run cases.

One place for them, so the status panel, the submissions table, a submission's tests and a
run's cases always say the same thing the same way, and never show internals.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from attempts.presenting_written import not_scored_words, written_view
from evaluation.languages import DEFAULT_LANGUAGE, LANGUAGES

# What a candidate reads for each state of an attempt or a submission.
STATUS_WORDS = {
    "draft": "Not submitted",
    "queued": "Waiting to be graded",
    "processing": "Being graded",
    "completed": "Graded",
    "failed": "Could not be graded",
    "superseded": "Replaced by a newer answer",
}

OUTCOME_WORDS = {
    "passed": "Passed",
    "failed": "Wrong answer",
    "error": "Error",
    "timeout": "Time limit",
    "memory": "Memory limit",
    "output_limit": "Too much output",
    "not_run": "Not run",
    "ran": "Ran",
}
GOOD_OUTCOMES = ("passed", "ran")

STOP_WORDS = {
    "timeout": "was still running when the time limit ran out",
    "memory": "ran out of memory",
    "output_limit": "printed too much",
    "crashed": "made the program stop",
}

# Details of a coding result that the tests table already shows; anything else is listed.
SHOWN_DETAILS = (
    *("tests", "criteria", "passed", "total", "load_error", "stopped", "mode", "language", "time"),
    *("grader", "follow_up", "practise_next", "insights"),
)


def status_word(status: str) -> str:
    return STATUS_WORDS.get(status, status.replace("_", " ").capitalize())


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)


def percent(score: Any, max_score: Any) -> float | None:
    try:
        return max(0.0, min(100.0, float(score) / float(max_score) * 100))
    except (TypeError, ValueError, ZeroDivisionError):
        return None


def written(json_text: str, language: Any) -> str:
    """Values written in JSON (a row's input, expected or got) in `language`'s notation, so the
    examples, a run's cases and a result's tests write a value the same way; an unknown
    language leaves them as JSON."""
    found = LANGUAGES.get(language) if isinstance(language, str) else None
    return found.written(json_text) if found else json_text


def examples_view(examples: Any, *, tests: Any = None, language: str = DEFAULT_LANGUAGE) -> list[list[tuple[str, str]]]:
    """Examples as (label, text) rows: the bank writes {input, output, explanation?}, but
    anything else it may hold is shown as text rather than dropped or rendered as markup.

    The bank writes an example's values in Python. Where the example is the question's visible
    test of the same place (`tests`: the spec's tests), its values are that test's, written
    in `language`'s notation with the parameters named as that language's entry point names them."""
    if not isinstance(examples, list):
        return []
    visible = [t for t in tests if isinstance(t, dict) and t.get("visible")] if isinstance(tests, list) else []
    order = {"input": 0, "output": 1, "explanation": 2}
    rows = []
    for position, example in enumerate(examples):
        if isinstance(example, dict):
            test = visible[position] if position < len(visible) else None
            example = _example_in(example, test, language) if test is not None else example
            items = sorted(example.items(), key=lambda item: order.get(item[0], len(order)))
            rows.append([(str(key).replace("_", " ").capitalize(), as_text(value)) for key, value in items])
        else:
            rows.append([("Example", as_text(example))])
    return rows


def _example_in(example: dict[str, Any], test: dict[str, Any], language: str) -> dict[str, Any]:
    """The example with its input and output taken from `test` and written in `language`, when
    its Python literals are exactly that test's arguments and expected value; else as it is."""

    def as_json(value: Any) -> Any:  # arguments arrive as JSON: tuples are lists
        return [as_json(item) for item in value] if isinstance(value, tuple | list) else value

    text, output = example.get("input"), example.get("output")
    if not isinstance(text, str) or not isinstance(output, str) or language not in LANGUAGES:
        return example
    names = re.findall(r"(?:^|, )([a-z_][a-z0-9_]*) = ", text.strip())
    literals = re.split(r"(?:^|, )[a-z_][a-z0-9_]*\s=\s", text.strip())[1:]
    try:
        args = [as_json(ast.literal_eval(literal)) for literal in literals]
        expected = as_json(ast.literal_eval(output.strip()))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return example
    if not names or args != test.get("args") or expected != test.get("expected"):
        return example
    notation = LANGUAGES[language]
    shown = ", ".join(
        f"{notation.param_name(name)} = {notation.written(json.dumps(arg, ensure_ascii=False))}"
        for name, arg in zip(names, args, strict=True)
    )
    return {**example, "input": shown, "output": notation.written(json.dumps(expected, ensure_ascii=False))}


def case_view(row: dict[str, Any], *, language: Any = None) -> dict[str, Any]:
    """A test of a submission or a case of a run. Only visible ones carry input and values,
    written in the notation of the `language` that ran them."""
    outcome = str(row.get("outcome", ""))
    visible = bool(row.get("visible", True))
    shown = {
        label: written(row[key], language) if key in ("input", "expected", "got") and isinstance(row[key], str)
        else as_text(row[key])
        for key, label in (
            ("input", "Input"),
            ("expected", "Expected"),
            ("got", "Got"),
            ("error", "Error"),
            ("stdout", "Printed"),
        )
        if visible and row.get(key) not in (None, "")
    }  # fmt: skip
    failed = row.get("reference_failed")
    if visible and isinstance(failed, str):  # a custom input the reference answer gives no value for
        shown["Expected"] = (
            f"None: the reference solution fails on this input ({OUTCOME_WORDS.get(failed, failed).lower()}), "
            "so it may be outside the problem's domain; no verdict."
        )
    return {
        "name": as_text(row.get("name", "")),
        "visible": visible,
        "outcome": outcome,
        "outcome_word": OUTCOME_WORDS.get(outcome, outcome.replace("_", " ").capitalize()),
        "good": outcome in GOOD_OUTCOMES,
        "time_ms": row.get("time_ms"),
        "shown": shown,
    }


def load_error_view(error: Any) -> dict[str, Any] | None:
    if not isinstance(error, dict):
        return None
    where = ", ".join(
        f"{label} {error[key]}" for key, label in (("line", "line"), ("column", "column")) if error.get(key)
    )
    return {"message": as_text(error.get("message") or ""), "where": where, "kind": error.get("kind")}


def stopped_view(stopped: Any) -> str | None:
    if not isinstance(stopped, dict) or not stopped.get("test"):
        return None
    what = STOP_WORDS.get(str(stopped.get("reason")), "stopped the run")
    not_run = stopped.get("not_run") or 0
    rest = f"; the {not_run} test{'s' if not_run != 1 else ''} after it did not run" if not_run else ""
    return f"Test “{stopped['test']}” {what}{rest}."


def language_words(language: Any) -> str | None:
    """'Java 17.0.15': the language and version that ran, from {"id", "name", "version"} (a
    submission's `details.language`, a run's `language`); a bare id is shown as it is."""
    if isinstance(language, str):
        language = {"name": language}
    if not isinstance(language, Mapping):
        return None
    name = language.get("name") or language.get("id")
    if not name:
        return None
    version = language.get("version")
    return f"{name} {version}" if version else str(name)


def time_words(time: Any) -> str | None:
    """'812 ms to compile, 45 ms to run', or '24 ms' when nothing was compiled, from
    {"compile_ms", "run_ms", "compile_cached"} (either time may be null). It follows "Ran in
    <language>", so it never says "ran" again."""
    if not isinstance(time, Mapping):
        return None

    def ms(key: str) -> str | None:
        value = time.get(key)
        return f"{value:.0f} ms" if isinstance(value, int | float) and not isinstance(value, bool) else None

    compiled, ran = ms("compile_ms"), ms("run_ms")
    if time.get("compile_cached") is True:  # the same text was compiled before: nothing to wait for
        compiled = "compiled earlier"
    elif compiled:
        compiled = f"{compiled} to compile"
    if not compiled:
        return ran
    return f"{compiled}, {ran} to run" if ran else compiled


def ran_in_words(language: Any, time: Any) -> str | None:
    """'Ran in Python 3.11.2 (24 ms)': what ran an answer or a run, and how long it took."""
    name = language_words(language)
    if name is None:
        return None
    took = time_words(time)
    return f"Ran in {name} ({took})" if took else f"Ran in {name}"


def _score_words(outcome: Any, score: Any, max_score: Any) -> str:
    if outcome == "not_scored" or score is None:
        return "not scored"
    return f"{round(float(score), 2):g}/{round(float(max_score), 2):g}"


def score_change_view(result: dict[str, Any]) -> dict[str, Any] | None:
    """ "Your score changed from 6/10 to 8/10 on <date>: <why>", when a regrade changed it."""
    change = result.get("score_change")
    if not isinstance(change, Mapping):
        return None
    return {
        "previous": _score_words(
            change.get("previous_outcome"), change.get("previous_score"), change.get("previous_max_score")
        ),
        "current": _score_words(result.get("outcome"), result.get("score"), result.get("max_score")),
        "changed_at": change.get("changed_at"),
        "reason": change.get("reason") or "",
    }


def result_view(result: dict[str, Any] | None, *, answer: str | None = None) -> dict[str, Any] | None:
    """The latest result, shaped for the template: per-test rows (coding), per-criterion rows
    with the answer's evidence marked in `answer` (written answers) and any other detail as
    label/value pairs, so a new evaluator's details still show. A result that is not scored
    carries no score to show, only why."""
    if result is None:
        return None
    details = result.get("details") if isinstance(result.get("details"), dict) else {}
    ran_in = details.get("language")
    language = ran_in.get("id") if isinstance(ran_in, Mapping) else ran_in
    tests = [case_view(row, language=language) for row in details.get("tests") or [] if isinstance(row, dict)]
    # A score is null exactly when the result is not scored (the database's check says so).
    not_scored = result.get("outcome") == "not_scored" or result.get("score") is None
    written = written_view(details, answer)
    others = [
        (key.replace("_", " ").capitalize(), as_text(value))
        for key, value in details.items()
        if key not in SHOWN_DETAILS and value not in (None, "", [], {})
    ]
    return {
        "not_scored": not_scored,
        "not_scored_words": not_scored_words(result.get("reason")) if not_scored else None,
        "score": None if not_scored else result.get("score"),
        "max_score": result.get("max_score"),
        "percent": None if not_scored else percent(result.get("score"), result.get("max_score")),
        "ran_in": ran_in_words(details.get("language"), details.get("time")),
        "feedback": result.get("feedback") or "",
        "score_change": score_change_view(result),
        "load_error": load_error_view(details.get("load_error")),
        "stopped": stopped_view(details.get("stopped")),
        "tests": tests,
        "tests_passed": sum(1 for t in tests if t["outcome"] == "passed"),
        **written,
        "others": others,
    }


def run_view(payload: dict[str, Any]) -> dict[str, Any]:
    """A run as its panel shows it: its cases in the same rows as a submission's tests, and the
    language and version that ran them (the worker's, once it has reported; see `run_payload`)."""
    ran_in = payload.get("language")
    language = ran_in.get("id") if isinstance(ran_in, Mapping) else ran_in
    cases = [
        case_view({**row, "visible": True}, language=language)
        for row in payload.get("cases") or []
        if isinstance(row, dict)
    ]
    return {
        "id": payload.get("id"),
        "status": payload.get("status"),
        "done": payload.get("status") in ("completed", "failed"),
        "failed": payload.get("status") == "failed",
        "ran_in": ran_in_words(payload.get("language"), payload.get("time")),
        "load_error": load_error_view(payload.get("load_error")),
        "stopped": stopped_view(payload.get("stopped")),
        "cases": cases,
        "passed": sum(1 for case in cases if case["outcome"] == "passed"),
        "examples": any("Expected" in case["shown"] for case in cases),
    }


def queue_words(queue: Any) -> str | None:
    """'3rd in line, about 5 seconds' from the attempt's queue object (either part may be unknown)."""
    if not isinstance(queue, dict):
        return None
    parts = []
    position = queue.get("position")
    if isinstance(position, int) and position > 0:
        parts.append("next in line" if position == 1 else f"{_ordinal(position)} in line")
    seconds = queue.get("estimated_seconds")
    if isinstance(seconds, int | float) and seconds >= 0:
        rounded = _count(max(1, round(seconds)), "second") if seconds < 90 else _count(round(seconds / 60), "minute")
        parts.append(f"about {rounded}")
    return ", ".join(parts).capitalize() if parts else None


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}{'' if n == 1 else 's'}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
