"""The one process manager: groups stopped whole, and no signal once a leader is reaped."""

import os
import signal
import time
from pathlib import Path

import pytest

from interviewprep.processes import Process, RedisServer, signal_if, stop_all, wait_for

pytestmark = pytest.mark.nodb


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return ""


def test_a_leader_that_exits_is_seen_without_being_reaped_and_its_group_is_stopped_whole(tmp_path):
    process = Process.start("orphaning", "sleep 300 & echo $! > orphan; exit 3", cwd=tmp_path)
    wait_for(lambda: process.returncode is not None, timeout=10)
    orphan = int(wait_for(lambda: (tmp_path / "orphan").exists() and (tmp_path / "orphan").read_text().strip()))
    assert process.returncode == 3 and not process.alive()
    assert _state(process.pid) == "Z", "peeking must not reap: the zombie keeps the group's id reserved"
    assert process.group_alive() and _state(orphan) in ("S", "R")
    assert process.stop(grace=5) == 3
    wait_for(lambda: _state(orphan) in ("", "Z"), timeout=10, message="the orphan to die with its group")


def test_no_signal_is_sent_once_the_leader_is_reaped(monkeypatch):
    process = Process.start("short", ["true"])
    wait_for(lambda: process.returncode is not None, timeout=10)
    process.stop()
    assert process.proc.returncode == 0
    sent = []
    monkeypatch.setattr(os, "killpg", lambda *args: sent.append(args))
    monkeypatch.setattr(os, "kill", lambda *args: sent.append(args))
    assert process.kill(signal.SIGKILL) is False
    assert process.send_signal(signal.SIGTERM) is False
    process.stop()
    stop_all([process])
    assert sent == [] and process.children() == [] and not process.group_alive()


def test_a_group_that_ignores_sigterm_is_killed_after_the_grace(tmp_path):
    process = Process.start("stubborn", "trap '' TERM; sleep 300 & wait", log=tmp_path / "log")
    wait_for(lambda: process.children(), timeout=10)
    began = time.monotonic()
    said = []
    stop_all([process], grace=1.0, say=said.append)
    assert 0.9 < time.monotonic() - began < 10
    assert process.proc.returncode == -signal.SIGKILL
    assert said == ["stubborn did not stop in 1 s: killing it"]


def test_signal_if_sends_nothing_when_the_check_fails():
    process = Process.start("sleeper", ["sleep", "300"])
    try:
        assert signal_if(process.pid, signal.SIGKILL, lambda pid: False) is False
        assert process.alive()
        assert signal_if(process.pid, signal.SIGKILL, lambda pid: pid == process.pid) is True
        wait_for(lambda: not process.alive(), timeout=10)
    finally:
        process.stop()
    assert process.proc.returncode == -signal.SIGKILL


def test_a_redis_server_pauses_restarts_empty_and_stops():
    import redis

    server = RedisServer("probe")
    try:
        client = redis.Redis.from_url(server.url(1), socket_timeout=2)
        client.set("k", "v")
        server.pause()
        assert _state(server.process.pid) == "T"
        server.resume()
        assert client.get("k") == b"v"
        server.restart()
        assert client.get("k") is None
        client.close()
    finally:
        server.stop()
    assert server.proc.returncode is not None and not Path(server.dir).exists()
