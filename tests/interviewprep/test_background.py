"""The per-process background thread: steps in order, isolated failures, delayed steps."""

from __future__ import annotations

import threading
import time

from interviewprep import background


def test_steps_handed_over_together_run_in_order_and_a_failing_one_stops_none_after_it():
    ran: list[str] = []

    def fails() -> None:
        ran.append("fails")
        raise RuntimeError("a step's own bug")

    background.run_soon(lambda: ran.append("first"), fails, lambda: ran.append("last"))
    background.run_soon(lambda: ran.append("next hand-off"))
    assert background.settle()
    assert ran == ["first", "fails", "last", "next hand-off"]


def test_a_later_step_runs_after_its_delay_on_the_background_thread_and_settle_waits_for_it():
    seen: dict[str, object] = {}
    handed = time.monotonic()

    def step() -> None:
        seen["after"] = time.monotonic() - handed
        seen["thread"] = threading.current_thread().name

    background.run_later(step, 0.2)
    background.run_soon(lambda: seen.setdefault("soon", "ran first"))
    assert background.settle()
    assert seen["soon"] == "ran first"
    assert seen["after"] >= 0.2
    assert seen["thread"] == "after-commit"


def test_later_steps_run_by_due_time_not_by_hand_over_order():
    ran: list[str] = []
    background.run_later(lambda: ran.append("due second"), 0.25)
    background.run_later(lambda: ran.append("due first"), 0.05)
    assert background.settle()
    assert ran == ["due first", "due second"]
