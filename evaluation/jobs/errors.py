"""What a job's work may raise to tell the machinery how its try ended."""

from __future__ import annotations


class TransientJobError(Exception):
    """Worth retrying: a timeout, a dependency down, a rate limit."""

    def __init__(self, message: str, *, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class PermanentJobError(Exception):
    """Retrying cannot help: the job goes to the dead letters at once."""
