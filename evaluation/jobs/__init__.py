"""The job machinery: enqueue, claim with a lease and a fence, heartbeat, retry, dead letters,
sweep, replay and the outbox. It knows nothing of the work it runs: each kind of work registers
a handler (`register_handler`), and apps reach the machinery only through the names below."""

from evaluation.jobs.claim import lease_timeout
from evaluation.jobs.dead_letters import (
    GROUP_KEYS,
    DeadLetterFilters,
    dead_letter_groups,
    dead_letter_list,
    dead_letter_replays,
)
from evaluation.jobs.enqueue import job_enqueue, jobs_waiting
from evaluation.jobs.errors import PermanentJobError, TransientJobError
from evaluation.jobs.history import jobs_of_subjects, jobs_status_counts
from evaluation.jobs.liveness import sweep_allowance
from evaluation.jobs.queue import QueuePosition, job_queue_position
from evaluation.jobs.registry import JobHandler, register_handler
from evaluation.jobs.retention import job_subjects_held, job_tries_purge, jobs_of_subjects_delete, outbox_purge
from evaluation.jobs.run import job_run
from evaluation.jobs.sweep import ReplayAction, ReplayResult, dead_letter_replay, dead_letters_replay, jobs_sweep

__all__ = [
    "GROUP_KEYS",
    "DeadLetterFilters",
    "JobHandler",
    "PermanentJobError",
    "QueuePosition",
    "ReplayAction",
    "ReplayResult",
    "TransientJobError",
    "dead_letter_groups",
    "dead_letter_list",
    "dead_letter_replay",
    "dead_letter_replays",
    "dead_letters_replay",
    "job_enqueue",
    "job_queue_position",
    "job_run",
    "job_subjects_held",
    "job_tries_purge",
    "outbox_purge",
    "jobs_of_subjects",
    "jobs_of_subjects_delete",
    "jobs_status_counts",
    "jobs_sweep",
    "jobs_waiting",
    "lease_timeout",
    "register_handler",
    "sweep_allowance",
]
