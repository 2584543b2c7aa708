"""Cost of the sandbox per submission, side by side with the same harness run bare.

A 20-test accepted submission goes through `run_python` (every layer the machine offers)
and, alternately, through the same harness started as a plain `/usr/bin/python3 -I -S`
child with no layer at all. The ratio is the sandbox's price; the target is at most 2.5x.
CPU per run (this process plus its reaped children, user + system) is printed beside wall
time: on a busy 2-core machine it is what limits evaluations per second.

Then the price of a fresh module per test: the same layers and 20 tests, with the answer's
top level run again before each test and without (the harness's `fresh_module` switch, off
only here), for a small top level and a heavier one (imports, a dataclass, a class), beside
the cost of one re-run timed directly in `/usr/bin/python3`.

    .venv/bin/python benchmarks/bench_sandbox.py [rounds]
"""

from __future__ import annotations

import dataclasses
import marshal
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# The sandbox's errors live beside the job machinery, whose package imports its models.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "interviewprep.settings")
import django  # noqa: E402

django.setup()

from evaluation.sandbox import current_mode, run_python  # noqa: E402
from evaluation.sandbox.launch import BOOTSTRAP, PYTHON, Layers, RawRun, launch, prepared  # noqa: E402
from evaluation.sandbox.modes import current_layers  # noqa: E402
from evaluation.sandbox.request import MARSHAL_VERSION, BoxRequest  # noqa: E402

TARGET_RATIO = 2.5
ANSWER = """
def two_sum(nums, target):
    seen = {}
    for i, n in enumerate(nums):
        if target - n in seen:
            return [seen[target - n], i]
        seen[n] = i
"""
HEAVIER = (
    """
import bisect
import heapq
from collections import Counter, defaultdict
from dataclasses import dataclass


@dataclass(frozen=True)
class Pair:
    first: int
    second: int


class Index:
    def __init__(self, nums):
        self.where = defaultdict(list)
        for i, n in enumerate(nums):
            self.where[n].append(i)


def smallest(values, k):
    return heapq.nsmallest(k, values)
"""
    + ANSWER
)
TESTS = [[list(range(i, i + 50)), 2 * i + 97] for i in range(20)]
BARE = Layers(bwrap=False, uid=False, seccomp=False, landlock=False)


def sandboxed() -> None:
    run = run_python(code=ANSWER, function="two_sum", tests_args=TESTS, cpu_limit_s=2, memory_limit_mb=256)
    assert run.ended == "completed" and all(t is not None and t.status == "ok" for t in run.tests), run


REQUEST = BoxRequest(code=ANSWER, function="two_sum", tests=[marshal.dumps(args, MARSHAL_VERSION) for args in TESTS])


def bare() -> None:
    """The same harness through the same parent-side reader, with every layer switched off."""
    raw: RawRun = launch(BARE, REQUEST, cpu_limit_s=2, memory_bytes=256 << 20, wall_s=5)
    assert raw.event("done") is not None, raw


def plain() -> None:
    """The same harness, started the same way, as a plain `python3 -I -S` child: no slot, no caps, no layers."""
    harness = prepared().warden
    request = dataclasses.replace(REQUEST, cpu_limit=2.0, cpu_hard_limit=3, memory_bytes=256 << 20)
    blob = len(harness).to_bytes(4, "little") + harness + request.framed()
    read_end, write_end = os.pipe()
    try:
        subprocess.run(
            [PYTHON, "-I", "-S", "-B", "-c", BOOTSTRAP, str(write_end)],
            input=blob, pass_fds=(write_end,), stdout=subprocess.DEVNULL, check=True,
        )  # fmt: skip
        os.close(write_end)
        write_end = -1
        with os.fdopen(read_end, "rb") as results:
            read_end = -1
            assert results.read().endswith(b'{"e":"done"}\n')
    finally:
        for fd in (read_end, write_end):
            if fd >= 0:
                os.close(fd)


def in_layers(answer: str, *, fresh: bool) -> Callable[[], None]:
    """The submission under the probed layers, its top level run again per test or not."""
    request = dataclasses.replace(REQUEST, code=answer, fresh_module=fresh)

    def run() -> None:
        layers = current_layers()
        assert layers is not None
        raw = launch(layers, request, cpu_limit_s=2, memory_bytes=256 << 20, wall_s=5)
        assert raw.event("done") is not None and len([e for e in raw.events if e["e"] == "test"]) == 20, raw

    return run


def rerun_cost_us(answer: str, times: int = 2000) -> float:
    """One re-run of the answer's top level in a fresh module, as the harness does it, timed
    in Debian's interpreter: the per-test price of fresh state."""
    script = f"""
import sys, time
code = compile({answer!r}, "<string>", "exec")
exec(code, {{"__name__": "warm"}})
started = time.perf_counter()
for _ in range({times}):
    module = type(sys)("__answer__")
    sys.modules["__answer__"] = module
    exec(code, module.__dict__)
    module.__dict__.clear()
print((time.perf_counter() - started) / {times} * 1e6)
"""
    done = subprocess.run([PYTHON, "-I", "-S", "-c", script], capture_output=True, text=True, check=True)
    return float(done.stdout)


def cpu_seconds() -> float:
    """CPU of this process and of every child it has reaped, user + system."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(
    rounds: int, runners: dict[str, Callable[[], None]]
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    times: dict[str, list[float]] = {name: [] for name in runners}
    cpu: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(3):  # warm the page cache and the probe
        for run in runners.values():
            run()
    for _ in range(rounds):  # interleaved so all see the same machine load
        for name, run in runners.items():
            started, cpu_before = time.perf_counter(), cpu_seconds()
            run()
            times[name].append(time.perf_counter() - started)
            cpu[name].append(cpu_seconds() - cpu_before)
    return times, cpu


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    mode = current_mode()
    if mode == "refused":
        print("sandbox mode: refused (run scripts/setup-system.sh); nothing to measure")
        return 1
    runners = {"sandboxed": sandboxed, "bare (same reader)": bare, "plain python3 -I -S": plain}
    measured, cpu = measure(rounds, runners)
    print(f"sandbox mode: {mode}   submission: 20 tests   rounds: {rounds}   cpus: {os.cpu_count()}")
    print(f"{'':34} {'median':>9} {'mean':>9} {'p90':>9} {'CPU median':>11}")
    for label, times in measured.items():
        ordered = sorted(times)
        p90 = ordered[int(len(ordered) * 0.9) - 1]
        print(
            f"{label:34} {statistics.median(times) * 1000:7.1f}ms {statistics.mean(times) * 1000:7.1f}ms"
            f" {p90 * 1000:7.1f}ms {statistics.median(cpu[label]) * 1000:9.1f}ms"
        )
    sandboxed_median = statistics.median(measured["sandboxed"])
    ratio = sandboxed_median / statistics.median(measured["plain python3 -I -S"])
    same_reader = sandboxed_median / statistics.median(measured["bare (same reader)"])
    verdict = "ok" if ratio <= TARGET_RATIO else "OVER TARGET"
    print(f"ratio sandboxed / plain python3 -I -S: {ratio:.2f}x   target <= {TARGET_RATIO}x   {verdict}")
    print(f"ratio sandboxed / bare (same reader):  {same_reader:.2f}x   (the layers alone)")
    cpu_ratio = statistics.median(cpu["sandboxed"]) / statistics.median(cpu["plain python3 -I -S"])
    print(f"CPU ratio sandboxed / plain python3 -I -S: {cpu_ratio:.2f}x")
    print_fresh_state_cost(rounds)
    return 0 if ratio <= TARGET_RATIO else 1


def print_fresh_state_cost(rounds: int) -> None:
    answers = {"small top level (two_sum)": ANSWER, "heavier top level (imports, dataclass)": HEAVIER}
    runners: dict[str, Callable[[], None]] = {}
    for label, answer in answers.items():
        runners[label + " one"] = in_layers(answer, fresh=False)
        runners[label + " fresh"] = in_layers(answer, fresh=True)
    times, cpu = measure(rounds, runners)
    print("\nfresh module per test, same layers, 20 tests (medians per submission):")
    print(f"{'':40} {'one module':>11} {'fresh':>9} {'extra':>9} {'extra CPU':>10} {'re-run once':>12}")
    for label, answer in answers.items():
        one, fresh = statistics.median(times[label + " one"]), statistics.median(times[label + " fresh"])
        extra_cpu = statistics.median(cpu[label + " fresh"]) - statistics.median(cpu[label + " one"])
        print(
            f"{label:40} {one * 1000:9.1f}ms {fresh * 1000:7.1f}ms {(fresh - one) * 1000:+7.1f}ms"
            f" {extra_cpu * 1000:+8.1f}ms {rerun_cost_us(answer):10.0f}us"
        )


if __name__ == "__main__":
    sys.exit(main())
