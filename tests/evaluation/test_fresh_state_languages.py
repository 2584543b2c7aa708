"""Every language starts each test fresh: a global, a static field or a cache that one test
leaves behind is gone in the next, for shown and hidden tests alike, and the run's CPU limit
still holds for all the tests together (docs/languages.md, "Fresh state per test")."""

from __future__ import annotations

import pytest

from evaluation.languages import LANGUAGES, language_available, signature_parse
from evaluation.sandbox.programs import ProgramRun, run_program

pytestmark = pytest.mark.nodb

SIGNATURE = signature_parse(
    {"function": "count_call", "params": [{"name": "x", "type": "int"}], "returns": "int", "summary": "Count."}
)
COUNTERS = {
    "javascript": "let calls = 0;\nfunction countCall(x) {\n  calls += 1;\n  return calls;\n}\n",
    "java": "class Solution {\n    static long calls = 0;\n    long countCall(long x) {\n        calls += 1;\n"
    "        return calls;\n    }\n}\n",
    "cpp": "long long calls = 0;\nlong long countCall(long long x) {\n    calls += 1;\n    return calls;\n}\n",
    "go": "var calls int64\n\nfunc countCall(x int64) int64 {\n\tcalls++\n\treturn calls\n}\n",
}
# A cache kept where a reload of the answer's own code would not reach: a nested class's
# static map (Java), a function-local static (C++), a package-level map built in init (Go).
CACHES = {
    "java": "class Solution {\n    static class Memo { static Map<Long, Long> seen = new HashMap<>(); }\n"
    "    long countCall(long x) {\n        Memo.seen.put(x, x);\n        return Memo.seen.size();\n    }\n}\n",
    "cpp": "long long countCall(long long x) {\n    static std::set<long long> seen;\n    seen.insert(x);\n"
    "    return (long long)seen.size();\n}\n",
    "go": "var seen map[int64]bool\n\nfunc init() { seen = map[int64]bool{} }\n\n"
    "func countCall(x int64) int64 {\n\tseen[x] = true\n\treturn int64(len(seen))\n}\n",
}
# Each test spins for about 0.3 s of CPU: ten of them cannot fit in one second.
SPINNERS = {
    "cpp": "#include <ctime>\nlong long countCall(long long x) {\n    std::clock_t start = std::clock();\n"
    "    while (std::clock() - start < CLOCKS_PER_SEC * 3 / 10) {}\n    return x;\n}\n",
    "go": 'import "syscall"\n\nfunc cpuMs() int64 {\n\tvar u syscall.Rusage\n\t_ = syscall.Getrusage(0, &u)\n'
    "\treturn (u.Utime.Nano() + u.Stime.Nano()) / 1e6\n}\n\nfunc countCall(x int64) int64 {\n"
    "\tstart := cpuMs()\n\tfor cpuMs()-start < 300 {\n\t}\n\treturn x\n}\n",
}


def run(language: str, answer: str, *, shown: int, hidden: int = 0, cpu_limit_s: float = 2) -> ProgramRun:
    if not language_available(language):
        pytest.skip(f"{language} is not installed here")
    return run_program(
        language=LANGUAGES[language],
        signature=SIGNATURE,
        answer=answer,
        tests_args=[[n] for n in range(shown)],
        hidden_args=[[n] for n in range(shown, shown + hidden)],
        cpu_limit_s=cpu_limit_s,
        memory_limit_mb=256,
    )


def values(done: ProgramRun) -> list[object]:
    assert done.run is not None, done.compiled
    assert all(t is not None and t.status == "ok" for t in done.run.tests), (done.run.ended, done.run.diagnostic)
    return [t.value for t in done.run.tests if t is not None]


@pytest.mark.parametrize("language", list(COUNTERS))
def test_a_global_counter_starts_at_zero_in_every_shown_and_hidden_test(language):
    assert values(run(language, COUNTERS[language], shown=3, hidden=2)) == [1, 1, 1, 1, 1]


@pytest.mark.parametrize("language", list(COUNTERS))
def test_a_question_with_only_hidden_tests_reports_each_of_them_in_its_place(language):
    # No shown test: the answer's load check comes first, and is no test of its own.
    assert values(run(language, COUNTERS[language], shown=0, hidden=3)) == [1, 1, 1]


@pytest.mark.parametrize("language", list(CACHES))
def test_a_cache_hidden_in_a_nested_class_or_local_static_is_gone_in_the_next_test(language):
    assert values(run(language, CACHES[language], shown=2, hidden=2)) == [1, 1, 1, 1]


@pytest.mark.parametrize("language", list(SPINNERS))
def test_the_cpu_limit_is_for_all_the_tests_together_not_for_each(language):
    done = run(language, SPINNERS[language], shown=4, hidden=6, cpu_limit_s=1)
    assert done.run is not None
    assert done.run.ended == "cpu", done.run.diagnostic
    reported = [t for t in done.run.tests if t is not None]
    # The exact limit (or RLIMIT_CPU's whole seconds, for runtimes with their own SIGPROF)
    # stops it well before the tenth test: each test's process does not get a limit afresh.
    assert 1 <= len(reported) <= 7, reported
    assert done.run.cpu_s < 3.5, done.run.cpu_s
