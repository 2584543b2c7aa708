"""What Flower's task events cost the broker: broker commands, PUBLISHes and bytes per task with
the workers' events off, then on (as Flower turns them on), for Celery's built-in no-op task on a
queue of its own, one worker child. Run by hand against a Redis broker and a migrated database:

    DATABASE_URL=... REDIS_URL=redis://127.0.0.1:PORT/0 .venv/bin/python benchmarks/flower_events.py

It reads the broker's own counters (INFO commandstats, stats), so give it a broker server that
nothing else uses meanwhile.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "interviewprep.settings")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
django.setup()

import redis  # noqa: E402
from django.conf import settings  # noqa: E402

from interviewprep.celery import app  # noqa: E402
from interviewprep.processes import Process, venv_tool, wait_for  # noqa: E402

TASKS = 500
QUEUE = "flower-events-bench"


def _counters(broker: redis.Redis) -> tuple[dict[str, int], int]:
    calls = {name: stats["calls"] for name, stats in broker.info("commandstats").items()}
    return calls, broker.info("stats")["total_net_input_bytes"]


def _batch(broker: redis.Redis, label: str) -> None:
    time.sleep(3)  # the switch's own broadcasts and replies fall outside the window
    calls_before, bytes_before = _counters(broker)
    started = time.monotonic()
    for _ in range(TASKS):
        app.send_task("celery.backend_cleanup", queue=QUEUE)
    wait_for(lambda: broker.llen(QUEUE) == 0, timeout=300, message="the queue to drain")
    drained = time.monotonic() - started
    time.sleep(2)  # the last task's events and ack
    calls_after, bytes_after = _counters(broker)
    calls = {name: calls_after[name] - calls_before.get(name, 0) for name in calls_after}
    total, published = sum(calls.values()), calls.get("cmdstat_publish", 0)
    print(
        f"{label}: {TASKS} tasks drained in {drained:.1f} s; per task {total / TASKS:.1f} broker commands,"
        f" {published / TASKS:.2f} PUBLISH, {(bytes_after - bytes_before) / TASKS:.0f} bytes sent to the broker"
    )


def main() -> int:
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    argv = [*venv_tool("celery"), "-A", "interviewprep", "worker", "--queues", QUEUE, "--concurrency", "1"]
    argv += ["--hostname", "flower-events@%h", "--without-gossip", "--without-mingle", "--loglevel", "WARNING"]
    worker = Process.start("worker", argv, log=Path("/tmp/flower-events-worker.log"))  # noqa: S108
    try:
        wait_for(lambda: app.control.ping(timeout=0.5), timeout=60, message="the worker", process=worker)
        _batch(broker, "events off")
        app.control.enable_events()
        _batch(broker, "events on ")
    finally:
        app.control.disable_events()
        worker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
