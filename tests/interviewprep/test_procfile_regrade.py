"""Regrades have a worker line of their own: one child, niced, on a queue no candidate's work
shares; `make run` starts it like every other line."""

from __future__ import annotations

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
    assert words[:2] == ["nice", "-n"] and int(words[2]) >= 10
    assert words[3:6] == ["celery", "-A", "interviewprep"]
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
    assert argv[:3] == ["nice", "-n", "15"]
    assert argv[3:5] == [str(Path(sys.executable).with_name("celery")), "-A"] or argv[3:6] == [
        sys.executable,
        "-m",
        "celery",
    ]
