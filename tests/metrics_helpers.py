"""Counters as the tests see them: read through prometheus_client's own registry, merged over
every process (this one and the workers it starts), each test starting from zero.

Emptying the multiprocess folder alone does not reset this process: it would go on writing to
the files it has open, removed and so never read again. prometheus_client reopens its files (and
starts its values anew from them) when the process identifier it is given changes, as it does
after a fork; this process's identifier is its pid and a number that start_from_zero() moves on.
"""

from __future__ import annotations

import atexit
import os
import shutil
import struct
import sys
from pathlib import Path

from prometheus_client import CollectorRegistry, multiprocess

from interviewprep.metrics_files import install_process_identifier

_generation = [0]


def own_the_folder() -> None:
    """For the test session's own process, once its folder is set and before any metric exists
    (tests/settings.py); the processes it starts inherit the folder and keep the plain pid."""
    if "interviewprep.metrics" in sys.modules:
        raise RuntimeError("metrics were declared before the test session's folder was set")
    # Not the app's "<pid>@<start>": the compaction never takes this live process's files for a
    # dead one's.
    install_process_identifier(lambda: f"{os.getpid()}-{_generation[0]}")
    atexit.register(shutil.rmtree, os.environ["PROMETHEUS_MULTIPROC_DIR"], True)


def start_from_zero() -> None:
    """No counts from earlier tests: their processes' files go, and this process writes anew."""
    for path in Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).iterdir():
        path.unlink(missing_ok=True)
    # After the files are gone: a write in between still lands in a removed file, not in this test.
    _generation[0] += 1


def counter_value(name: str, labels: dict[str, str] | None = None) -> float:
    """A counter's total over every process, as /metrics shows it; 0 when never counted."""
    for _ in range(20):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        try:
            return registry.get_sample_value(name, labels or {}) or 0.0
        except struct.error:
            # A process was creating its file (still empty) as prometheus_client read the folder.
            continue
    raise AssertionError(f"the metrics folder could not be read for {name}")
