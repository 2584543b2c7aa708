"""The code evaluator's verdicts: statuses, comparisons, scores, feedback and what details hide."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import pytest

import evaluation.sandbox.launch as launch
import evaluation.sandbox.modes as modes
from evaluation.evaluators.base import EvaluationOutcome, PermanentEvaluationError
from evaluation.evaluators.code import CodeRunnerEvaluator, answer_matches
from evaluation.sandbox import current_mode, run_harness
from tests.evaluation.sandbox_helpers import (
    TWO_SUM,
    TWO_SUM_SPEC,
    assert_normal_submission_scores,
    request_for,
)

pytestmark = pytest.mark.nodb


def evaluate(answer: str, spec: dict) -> EvaluationOutcome:
    return CodeRunnerEvaluator().evaluate(request_for(answer, spec))


def statuses(outcome: EvaluationOutcome) -> dict[str, str]:
    return {row["name"]: row["status"] for row in outcome.details["tests"]}


def spec_with(function: str, *tests: tuple[str, list, object], **extra: object) -> dict:
    return {
        "function": function,
        "tests": [{"name": n, "args": a, "expected": e} for n, a, e in tests],
        "time_limit_s": 1,
        **extra,
    }


def test_correct_answer_scores_full_marks():
    outcome = evaluate(TWO_SUM, TWO_SUM_SPEC)
    assert outcome.score == 100.0 and outcome.max_score == 100.0
    assert outcome.feedback == "3 of 3 tests passed."
    assert outcome.details["passed"] == 3 and outcome.details["total"] == 3
    assert outcome.details["mode"] == current_mode()
    assert all(isinstance(row["time_ms"], float) for row in outcome.details["tests"])


def test_each_failure_kind_gets_its_own_status():
    answer = """
def solve(kind):
    if kind == "ok":
        print("debug line")
        return 1
    if kind == "wrong":
        return 2
    if kind == "raise":
        raise ValueError("bad input")
    if kind == "memory":
        return len(bytearray(1 << 31))
    if kind == "print":
        while True:
            print("y" * 10000)
    if kind == "set":
        return object()
"""
    spec = spec_with(
        "solve",
        ("passes", ["ok"], 1),
        ("wrong", ["wrong"], 1),
        ("raises", ["raise"], 1),
        ("memory", ["memory"], 1),
        ("prints", ["print"], 1),
        ("not_json", ["set"], 1),
        memory_limit_mb=64,
    )
    outcome = evaluate(answer, spec)
    assert statuses(outcome) == {
        "passes": "passed",
        "wrong": "wrong_answer",
        "raises": "runtime_error",
        "memory": "memory_limit",
        "prints": "output_limit",
        "not_json": "wrong_answer",
    }
    rows = {row["name"]: row for row in outcome.details["tests"]}
    assert rows["passes"]["output"] == "debug line\n"
    assert "ValueError: bad input (line 9)" in rows["raises"]["output"]
    assert len(rows["prints"]["output"]) <= 1024
    assert outcome.score == round(100 / 6, 1)
    assert outcome.feedback.startswith("1 of 6 tests passed; failing: wrong (wrong answer), ")
    assert outcome.feedback.endswith("and 2 more.")


def test_time_limit_marks_the_running_test_and_every_later_one():
    answer = """
def slow(n):
    if n > 1:
        while True:
            pass
    return n
"""
    spec = spec_with("slow", ("a", [1], 1), ("b", [2], 2), ("c", [3], 3), time_limit_s=0.5)
    outcome = evaluate(answer, spec)
    assert statuses(outcome) == {"a": "passed", "b": "time_limit", "c": "time_limit"}
    assert "not run" in outcome.details["tests"][2]["output"]
    assert outcome.score == 33.3


def test_unordered_compare_accepts_any_order_and_sets():
    answer = "def f(xs):\n    return set(xs)\n"
    spec = spec_with("f", ("set", [[3, 1, 2]], [2, 3, 1]), compare="unordered")
    assert evaluate(answer, spec).score == 100.0
    spec = spec_with("f", ("missing", [[3, 1]], [1, 2]), compare="unordered")
    assert statuses(evaluate(answer, spec)) == {"missing": "wrong_answer"}


def test_float_compare_uses_absolute_tolerance_recursively():
    answer = "def f(x):\n    return {'a': [x / 3, x]}\n"
    spec = spec_with("f", ("close", [1.0], {"a": [0.3333333, 1]}), compare="float")
    assert evaluate(answer, spec).score == 100.0
    spec = spec_with("f", ("far", [1.0], {"a": [0.33, 1]}), compare="float")
    assert evaluate(answer, spec).score == 0.0
    spec = spec_with("f", ("exact_needs_exact", [1.0], {"a": [0.3333333, 1]}))
    assert evaluate(answer, spec).score == 0.0


def test_exact_compare_keeps_booleans_apart_from_numbers():
    assert answer_matches(2.0, 2, "exact")
    assert not answer_matches(True, 1, "exact")
    assert not answer_matches([1, 2], [2, 1], "exact")
    assert answer_matches([[1, 2], [0]], [[0], [1, 2]], "unordered")


def test_syntax_error_scores_zero_with_clear_feedback():
    outcome = evaluate("def two_sum(nums, target)\n    return []\n", TWO_SUM_SPEC)
    assert outcome.score == 0
    assert outcome.feedback.startswith("Your code does not compile (SyntaxError")
    assert "line 1" in outcome.feedback
    assert set(statuses(outcome).values()) == {"runtime_error"}


def test_missing_function_scores_zero_with_clear_feedback():
    outcome = evaluate("def twosum(nums, target):\n    return []\n", TWO_SUM_SPEC)
    assert outcome.score == 0
    assert "does not define a function named two_sum" in outcome.feedback


def test_error_at_import_time_scores_zero():
    outcome = evaluate("import nosuchmodule\n", TWO_SUM_SPEC)
    assert outcome.score == 0
    assert "ModuleNotFoundError" in outcome.feedback


def test_standard_library_imports_work_inside_the_box():
    answer = """
import collections, heapq, itertools, functools, math, bisect, re, json, decimal, fractions
import dataclasses, typing, random, string
def f():
    return [json.dumps(sorted(collections.Counter("abca").items())), str(decimal.Decimal(1) / 4)]
"""
    spec = spec_with("f", ("imports", [], ['[["a", 2], ["b", 1], ["c", 1]]', "0.25"]))
    outcome = evaluate(answer, spec)
    assert outcome.score == 100.0, outcome.details


def test_details_never_hold_arguments_or_expected_values():
    answer = "def f(token):\n    return token[::-1]\n"
    spec = spec_with("f", ("hidden", ["ARGUMENT-TOKEN"], "EXPECTED-TOKEN"))
    outcome = evaluate(answer, spec)
    assert outcome.score == 0
    text = repr(outcome.details) + outcome.feedback
    assert "ARGUMENT-TOKEN" not in text and "EXPECTED-TOKEN" not in text
    assert "NEKOT-TNEMUGRA" not in text  # nor the returned value


def test_bad_spec_is_a_permanent_error():
    with pytest.raises(PermanentEvaluationError):
        evaluate(TWO_SUM, {"function": "two_sum", "tests": []})
    with pytest.raises(PermanentEvaluationError):
        evaluate(TWO_SUM, {**TWO_SUM_SPEC, "compare": "fuzzy"})


def test_concurrent_runs_never_share_a_uid(monkeypatch):
    runs = 4
    # Each run waits, holding its slot, until all of them hold one: the boxes are certain to
    # overlap, however slowly each one starts.
    all_held = threading.Barrier(runs)
    real = launch.slot_held

    @contextlib.contextmanager
    def held_together() -> Iterator[int]:
        with real() as slot:
            all_held.wait(timeout=60)
            yield slot

    current_mode()  # the probe's own run must not wait at the barrier
    monkeypatch.setattr(launch, "slot_held", held_together)
    answer = "import os\ndef f():\n    return os.getuid()\n"
    uids: list[object] = []

    def one() -> None:
        run = run_harness(code=answer, function="f", tests_args=[[]], cpu_limit_s=1, memory_limit_mb=64)
        result = run.tests[0]
        uids.append(result.value if result is not None else run.ended)

    threads = [threading.Thread(target=one) for _ in range(runs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(uids) == runs and len(set(uids)) == runs, uids
    assert all(isinstance(uid, int) and 61000 <= uid < 61064 for uid in uids), uids


@pytest.fixture
def refused(monkeypatch):
    monkeypatch.setenv("SANDBOX_MODE", "refused")
    modes.forget_probe()
    yield
    monkeypatch.delenv("SANDBOX_MODE")
    modes.forget_probe()


def test_refused_mode_raises_permanent_error(refused):
    assert current_mode() == "refused"
    with pytest.raises(PermanentEvaluationError, match="refused"):
        evaluate(TWO_SUM, TWO_SUM_SPEC)


def test_forced_weaker_mode_is_used_and_stronger_is_ignored(monkeypatch):
    monkeypatch.setenv("SANDBOX_MODE", "rlimits+uid+seccomp")
    modes.forget_probe()
    try:
        assert current_mode() == "rlimits+uid+seccomp"
        assert_normal_submission_scores("rlimits+uid+seccomp")
        with pytest.raises(PermanentEvaluationError):
            run_harness(
                code="", function="f", tests_args=[], cpu_limit_s=1, memory_limit_mb=64, mode="bwrap+seccomp+landlock"
            )
    finally:
        monkeypatch.delenv("SANDBOX_MODE")
        modes.forget_probe()


def test_probe_runs_once_and_is_cached(monkeypatch):
    calls = []
    real_probe = modes.probe_layers

    def counting_probe():
        calls.append(1)
        return real_probe()

    monkeypatch.setattr(modes, "probe_layers", counting_probe)
    modes.forget_probe()
    first = current_mode()
    assert current_mode() == first and current_mode() == first
    assert len(calls) == 1
