"""One JSON object per log line, carrying the ids of the work being done.

Every process uses the same idiom: whoever starts a piece of work (the web's middleware for a
request, the worker for a task, the relay for a message) binds its ids with `log_context`, and
the filter puts them on each line written meanwhile. `request_id` is always there ("-" when no
request caused the work); the others (job_id, try, attempt_id, submission_id, ...) where known.
"""

import json
import logging
import re
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Any

# Immutable by use: binding makes a new dict, so a reset restores the outer one intact.
_log_ids: ContextVar[dict[str, Any]] = ContextVar("log_ids", default={})  # noqa: B039 - never mutated

_RESERVED = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "request_id"}
# One encoder for every line: json.dumps given any option builds a new one per call.
_encode = json.JSONEncoder(default=str).encode

# What a caller may send as X-Request-ID (docs/api.md); anything else is replaced.
_VALID_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


def request_id_accept(candidate: str | None) -> str:
    """The caller's request id if it is 1-64 characters of [A-Za-z0-9._-], else a new one."""
    if candidate and _VALID_REQUEST_ID.fullmatch(candidate):
        return candidate
    return uuid.uuid4().hex


def log_context_push(**ids: Any) -> Token:
    """Bind `ids` (over the ones bound already) until `log_context_pop` with the token."""
    return _log_ids.set({**_log_ids.get(), **ids})


def log_context_pop(token: Token) -> None:
    _log_ids.reset(token)


@contextmanager
def log_context(**ids: Any) -> Iterator[None]:
    token = log_context_push(**ids)
    try:
        yield
    finally:
        log_context_pop(token)


def current_request_id() -> str:
    """The request id of the work being done, "" outside any."""
    return _log_ids.get().get("request_id", "")


class LogContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        ids = _log_ids.get()
        record.request_id = ids.get("request_id") or "-"
        for key, value in ids.items():
            # A field the line names itself (extra=) wins.
            if key not in record.__dict__:
                setattr(record, key, value)
        return True


class JsonFormatter(logging.Formatter):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # (second, its text): a request's line is formatted within the second of the last one.
        self._second: tuple[int, str] = (-1, "")

    def _timestamp(self, record: logging.LogRecord) -> str:
        second = int(record.created)
        cached, text = self._second
        if cached != second:
            text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
            self._second = (second, text)
        return f"{text}.{int(record.msecs):03d}Z"

    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "ts": self._timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
            "request_id": getattr(record, "request_id", "-"),
        }
        for key, value in vars(record).items():
            if key not in _RESERVED and not key.startswith("_"):
                payload[key] = value
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return _encode(payload)
