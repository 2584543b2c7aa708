from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class JobStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    RETRYING = "retrying", "Retrying"
    SUCCEEDED = "succeeded", "Succeeded"
    DEAD = "dead", "Dead"
    DISCARDED = "discarded", "Discarded"


FINAL_JOB_STATUSES = (JobStatus.SUCCEEDED, JobStatus.DEAD, JobStatus.DISCARDED)
# A job in one of these has not started its run yet: the queue's depth as PostgreSQL knows it.
WAITING_JOB_STATUSES = (JobStatus.PENDING, JobStatus.QUEUED, JobStatus.RETRYING)


class EvaluationJob(models.Model):
    # Which registered handler runs it, and the id of what it works on (the handler's business).
    kind = models.CharField(max_length=20)
    subject_id = models.BigIntegerField()
    status = models.CharField(max_length=20, choices=JobStatus.choices, default=JobStatus.PENDING)
    # Counted when a run claims the job, so a run that kills its worker still used up a try.
    tries = models.PositiveIntegerField(default=0)
    max_tries = models.PositiveIntegerField()
    next_retry_at = models.DateTimeField(null=True, blank=True)
    # A fresh token per claim; only the run holding the current token may record an outcome.
    lease_token = models.UUIDField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    discard_reason = models.CharField(max_length=200, blank=True)
    # The caller's Idempotency-Key, if it sent one (several requests may share it).
    correlation_id = models.CharField(max_length=64, blank=True)
    # The X-Request-ID of the request that made the job; sent with every message for it.
    request_id = models.CharField(max_length=64, blank=True)
    # Whose work this is, for fair share (the relay holds back a share's jobs beyond its limit in
    # flight); blank for work no user waits on, which is never held.
    share_key = models.CharField(max_length=64, blank=True)
    # Set on a job made by replaying a dead letter: unique, so replaying twice makes one job.
    replay_of = models.OneToOneField(
        "DeadLetter", null=True, blank=True, on_delete=models.SET_NULL, related_name="replay_job"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["status", "heartbeat_at"], name="job_status_heartbeat"),
            models.Index(fields=["status", "updated_at"], name="job_status_updated"),
            models.Index(fields=["kind", "subject_id"], name="job_kind_subject"),
            # The relay's count of each share's jobs in flight.
            models.Index(
                fields=["share_key", "kind"],
                name="job_share_in_flight",
                condition=Q(status__in=["queued", "running"]) & ~Q(share_key=""),
            ),
            # The dashboard's hour of throughput and latency is a range over this column.
            models.Index(fields=["finished_at"], name="job_finished"),
            # The jobs ahead of one in its queue: as small as the backlog, however many have finished.
            models.Index(fields=["kind", "id"], name="job_waiting_kind", condition=Q(status__in=WAITING_JOB_STATUSES)),
        ]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk} ({self.status}, try {self.tries}/{self.max_tries})"


class JobTry(models.Model):
    """One row per try of a job: the record of what ran, where, how long and how it ended."""

    class Outcome(models.TextChoices):
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        TRANSIENT_ERROR = "transient_error", "Transient error"
        PERMANENT_ERROR = "permanent_error", "Permanent error"
        DISCARDED = "discarded", "Discarded"
        LOCK_CONTENDED = "lock_contended", "Lock contended"
        LOST_LEASE = "lost_lease", "Lost its lease"
        ABANDONED = "abandoned", "Abandoned (worker died)"

    job = models.ForeignKey(EvaluationJob, on_delete=models.CASCADE, related_name="job_tries")
    number = models.PositiveIntegerField()
    lease_token = models.UUIDField()
    worker = models.CharField(max_length=200)
    # The job's request id, so a try's row and its worker's log lines name the same request.
    request_id = models.CharField(max_length=64, blank=True)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)
    outcome = models.CharField(max_length=20, choices=Outcome.choices, default=Outcome.RUNNING)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["job_id", "number"]
        verbose_name = "job try"
        verbose_name_plural = "job tries"
        constraints = [models.UniqueConstraint(fields=["lease_token"], name="job_try_lease_unique")]
        # The dashboard's retries and lock contention per minute are ranges over this column.
        indexes = [models.Index(fields=["finished_at", "outcome"], name="job_try_finished")]

    def __str__(self) -> str:
        return f"try {self.number} of job {self.job_id}: {self.outcome}"


class Outbox(models.Model):
    """A message to publish, written in the same transaction as the job it carries."""

    job = models.ForeignKey(EvaluationJob, on_delete=models.CASCADE, related_name="outbox_rows")
    queue = models.CharField(max_length=40)
    task_name = models.CharField(max_length=200)
    # Not published before this time: retries wait here, never as broker countdowns.
    available_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)
    publish_attempts = models.PositiveIntegerField(default=0)
    last_error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["id"]
        verbose_name = "outbox message"
        verbose_name_plural = "outbox messages"
        indexes = [
            models.Index(fields=["available_at"], name="outbox_unpublished", condition=Q(published_at__isnull=True))
        ]

    def __str__(self) -> str:
        return f"outbox {self.pk} for job {self.job_id}"


class DeadLetter(models.Model):
    job = models.OneToOneField(EvaluationJob, on_delete=models.CASCADE, related_name="dead_letter")
    kind = models.CharField(max_length=20)
    subject_id = models.BigIntegerField()
    # The ids the job's handler names for staff (an evaluation's attempt and submission).
    context = models.JSONField(default=dict, blank=True)
    error = models.TextField()
    # The exception's name (the last one, for a job that ran out of tries): what staff group by.
    error_class = models.CharField(max_length=100, blank=True)
    traceback = models.TextField(blank=True)
    tries = models.PositiveIntegerField()
    first_try_at = models.DateTimeField(null=True, blank=True)
    last_try_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    replayed_at = models.DateTimeField(null=True, blank=True)
    replayed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        permissions = [("replay_deadletter", "Can replay dead-lettered jobs")]
        indexes = [
            models.Index(fields=["error_class", "created_at"], name="dead_letter_error_class"),
            models.Index(fields=["created_at"], name="dead_letter_created"),
        ]

    def __str__(self) -> str:
        return f"dead letter {self.pk} (job {self.job_id})"


class DeadLetterReplay(models.Model):
    """The audit of replays: one row each time staff replay a dead letter, whatever it did."""

    class Outcome(models.TextChoices):
        REQUEUED = "requeued", "Requeued"
        SKIPPED = "skipped", "Skipped"

    # Protected: what an audit row speaks of is never deleted from under it.
    dead_letter = models.ForeignKey(DeadLetter, on_delete=models.PROTECT, related_name="replays")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    outcome = models.CharField(max_length=20, choices=Outcome.choices)
    reason = models.CharField(max_length=200, blank=True)
    # The job the replay made, or for a skip the one an earlier replay made (if any).
    job = models.ForeignKey(EvaluationJob, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "dead-letter replay"
        verbose_name_plural = "dead-letter replays"

    def __str__(self) -> str:
        return f"replay of dead letter {self.dead_letter_id}: {self.outcome}"


class ProcessBeat(models.Model):
    """A process's own word that it does its part, read by /healthz, /metrics and the audit: the
    sweeper after every pass, each worker on a timer (whether it had room, when it last took a job)."""

    class Role(models.TextChoices):
        SWEEPER = "sweeper", "Sweeper"
        WORKER = "worker", "Worker"

    # "sweeper" (one row, whichever relay swept last), or a worker's "<hostname>:<pid>".
    name = models.CharField(max_length=200, primary_key=True)
    role = models.CharField(max_length=20, choices=Role.choices)
    queues = models.CharField(max_length=200, blank=True)  # a worker's, comma-separated
    beat_at = models.DateTimeField()
    # A worker's: since when it has had a free child (null while every child is busy), and the
    # last time it took a job (or started). Work waiting past both for too long means it stalled.
    room_since = models.DateTimeField(null=True, blank=True)
    took_job_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["role", "name"]

    def __str__(self) -> str:
        return f"{self.role} {self.name} at {self.beat_at:%H:%M:%S}"


class OpsSample(models.Model):
    """What has no history of its own, sampled by a beat task for the staff dashboard's hour:
    prometheus_client's merged counters (totals since their files began), the broker's queue
    depths and the oldest waiting job's age. The same task purges samples past their retention
    (evaluation/ops_samples.py)."""

    taken_at = models.DateTimeField()
    # Counter totals by name, e.g. {"cache_hit": 12, "cache_miss": 3}; empty when unreadable.
    counters = models.JSONField(default=dict, blank=True)
    # Queue -> messages waiting (-1: the broker did not answer).
    queue_depths = models.JSONField(default=dict, blank=True)
    # Kind -> seconds the oldest pending or queued job of that kind has waited.
    oldest_waiting = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["taken_at"]
        indexes = [models.Index(fields=["taken_at"], name="ops_sample_taken")]

    def __str__(self) -> str:
        return f"ops sample at {self.taken_at:%H:%M:%S}"


class CheckOutcome(models.Model):
    """The last outcome of a check run on a timer (the invariants), so /metrics can export it."""

    name = models.CharField(max_length=50, primary_key=True)
    checked_at = models.DateTimeField()
    # How many of the check's parts failed (0: all held).
    failures = models.PositiveIntegerField()
    detail = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} at {self.checked_at:%H:%M:%S}: {self.failures} failing"
