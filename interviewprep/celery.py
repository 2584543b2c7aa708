"""The Celery app. Its settings live in Django settings under CELERY_* (see settings.py)."""

import os

from celery import Celery
from celery.signals import task_postrun, task_prerun, worker_ready
from django.db import close_old_connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "interviewprep.settings")

app = Celery("interviewprep")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["attempts", "evaluation"])

# Celery's Django fixup closes the database connection around every task unless this is set
# (celery#9824), and a new PostgreSQL session per job costs more than a short job itself. With
# it, connections live between tasks and are checked the way Django checks them between requests.
app.conf.CELERY_DB_REUSE_MAX = 1000


@task_prerun.connect
@task_postrun.connect
def _check_connections(**_kwargs) -> None:
    # Closed if it broke, left a transaction open, or outlived CONN_MAX_AGE.
    close_old_connections()


@worker_ready.connect
def _write_ready_file(**_kwargs) -> None:
    """Readiness probe for supervisors and tests: the file exists once the worker consumes."""
    path = os.environ.get("CELERY_READY_FILE")
    if path:
        with open(path, "w") as handle:
            handle.write(str(os.getpid()))
