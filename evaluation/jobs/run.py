"""Everything one delivery of a job does: claim, lock, heartbeat, run, record."""

from __future__ import annotations

import logging
import time
import traceback

from celery.exceptions import SoftTimeLimitExceeded
from django.db import InterfaceError, OperationalError, connection

from evaluation.jobs import faults
from evaluation.jobs.claim import Claim, job_claim, lease_timeout
from evaluation.jobs.errors import PermanentJobError, TransientJobError
from evaluation.jobs.heartbeat import Heartbeat
from evaluation.jobs.locks import SubjectLock
from evaluation.jobs.outcomes import (
    Outcome,
    end_try,
    job_defer_for_lock,
    job_fail_permanent,
    job_fail_transient,
    job_record,
)
from evaluation.jobs.registry import handler_for
from interviewprep.courtesy import courtesy
from interviewprep.logging import log_context

logger = logging.getLogger(__name__)


def _claim(job_id: int, worker: str, kind: str | None, subject_id: int | None):
    try:
        return job_claim(job_id=job_id, worker=worker, kind=kind, subject_id=subject_id)
    except (OperationalError, InterfaceError):
        if connection.in_atomic_block:
            raise
        # Workers keep their connection between jobs, so one the database dropped since the
        # last job fails here, at this job's first query. Nothing was claimed (a claim whose
        # answer was lost is seen as running and left alone): one more try on a new connection.
        logger.warning("database connection lost before the claim; reconnecting", extra={"job_id": job_id})
        connection.close()
        return job_claim(job_id=job_id, worker=worker, kind=kind, subject_id=subject_id)


def job_run(*, job_id: int, worker: str, kind: str | None = None, subject_id: int | None = None) -> str:
    """Returns what happened, for logs and tests. `kind` and `subject_id` come with the message
    (an older message has only the id, and the claim reads them)."""
    claim = _claim(job_id, worker, kind, subject_id)
    if claim is None:
        logger.info("job delivery skipped: nothing to claim", extra={"job_id": job_id})
        return "skipped"
    with log_context(**claim.log_ids):
        result = _run_claimed(claim)
        logger.info(
            "job try ended",
            extra={"outcome": result, "duration_ms": round((time.monotonic() - claim.started) * 1000, 2)},
        )
    return result


def _stopping(exc: BaseException) -> BaseException | None:
    """The SystemExit or KeyboardInterrupt behind `exc`, if it broke because the process stops."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, SystemExit | KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def _run_claimed(claim: Claim) -> str:
    lock = SubjectLock(claim.lock_key, str(claim.token), ttl_seconds=lease_timeout())
    if not lock.acquire():
        return job_defer_for_lock(claim, within=lease_timeout())
    try:
        with Heartbeat(job_id=claim.job_id, token=claim.token, lock=lock) as beat:
            faults.before_run()
            with courtesy(claim.courteous):
                output = handler_for(claim.kind).run(claim.work)
            if beat.lost:
                end_try(claim, Outcome.LOST_LEASE, "lease lost while working")
                return "lost_lease"
            faults.before_record()
            return job_record(claim, output)
    except (TransientJobError, SoftTimeLimitExceeded, OperationalError, InterfaceError) as exc:
        if not isinstance(exc, TransientJobError):
            # The time limit may have cut a query short, or the database dropped the connection
            # (a restart, a failover, a cut): never reuse it. Neither says anything of the work.
            connection.close()
        message = str(exc) or "the job took longer than its time limit"
        return job_fail_transient(
            claim, f"{type(exc).__name__}: {message}", retry_after=getattr(exc, "retry_after", None)
        )
    except PermanentJobError as exc:
        return job_fail_permanent(claim, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=8))
    except Exception as exc:  # noqa: BLE001 - an unknown error is a bug or bad data: no blind retries
        stopping = _stopping(exc)
        if stopping is not None:
            # The process is being stopped (a terminated child), and an import or call broke
            # on the way: that says nothing of the work, so the try is abandoned, not failed.
            raise stopping from exc
        logger.exception("job failed permanently")
        return job_fail_permanent(claim, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=8))
    finally:
        # After the outcome's commit and its `recorded` step, which ran on commit.
        lock.release()
