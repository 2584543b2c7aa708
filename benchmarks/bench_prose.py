"""The written-answer grader on one core: a 300-word answer's grading time (target p50 <= 100 ms),
one process's memory growth from loading the model (target <= 300 MB), and grading throughput of
one and of two processes (the pipeline's prose ceiling; target >= 20 evaluations/s on 2 cores).

Runs in-process against the bank's own question; needs no database. Prints figures, never
asserts a time.

    python benchmarks/bench_prose.py [--answers 200]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import machine_note, percentile, print_table, verdict  # noqa: E402

SLUG = "design-link-shortener"


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "interviewprep.settings")
    import django

    django.setup()


def _rss_kib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def _request(words: int):
    import yaml

    from evaluation.evaluators import EvaluationRequest

    data = yaml.safe_load((ROOT / "questions" / "system_design" / f"{SLUG}.yaml").read_text())
    strong = data["labelled_answers"]["strong"].split()
    answer = " ".join((strong * (words // len(strong) + 1))[:words])
    return EvaluationRequest(
        question_slug=SLUG,
        question_kind=data["kind"],
        prompt=data["prompt"],
        spec=data["evaluation_spec"],
        answer=answer,
    )


def _grade_loop(args: tuple[int, int]) -> float:
    count, words = args
    _setup()
    from evaluation.evaluators.rubric import local_grade

    request = _request(words)
    local_grade(request)
    started = time.perf_counter()
    for _ in range(count):
        local_grade(request)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=200)
    args = parser.parse_args()
    _setup()
    from evaluation.evaluators import minilm
    from evaluation.evaluators.rubric import local_grade

    before = _rss_kib()
    minilm.embedder()
    after = _rss_kib()
    request = _request(300)
    local_grade(request)  # the question's examples embedded once, as a worker's first job would
    times = []
    for _ in range(args.answers):
        started = time.perf_counter()
        local_grade(request)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    p50, p95 = statistics.median(times), percentile(times, 95)
    growth_mb = (after - before) / 1024
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    with multiprocessing.get_context("spawn").Pool(2) as pool:
        started = time.perf_counter()
        pool.map(_grade_loop, [(args.answers, 300)] * 2)
        two = 2 * args.answers / (time.perf_counter() - started)
    one = args.answers / (sum(times) / 1000)

    print(machine_note())
    print_table(
        ["measure", "value", "target", "verdict"],
        [
            ["300-word answer, p50 (ms)", f"{p50:.1f}", "<= 100", verdict(p50 <= 100)],
            ["300-word answer, p95 (ms)", f"{p95:.1f}", "", ""],
            ["memory growth from the model (MB)", f"{growth_mb:.0f}", "<= 300", verdict(growth_mb <= 300)],
            ["process peak RSS (MB)", f"{peak_mb:.0f}", "", ""],
            ["evaluations/s, 1 process", f"{one:.0f}", "", ""],
            ["evaluations/s, 2 processes", f"{two:.0f}", ">= 20", verdict(two >= 20)],
        ],
    )


if __name__ == "__main__":
    main()
