"""The Celery app. Its settings live in Django settings under CELERY_* (see settings.py)."""

import os

from celery import Celery
from celery.signals import before_task_publish, task_postrun, task_prerun, worker_ready
from django.db import close_old_connections

from interviewprep.logging import current_request_id, log_context_pop, log_context_push, request_id_accept

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "interviewprep.settings")
# Celery's Django fixup runs Django's system checks at every worker start (0.8 s of CPU, most of
# it importing every URLconf); the release step's migrate has run them for this code already.
os.environ.setdefault("CELERY_SKIP_CHECKS", "1")

# Every task publish bounded the same way (interviewprep/rabbitmq.py), whoever publishes.
app = Celery("interviewprep", amqp="interviewprep.rabbitmq:AMQP")
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


# The message header that carries the id of the request (or beat tick) that caused a task.
REQUEST_ID_HEADER = "request_id"


@before_task_publish.connect
def _carry_request_id(headers=None, **_kwargs) -> None:
    # A publisher that named none (beat, a task sent by hand) gives the work an id of its own.
    if headers is not None and not headers.get(REQUEST_ID_HEADER):
        headers[REQUEST_ID_HEADER] = current_request_id() or request_id_accept(None)


@task_prerun.connect
def _bind_request_id(task=None, **_kwargs) -> None:
    request = task.request
    request_id = request.get(REQUEST_ID_HEADER)
    request.log_token = log_context_push(**({"request_id": request_id} if request_id not in (None, "", "-") else {}))


@task_postrun.connect
def _unbind_request_id(task=None, **_kwargs) -> None:
    token = getattr(task.request, "log_token", None)
    if token is not None:
        log_context_pop(token)


@worker_ready.connect
def _write_ready_file(**_kwargs) -> None:
    """Readiness probe for supervisors and tests: the file exists once the worker consumes."""
    path = os.environ.get("CELERY_READY_FILE")
    if path:
        with open(path, "w") as handle:
            handle.write(str(os.getpid()))
