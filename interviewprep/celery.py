"""The Celery app. Its settings live in Django settings under CELERY_* (see settings.py)."""

import os

from celery import Celery
from celery.signals import worker_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "interviewprep.settings")

app = Celery("interviewprep")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["attempts", "evaluation"])


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
