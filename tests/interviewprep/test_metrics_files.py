"""The metrics folder stays small: dead processes' counter and histogram files are merged into
one per type, the totals unchanged (none lost, none counted twice, a scrape running meanwhile
included), and a live process's files, or a new process that got a dead one's pid, are left
alone. Real processes writing through interviewprep.metrics into a folder of the test's own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from interviewprep.metrics_files import metrics_files_compact, metrics_files_read, process_identifier
from tests.processes import ROOT

pytestmark = pytest.mark.nodb

COUNTER = "interviewprep_jobs_swept_total"
HISTOGRAM = "interviewprep_job_latency_seconds"
# Writes through the app's metrics module, then waits for a line on stdin (or none) before exiting.
WRITER = """
import sys
from interviewprep import metrics
for _ in range(int(sys.argv[1])):
    metrics.incr("interviewprep_jobs_swept_total")
    metrics.observe("interviewprep_job_latency_seconds", 0.3, {"kind": "evaluate"})
print("written", flush=True)
if sys.argv[2] == "wait":
    sys.stdin.readline()
"""


def _env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_XDIST_WORKER",)}
    env["PROMETHEUS_MULTIPROC_DIR"] = str(folder)
    env["PYTHONPATH"] = str(ROOT)
    env["DJANGO_SETTINGS_MODULE"] = "interviewprep.settings"
    return env


def _write(folder: Path, count: int) -> None:
    subprocess.run([sys.executable, "-c", WRITER, str(count), "exit"], env=_env(folder), check=True, timeout=60)


def _live_writer(folder: Path, count: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(count), "wait"],
        env=_env(folder),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline().strip() == "written"
    return process


def _totals(folder: Path) -> tuple[float, float, float]:
    """The counter, the histogram's count (its +Inf bucket) and its 0.5 bucket, as scraped."""
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for metric in metrics_files_read(folder)
        for sample in metric.samples
    }
    kind = ("kind", "evaluate")
    return (
        samples.get((f"{COUNTER}", ()), 0.0),
        samples.get((f"{HISTOGRAM}_count", (kind,)), 0.0),
        samples.get((f"{HISTOGRAM}_bucket", (kind, ("le", "0.5"))), 0.0),
    )


def _db_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.db"))


def test_dead_processes_files_are_merged_and_the_totals_stay(tmp_path):
    for count in (1, 2, 3, 4):
        _write(tmp_path, count)
    assert len(_db_files(tmp_path)) == 8
    assert _totals(tmp_path) == (10, 10, 10)

    assert metrics_files_compact(tmp_path) == 8
    assert _db_files(tmp_path) == ["counter_merged.db", "histogram_merged.db"]
    assert _totals(tmp_path) == (10, 10, 10)

    for count in (5, 6):
        _write(tmp_path, count)
    assert metrics_files_compact(tmp_path) == 4
    assert _db_files(tmp_path) == ["counter_merged.db", "histogram_merged.db"]
    assert _totals(tmp_path) == (21, 21, 21)
    assert metrics_files_compact(tmp_path) == 0


def test_a_live_process_keeps_its_files_until_it_dies(tmp_path):
    _write(tmp_path, 2)
    live = _live_writer(tmp_path, 5)
    try:
        assert metrics_files_compact(tmp_path) == 2
        assert [n for n in _db_files(tmp_path) if "merged" not in n] == [
            f"counter_{live.pid}@{_ticks(live.pid)}.db",
            f"histogram_{live.pid}@{_ticks(live.pid)}.db",
        ]
        assert _totals(tmp_path) == (7, 7, 7)
    finally:
        live.stdin.close()
        live.wait(30)
    assert metrics_files_compact(tmp_path) == 2
    assert _totals(tmp_path) == (7, 7, 7)


def _ticks(pid: int) -> str:
    return process_identifier() if pid == os.getpid() else _proc_ticks(pid)


def _proc_ticks(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2 :].split()[19]


def test_a_file_whose_pid_a_new_process_now_has_is_a_dead_writers_and_the_new_ones_is_not(tmp_path):
    _write(tmp_path, 3)
    live = _live_writer(tmp_path, 4)
    try:
        # The dead writer's files as if it had had the pid the live process has now.
        for old in tmp_path.glob("*.db"):
            typ, ident = old.stem.split("_")
            if ident.split("@")[0] != str(live.pid):
                old.rename(tmp_path / f"{typ}_{live.pid}@1.db")
        assert _totals(tmp_path) == (7, 7, 7)
        assert metrics_files_compact(tmp_path) == 2
        assert f"counter_{live.pid}@{_proc_ticks(live.pid)}.db" in _db_files(tmp_path)
        assert _totals(tmp_path) == (7, 7, 7)
    finally:
        live.stdin.close()
        live.wait(30)


def test_a_scrape_during_merges_counts_every_file_once(tmp_path):
    staging = tmp_path / "staging"
    folder = tmp_path / "folder"
    staging.mkdir()
    folder.mkdir()
    _write(staging, 1)
    (counter,) = staging.glob("counter_*.db")
    files = 80
    # Copies under pids above pid_max (32768 here): writers that can no longer be running.
    for n in range(files):
        shutil.copy(counter, staging / f"counter_{40_000 + n}@7.db")
    counter.unlink()
    for histogram in staging.glob("histogram_*.db"):
        histogram.unlink()

    # Files moved in for sure (before a read), and files that may be (after it).
    moved, moving = [0], [0]
    done = threading.Event()
    reads: list[tuple[int, float, int]] = []

    def scraper():
        while not done.is_set():
            before = moved[0]
            total = _totals(folder)[0]
            reads.append((before, total, moving[0]))

    thread = threading.Thread(target=scraper)
    thread.start()
    try:
        for n in range(files):
            moving[0] += 1
            os.rename(staging / f"counter_{40_000 + n}@7.db", folder / f"counter_{40_000 + n}@7.db")
            moved[0] += 1
            if n % 2:
                metrics_files_compact(folder)
    finally:
        done.set()
        thread.join(60)
    metrics_files_compact(folder)
    assert _totals(folder)[0] == files
    assert len(reads) > 20
    wrong = [(before, total, after) for before, total, after in reads if not before <= total <= after]
    assert wrong == []
