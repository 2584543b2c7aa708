"""Cost of running one 20-test submission per language in the sandbox, compile left out.

Each language's reference answer to the warm-up question (`sum-of-list`) is compiled once
(the sandbox keeps compiled answers by the hash of their sources), then run on the same 20
tests `rounds` times through `run_program`, the path of every submission in a language other
than Python. Wall time and CPU (this process's reaped children, user + system) are printed
per language: median and spread over the rounds. It measures what a fresh start per test
costs (docs/languages.md, "Fresh state per test").

    .venv/bin/python benchmarks/bench_languages.py [rounds] [language,...]
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "interviewprep.settings")
import django  # noqa: E402

django.setup()

from evaluation.languages import LANGUAGES, language_versions, signature_parse  # noqa: E402
from evaluation.sandbox import current_mode, run_python  # noqa: E402
from evaluation.sandbox.programs import run_program  # noqa: E402

TESTS = 20
SIGNATURE = signature_parse(
    {"function": "sum_of_list", "params": [{"name": "numbers", "type": "list<int>"}], "returns": "int",
     "summary": "Return the sum of the numbers."}
)  # fmt: skip
PYTHON_ANSWER = "def sum_of_list(numbers):\n    return sum(numbers)\n"
EXTENSIONS = {"javascript": "js", "java": "java", "cpp": "cpp", "go": "go"}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _once(language: str, answer: str, args: list[list[object]]) -> tuple[float, float]:
    cpu, started = _children_cpu(), time.perf_counter()
    if language == "python":
        run = run_python(code=answer, function="sum_of_list", tests_args=args, cpu_limit_s=2, memory_limit_mb=256)
    else:
        done = run_program(
            language=LANGUAGES[language], signature=SIGNATURE, answer=answer, tests_args=args, cpu_limit_s=2,
            memory_limit_mb=256,
        )  # fmt: skip
        run = done.run
    wall = time.perf_counter() - started
    assert run is not None and all(t is not None and t.status == "ok" for t in run.tests), run
    assert [t.value for t in run.tests if t is not None] == [sum(a[0]) for a in args]  # type: ignore[index]
    return wall * 1000, (_children_cpu() - cpu) * 1000


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    chosen = sys.argv[2].split(",") if len(sys.argv) > 2 else list(LANGUAGES)
    args: list[list[object]] = [[list(range(n, n + 50))] for n in range(TESTS)]
    print(f"mode {current_mode()}, {TESTS} tests per submission, {rounds} rounds, load {os.getloadavg()[0]:.2f}")
    print("| language | wall ms (median) | wall ms (min-max) | CPU ms (median) |")
    print("|---|---|---|---|")
    for language in chosen:
        if language_versions().get(language) is None:
            print(f"| {language} | not installed | | |")
            continue
        if language == "python":
            answer = PYTHON_ANSWER
        else:
            path = REPOSITORY / "questions" / "references" / language / f"sum-of-list.{EXTENSIONS[language]}"
            answer = path.read_text(encoding="utf-8")
        _once(language, answer, args)  # compiles (or finds it compiled) and warms the caches
        walls, cpus = zip(*(_once(language, answer, args) for _ in range(rounds)), strict=True)
        print(
            f"| {language} | {statistics.median(walls):.1f} | {min(walls):.1f}-{max(walls):.1f} "
            f"| {statistics.median(cpus):.1f} |"
        )


if __name__ == "__main__":
    main()
