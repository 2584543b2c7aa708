"""Cost of the sandbox per submission, side by side with the same harness run bare.

A 20-test accepted submission goes through `run_harness` (every layer the machine offers)
and, alternately, through the same harness started as a plain `/usr/bin/python3 -I -S`
child with no layer at all. The ratio is the sandbox's price; the target is at most 2.5x.
CPU per run (this process plus its reaped children, user + system) is printed beside wall
time: on a busy 2-core machine it is what limits evaluations per second.

    .venv/bin/python benchmarks/bench_sandbox.py [rounds]
"""

from __future__ import annotations

import marshal
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluation.sandbox import current_mode, run_harness  # noqa: E402
from evaluation.sandbox.launch import BOOTSTRAP, PYTHON, Layers, RawRun, launch, prepared  # noqa: E402

TARGET_RATIO = 2.5
ANSWER = """
def two_sum(nums, target):
    seen = {}
    for i, n in enumerate(nums):
        if target - n in seen:
            return [seen[target - n], i]
        seen[n] = i
"""
TESTS = [[list(range(i, i + 50)), 2 * i + 97] for i in range(20)]
BARE = Layers(bwrap=False, uid=False, seccomp=False, landlock=False)


def sandboxed() -> None:
    run = run_harness(code=ANSWER, function="two_sum", tests_args=TESTS, cpu_limit_s=2, memory_limit_mb=256)
    assert run.ended == "completed" and all(t is not None and t.status == "ok" for t in run.tests), run


REQUEST = {
    "probe": False,
    "code": ANSWER,
    "function": "two_sum",
    "tests": [marshal.dumps(args, 4) for args in TESTS],
}


def bare() -> None:
    """The same harness through the same parent-side reader, with every layer switched off."""
    raw: RawRun = launch(BARE, REQUEST, cpu_limit_s=2, memory_bytes=256 << 20, wall_s=5)
    assert raw.event("done") is not None, raw


def plain() -> None:
    """The same harness, started the same way, as a plain `python3 -I -S` child: no slot, no caps, no layers."""
    harness = prepared().harness
    blob = len(harness).to_bytes(4, "little") + harness + marshal.dumps(
        {**REQUEST, "seccomp": False, "landlock": False, "cpu_limit": 2.0, "cpu_hard_limit": 3,
         "memory_bytes": 256 << 20, "parent_pid": 0},
        4,
    )  # fmt: skip
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


def cpu_seconds() -> float:
    """CPU of this process and of every child it has reaped, user + system."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(rounds: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    runners = {"sandboxed": sandboxed, "bare (same reader)": bare, "plain python3 -I -S": plain}
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
    measured, cpu = measure(rounds)
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
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
