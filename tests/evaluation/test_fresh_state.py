"""Each test runs the answer in a fresh module: nothing one test leaves behind reaches the next."""

from __future__ import annotations

import pytest

from evaluation.sandbox import BoxRun, run_python

pytestmark = pytest.mark.nodb


def run(answer: str, function: str, tests: int) -> BoxRun:
    args = [[n] for n in range(tests)]
    return run_python(code=answer, function=function, tests_args=args, cpu_limit_s=2, memory_limit_mb=64)


def values(run: BoxRun) -> list[object]:
    assert all(t is not None and t.status == "ok" for t in run.tests), (run.ended, run.tests)
    return [t.value for t in run.tests if t is not None]


def test_a_mutable_default_argument_starts_empty_in_every_test():
    answer = "def f(x, seen=[]):\n    seen.append(x)\n    return len(seen)\n"
    assert values(run(answer, "f", 4)) == [1, 1, 1, 1]


def test_a_module_level_counter_starts_at_zero_in_every_test():
    answer = "calls = 0\n\ndef f(x):\n    global calls\n    calls += 1\n    return calls\n"
    assert values(run(answer, "f", 3)) == [1, 1, 1]


def test_a_cache_built_by_one_test_is_gone_in_the_next():
    answer = """
import functools

@functools.lru_cache(maxsize=None)
def square(n):
    return n * n

def f(x):
    square(x)
    return square.cache_info().currsize
"""
    assert values(run(answer, "f", 3)) == [1, 1, 1]


def test_the_function_is_looked_up_again_for_every_test():
    answer = 'def f(x):\n    global f\n    f = lambda x: "replaced"\n    return "original"\n'
    assert values(run(answer, "f", 3)) == ["original"] * 3


def test_time_of_a_test_is_its_call_not_the_top_level_run_again():
    # The top level spins for 60 ms of wall time in every fresh module; the call itself is instant.
    answer = """
import time
started = time.perf_counter()
while time.perf_counter() - started < 0.06:
    pass

def f(x):
    return x
"""
    done = run(answer, "f", 3)
    assert values(done) == [0, 1, 2]
    assert all(t is not None and t.time_ms < 30 for t in done.tests), [t.time_ms for t in done.tests if t]
