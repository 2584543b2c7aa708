from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector
from django.db import models
from django.db.models import Q


class QuestionKind(models.TextChoices):
    CODING = "coding", "Coding"
    SYSTEM_DESIGN = "system_design", "System design"
    BEHAVIORAL = "behavioral", "Behavioural"


class Difficulty(models.TextChoices):
    EASY = "easy", "Easy"
    MEDIUM = "medium", "Medium"
    HARD = "hard", "Hard"


class Question(models.Model):
    slug = models.SlugField(max_length=120, unique=True)
    title = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=QuestionKind.choices, db_index=True)
    difficulty = models.CharField(max_length=10, choices=Difficulty.choices, db_index=True)
    topics = models.JSONField(default=list, blank=True)
    prompt = models.TextField()
    starter_code = models.TextField(blank=True)
    # Visible to the candidate: worked examples.
    examples = models.JSONField(default=list, blank=True)
    # Never shown: hidden tests (coding) or the rubric (prose), read only by evaluators.
    evaluation_spec = models.JSONField(default=dict, blank=True)
    reference_answer = models.TextField(blank=True)
    # Shown on request, in order; revealing one is recorded on the attempt.
    hints = models.JSONField(default=list, blank=True)
    # Shown beside the reference answer once the candidate has passed or given up.
    explanation = models.TextField(blank=True)
    # Which evaluator of the registry judges answers: "code", "rubric" or "remote".
    evaluator = models.CharField(max_length=20)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            # Full-text search over titles and prompts (`?q=`), in PostgreSQL.
            GinIndex(SearchVector("title", "prompt", config="english"), name="question_search"),
        ]

    def __str__(self) -> str:
        return self.slug


class AttemptStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    QUEUED = "queued", "Queued"
    PROCESSING = "processing", "Processing"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"


class Attempt(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="attempts")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="attempts")
    status = models.CharField(max_length=20, choices=AttemptStatus.choices, default=AttemptStatus.DRAFT)
    # Grows with every change of the attempt's state; readers and caches compare it.
    version = models.PositiveBigIntegerField(default=1)
    # Grows with every change of what the cached copy holds: each new version, and the language,
    # a hint or a give-up, which change no version. The cache orders its copies by it.
    stamp = models.PositiveBigIntegerField(default=1)
    latest_submission = models.ForeignKey(
        "Submission", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The last submission whose result was recorded (history; the shown result is the latest's).
    scored_submission = models.ForeignKey(
        "Submission", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The language of the last submit, run or draft save that named one: what a submit or a
    # run without a language uses.
    language = models.CharField(max_length=20, default="python")
    # The answers being typed, kept server-side, one per language: {language id: text}. Not part
    # of the attempt's state: saving one moves no version and touches no cached copy.
    drafts = models.JSONField(default=dict, blank=True)
    draft_saved_at = models.DateTimeField(null=True, blank=True)
    # How many of the question's hints the candidate has revealed (they open in order).
    hints_revealed = models.PositiveSmallIntegerField(default=0)
    # "I give up": the reference answer opens; recorded so progress never counts it as solved.
    gave_up_at = models.DateTimeField(null=True, blank=True)
    # The first full score on this attempt: the reference answer opens then, and stays open
    # (what was shown cannot be unshown). Progress reads "solved" from the history, not here.
    solved_at = models.DateTimeField(null=True, blank=True)
    # Set for the attempts of a timed mock interview, whose deadline the submit enforces.
    mock_interview = models.ForeignKey(
        "MockInterview", null=True, blank=True, on_delete=models.CASCADE, related_name="attempts"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "-created_at"])]

    def __str__(self) -> str:
        return f"attempt {self.pk} ({self.status} v{self.version})"


class SubmissionStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    PROCESSING = "processing", "Processing"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"
    SUPERSEDED = "superseded", "Superseded"


class Submission(models.Model):
    attempt = models.ForeignKey(Attempt, on_delete=models.CASCADE, related_name="submissions")
    answer = models.TextField()
    language = models.CharField(max_length=20, default="python")
    status = models.CharField(max_length=20, choices=SubmissionStatus.choices, default=SubmissionStatus.QUEUED)
    idempotency_key = models.CharField(max_length=255, blank=True)
    # The attempt's revealed hints when this answer was submitted, shown with its result.
    hints_used = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["attempt", "status"])]

    def __str__(self) -> str:
        return f"submission {self.pk} ({self.status})"


class ResultOutcome(models.TextChoices):
    SCORED = "scored", "Scored"
    # Evaluated, but not an answer a score can be given to (blank, off-topic...): never a score.
    NOT_SCORED = "not_scored", "Not scored"


class Result(models.Model):
    # One result per submission, enforced by the database: a redelivered job cannot score twice.
    submission = models.OneToOneField(Submission, on_delete=models.CASCADE, related_name="result")
    # The regrade that last changed this result's score (its old score and why are on it); the
    # candidate is told of it wherever the result shows.
    regrade = models.ForeignKey("Regrade", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    outcome = models.CharField(max_length=20, choices=ResultOutcome.choices, default=ResultOutcome.SCORED)
    # Why a result is not scored: blank, too_short, off_topic, not_english.
    reason = models.CharField(max_length=30, blank=True)
    score = models.FloatField(null=True, blank=True)
    max_score = models.FloatField()
    feedback = models.TextField(blank=True)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(score__gte=0) & Q(score__lte=models.F("max_score")), name="result_score_in_range"
            ),
            # A scored result has a score; a not-scored one has none and says why.
            models.CheckConstraint(
                condition=(Q(outcome="scored") & Q(score__isnull=False) & Q(reason=""))
                | (Q(outcome="not_scored") & Q(score__isnull=True) & ~Q(reason="")),
                name="result_outcome_consistent",
            ),
        ]

    def __str__(self) -> str:
        return f"result of submission {self.submission_id}: {self.score}/{self.max_score}"


class IdempotencyRecord(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    # Hash of method, path and canonical body: the same key with another request is refused.
    fingerprint = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.BinaryField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="idempotency_user_key_unique")]

    def __str__(self) -> str:
        return f"idempotency {self.user_id}:{self.key}"


class StateChange(models.Model):
    """One row per state change of an attempt, a submission, a practice request or a run."""

    entity = models.CharField(max_length=30)
    object_id = models.BigIntegerField()
    from_status = models.CharField(max_length=20)
    to_status = models.CharField(max_length=20)
    actor = models.CharField(max_length=100)
    reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["entity", "object_id"])]

    def __str__(self) -> str:
        return f"{self.entity} {self.object_id}: {self.from_status} -> {self.to_status}"


class PracticeRequestStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    PROCESSING = "processing", "Processing"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"


class PracticeRequest(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # Pick the most overdue question of the caller's review schedule instead of filtering.
    due = models.BooleanField(default=False)
    kind = models.CharField(max_length=20, choices=QuestionKind.choices, blank=True)
    difficulty = models.CharField(max_length=10, choices=Difficulty.choices, blank=True)
    topic = models.CharField(max_length=60, blank=True)
    status = models.CharField(
        max_length=20, choices=PracticeRequestStatus.choices, default=PracticeRequestStatus.QUEUED
    )
    question = models.ForeignKey(Question, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Not one-to-one: a request for a question already practised completes with that attempt.
    attempt = models.ForeignKey(
        Attempt, null=True, blank=True, on_delete=models.SET_NULL, related_name="practice_requests"
    )
    # Says how the choice was made, e.g. that the filters were relaxed to find a question.
    note = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"practice request {self.pk} ({self.status})"


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    PROCESSING = "processing", "Processing"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"


class Run(models.Model):
    """An answer tried against the question's visible examples or custom inputs. Not a
    submission: it never changes its attempt."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    attempt = models.ForeignKey(Attempt, on_delete=models.CASCADE, related_name="runs")
    answer = models.TextField()
    language = models.CharField(max_length=20, default="python")
    # Argument lists to run the answer on; null runs the question's visible examples.
    inputs = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=20, choices=RunStatus.choices, default=RunStatus.QUEUED)
    # What the code runner returned: {"load_error", "stopped", "cases"}; null until completed.
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["attempt", "-created_at"])]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.status})"


class MockInterview(models.Model):
    """A timed session of a few questions; the server enforces its deadline on every submit."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    duration_minutes = models.PositiveSmallIntegerField()
    # What was asked for, kept so the summary can say it: kinds in order, and a difficulty or "".
    kinds = models.JSONField(default=list)
    difficulty = models.CharField(max_length=10, choices=Difficulty.choices, blank=True)
    started_at = models.DateTimeField()
    deadline = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["user", "-started_at"])]

    def __str__(self) -> str:
        return f"mock interview {self.pk} (until {self.deadline:%Y-%m-%d %H:%M})"


class Note(models.Model):
    """The candidate's private note on a question, one per question."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="+")
    text = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "question"], name="note_user_question_unique")]

    def __str__(self) -> str:
        return f"note of {self.user_id} on {self.question_id}"


class Preferences(models.Model):
    """How the pages speak to one candidate."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preferences")
    # Hide difficulty and topics while practising.
    blind = models.BooleanField(default=False)
    # An IANA zone name ("Europe/Paris"); every time on the pages is shown in it.
    time_zone = models.CharField(max_length=64, default="UTC")

    def __str__(self) -> str:
        return f"preferences of {self.user_id}"


class ReviewDueCount(models.Model):
    """How many questions are due for review, per user: kept by a beat task for the home page,
    derived from the history like the schedule itself, so it can always be rebuilt."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    due = models.PositiveIntegerField(default=0)
    next_due_at = models.DateTimeField(null=True, blank=True)
    computed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.due} due for {self.user_id}"


class QuestionChange(models.Model):
    """A load that changed what grades a question's answers (its tests or rubric, its reference
    answer): what staff are offered a regrade for. One row per load that really changed them."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="changes")
    # Which of "tests", "rubric", "reference" changed.
    fields = models.JSONField(default=list)
    # What the candidate is told, e.g. "the question's hidden tests changed".
    summary = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set once, by the first start: a second start makes no second set of regrades.
    regrade_started_at = models.DateTimeField(null=True, blank=True)
    regrade_started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["question", "-created_at"], name="question_change_recent")]
        permissions = [("regrade_questionchange", "Can start the regrade a question change offers")]

    def __str__(self) -> str:
        return f"change {self.pk} of {self.question_id}: {', '.join(self.fields)}"


class RegradeStatus(models.TextChoices):
    # No verdict recorded yet (also a regrade discarded before it ran: its job says so).
    WAITING = "waiting", "Waiting"
    CHANGED = "changed", "Score changed"
    UNCHANGED = "unchanged", "Checked, same score"
    # The attempt moved on (a newer submission) before the new score could be written.
    SUPERSEDED = "superseded", "Superseded"
    # Its job was dead-lettered; the old result stands.
    FAILED = "failed", "Failed"


class Regrade(models.Model):
    """One submission re-evaluated for one question change: the job's subject, and the record
    of the score before and after."""

    change = models.ForeignKey(QuestionChange, on_delete=models.CASCADE, related_name="regrades")
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="regrades")
    status = models.CharField(max_length=20, choices=RegradeStatus.choices, default=RegradeStatus.WAITING)
    previous_outcome = models.CharField(max_length=20, blank=True)
    previous_score = models.FloatField(null=True, blank=True)
    previous_max_score = models.FloatField(null=True, blank=True)
    outcome = models.CharField(max_length=20, blank=True)
    score = models.FloatField(null=True, blank=True)
    max_score = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            # One regrade (and one job) per change and submission, however often staff start it.
            models.UniqueConstraint(fields=["change", "submission"], name="regrade_change_submission_unique")
        ]

    def __str__(self) -> str:
        return f"regrade {self.pk} of submission {self.submission_id} ({self.status})"
