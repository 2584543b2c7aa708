"""The ticker: one thread per process while callbacks are registered, none otherwise, and a
forked child's own."""

from __future__ import annotations

import os
import threading

import pytest

from interviewprep.ticker import ticker
from tests.processes import wait_for

pytestmark = pytest.mark.nodb


def _tickers() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "ticker"]


@pytest.fixture(autouse=True)
def _no_ticker_left():
    wait_for(lambda: not ticker().running(), timeout=30, message="no ticker before the test")
    yield
    for name in ("a", "b", "failing", "child"):
        ticker().stop(name)
    wait_for(lambda: not ticker().running(), timeout=30, message="no ticker after the test")


def test_callbacks_share_one_thread_that_ends_with_the_last_one():
    calls = {"a": 0, "b": 0}

    def count(name: str):
        def call() -> None:
            calls[name] += 1

        return call

    ticker().start("a", count("a"), every=0.01)
    ticker().start("a", count("b"), every=0.01)  # already started: kept as it was
    ticker().start("b", count("b"), every=0.02)
    wait_for(lambda: calls["a"] >= 5 and calls["b"] >= 3, timeout=30, message="both called, again and again")
    assert len(_tickers()) == 1
    ticker().stop("a")
    seen = calls["a"]
    wait_for(lambda: calls["b"] >= 3 + 5, timeout=30, message="b still called")
    assert calls["a"] <= seen + 1, "a was called after it stopped"
    assert ticker().running()
    ticker().stop("b")
    wait_for(lambda: not ticker().running() and not _tickers(), timeout=30, message="the thread's end")


def test_a_failing_callback_is_logged_and_the_others_go_on(caplog):
    calls = []

    def failing() -> None:
        raise RuntimeError("boom")

    ticker().start("failing", failing, every=0.01)
    ticker().start("b", lambda: calls.append(1), every=0.01)
    wait_for(lambda: len(calls) >= 5, timeout=30, message="the other callback called")
    assert any("ticker callback failed" in r.getMessage() for r in caplog.records)


def test_a_forked_child_has_its_own_ticker():
    ticker().start("a", lambda: None, every=0.01)
    assert ticker().running()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's thread did not survive the fork
        try:
            ran = threading.Event()
            fine = not ticker().running()
            ticker().start("child", ran.set, every=0.01)
            fine = fine and ran.wait(30)
            os.write(write, b"ok" if fine else b"no")
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        assert answer.read() == b"ok"
    os.waitpid(pid, 0)
    assert ticker().running()
