"""The product's management commands, run as an operator runs them: a process of their own."""

from __future__ import annotations

import json
import subprocess
import sys

from chaos.services import ChaosSetupError
from interviewprep.processes import ROOT


def manage(env: dict[str, str], *words: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *words],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def manage_json(env: dict[str, str], *words: str) -> dict:
    """The JSON a command prints with `--json`."""
    done = manage(env, *words, "--json")
    if done.returncode != 0:
        raise ChaosSetupError(f"manage.py {' '.join(words)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)
