"""The Celery app. Its settings live in Django settings under CELERY_* (see settings.py)."""

import os
import time

from celery import Celery
from celery.signals import task_postrun, task_prerun, worker_init, worker_process_shutdown, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "interviewprep.settings")

app = Celery("interviewprep")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["attempts", "evaluation"])

# Celery's Django fixup closes the database connection before and after every task unless this
# is set (celery#9824): a new PostgreSQL session per job was measured at about a third of an
# instant job's time. With it set, the fixup recycles the connection only every 1000 tasks, and
# the handlers below check it between tasks the way Django does between requests.
app.conf.CELERY_DB_REUSE_MAX = 1000
# A connection used by the previous task this recently, without error, skips the health-check
# round trip (CONN_HEALTH_CHECKS) that an idle one gets on its first use (7 % of a job's time).
RECENTLY_USED_SECONDS = 1.0
_last_task_end = [0.0]


@task_prerun.connect
def _check_connections_before_task(**_kwargs) -> None:
    from django.db import connections

    recent = time.monotonic() - _last_task_end[0] < RECENTLY_USED_SECONDS
    for conn in connections.all(initialized_only=True):
        # Closed if it broke, left a transaction open, or outlived CONN_MAX_AGE.
        conn.close_if_unusable_or_obsolete()
        if recent and conn.connection is not None:
            conn.health_check_done = True


@task_postrun.connect
def _check_connections_after_task(**_kwargs) -> None:
    from django.db import connections

    for conn in connections.all(initialized_only=True):
        if conn.errors_occurred:
            conn.close_if_unusable_or_obsolete()
    _last_task_end[0] = time.monotonic()


@worker_ready.connect
def _write_ready_file(**_kwargs) -> None:
    """Readiness probe for supervisors and tests: the file exists once the worker consumes."""
    path = os.environ.get("CELERY_READY_FILE")
    if path:
        with open(path, "w") as handle:
            handle.write(str(os.getpid()))


@worker_init.connect
def _probe_sandbox(**_kwargs) -> None:
    """Probe the code sandbox once in the parent, so every prefork child inherits the answer
    and the first submission does not pay for it."""
    from evaluation.sandbox import current_mode

    current_mode()


@worker_process_shutdown.connect
def _finish_background_steps(**_kwargs) -> None:
    """A child stopping cleanly first writes the cache copies and releases the locks it owes."""
    from interviewprep.background import settle

    settle(timeout=5)
