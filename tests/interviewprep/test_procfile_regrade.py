"""Regrades have a worker line of their own: one child, under the idle scheduling policy and
niced, on a queue no candidate's work shares; `make run` starts it like every other line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.jobs.registry import queues
from interviewprep.processes import parse_procfile, procfile_argv, venv_path
from interviewprep.run import unavailable
from tests.processes import ROOT

pytestmark = pytest.mark.nodb


def _lines() -> dict[str, list[str]]:
    return {entry.name: entry.command.split() for entry in parse_procfile(ROOT / "Procfile")}


def _flag(words: list[str], name: str) -> str:
    return words[words.index(name) + 1]


def test_the_regrade_worker_is_niced_alone_and_consumes_only_its_queue():
    words = _lines()["worker-regrade"]
    assert words[:3] == ["chrt", "--idle", "0"]
    assert words[3:5] == ["nice", "-n"] and int(words[5]) >= 10
    assert words[6:9] == ["celery", "-A", "interviewprep"]
    assert (_flag(words, "--queues"), _flag(words, "--concurrency")) == ("regrade", "1")
    assert queues()["regrade"] == "regrade"


def test_every_registered_queue_has_exactly_one_worker_line():
    consumers: dict[str, list[str]] = {}
    for name, words in _lines().items():
        if "worker" in words and "celery" in words:
            for queue in _flag(words, "--queues").split(","):
                consumers.setdefault(queue, []).append(name)
    assert {queue: consumers.get(queue) for queue in set(queues().values())} == {
        "evaluate": ["worker"],
        "run": ["worker-run"],
        "generate": ["worker-generate"],
        "regrade": ["worker-regrade"],
    }


def test_the_run_command_starts_it_with_this_venvs_celery():
    env = {"PATH": venv_path({"PATH": "/usr/bin:/bin"})}
    assert unavailable(" ".join(_lines()["worker-regrade"]), env, None) is None
    argv = procfile_argv("worker-regrade", port=8000)
    assert argv[:6] == ["chrt", "--idle", "0", "nice", "-n", "19"]
    assert argv[6:8] == [str(Path(sys.executable).with_name("celery")), "-A"] or argv[6:9] == [
        sys.executable,
        "-m",
        "celery",
    ]


def test_its_celery_runs_under_the_idle_policy_and_niced():
    # The line's own wrappers, with a program that reports what it was given.
    argv = [*procfile_argv("worker-regrade", port=8000)[:6], sys.executable, "-c", PROBE]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()
    assert out == ["idle", "19"]


PROBE = "import os; print('idle' if os.sched_getscheduler(0) == os.SCHED_IDLE else 'other', os.nice(0))"
