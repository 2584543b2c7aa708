"""EVALUATOR_FAULTS: injected delay, transient and permanent failures, and a crash right before
the outcome's commit. Off unless the variable is set; for tests and drills only."""

from __future__ import annotations

import os
import random
import signal
import time

from django.conf import settings

from evaluation.jobs.errors import PermanentJobError, TransientJobError


def _faults() -> dict[str, float]:
    return settings.CONFIG.evaluator_faults


def before_run() -> None:
    faults = _faults()
    if not faults:
        return
    if faults.get("delay"):
        time.sleep(faults["delay"])
    if random.random() < faults.get("transient", 0):
        raise TransientJobError("injected transient fault (EVALUATOR_FAULTS)")
    if random.random() < faults.get("permanent", 0):
        raise PermanentJobError("injected permanent fault (EVALUATOR_FAULTS)")


def before_record() -> None:
    """Die as a killed worker would: no cleanup, no acknowledgement, no exception handler."""
    if random.random() < _faults().get("crash_before_commit", 0):
        os.kill(os.getpid(), signal.SIGKILL)
