"""The metrics folder after many process restarts: how long a scrape's read of the folder takes
with the files of N dead processes, how long merging them takes, and the read after the merge.
Real files written by one real process through interviewprep.metrics, copied under N dead
writers' names (pids above pid_max). Needs no database. Prints figures, never asserts a time.

    python benchmarks/bench_metrics_folder.py [--dead 500] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import machine_note  # noqa: E402
from interviewprep.metrics_files import metrics_files_compact, metrics_files_read  # noqa: E402

WRITER = """
from interviewprep import metrics
for kind in ("evaluate", "run", "generate"):
    for status in ("succeeded", "dead", "discarded"):
        metrics.incr("interviewprep_jobs_finished_total", {"kind": kind, "status": status})
    metrics.observe("interviewprep_job_latency_seconds", 0.3, {"kind": kind})
metrics.incr("interviewprep_cache_requests_total", {"outcome": "hit"})
"""


def _read_ms(folder: Path) -> float:
    start = time.perf_counter()
    metrics_files_read(folder)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dead", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(machine_note())
    model = Path(tempfile.mkdtemp(prefix="ip-bench-metrics-model-"))
    env = dict(os.environ, PROMETHEUS_MULTIPROC_DIR=str(model), PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-c", WRITER], env=env, check=True)
    before, merge, after = [], [], []
    for _ in range(args.rounds):
        folder = Path(tempfile.mkdtemp(prefix="ip-bench-metrics-"))
        for file in model.glob("*.db"):
            typ = file.name.split("_")[0]
            for n in range(args.dead):
                shutil.copy(file, folder / f"{typ}_{40_000 + n}@7.db")
        before.append(_read_ms(folder))
        start = time.perf_counter()
        metrics_files_compact(folder)
        merge.append((time.perf_counter() - start) * 1000)
        after.append(_read_ms(folder))
        shutil.rmtree(folder)
    shutil.rmtree(model)
    print(f"{args.dead} dead processes (2 files each), median of {args.rounds} rounds:")
    print(f"  read of the folder before the merge: {statistics.median(before):8.1f} ms")
    print(f"  the merge:                           {statistics.median(merge):8.1f} ms")
    print(f"  read of the folder after the merge:  {statistics.median(after):8.1f} ms")


if __name__ == "__main__":
    main()
