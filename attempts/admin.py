from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from attempts.forms import AdminLoginForm
from attempts.models import Attempt, IdempotencyRecord, PracticeRequest, Question, Run, StateChange, Submission
from interviewprep.admin_readonly import ReadOnlyAdmin

# The admin's login is counted like the others (attempts/login_attempts.py) and says so when locked.
admin.site.login_form = AdminLoginForm


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ("slug", "title", "kind", "difficulty", "evaluator", "is_active")
    list_filter = ("kind", "difficulty", "evaluator", "is_active")
    search_fields = ("slug", "title")


@admin.register(Attempt)
class AttemptAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "question", "status", "version", "latest_submission_id", "updated_at")
    list_filter = ("status",)
    search_fields = ("id", "user__username")
    raw_id_fields = ("user", "question", "latest_submission", "scored_submission")
    readonly_fields = (
        "status",
        "version",
        "latest_submission",
        "scored_submission",
        "language",
        "drafts",
        "draft_saved_at",
        "staff_pages",
    )

    @admin.display(description="Staff pages")
    def staff_pages(self, attempt: Attempt) -> str:
        if attempt.pk is None:
            return "-"
        return format_html(
            '<a href="{}">Timeline</a> · <a href="{}">Cache diff</a>',
            reverse("staff-timeline", args=[attempt.pk]),
            reverse("staff-cache-diff", args=[attempt.pk]),
        )


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ("id", "attempt_id", "language", "status", "created_at")
    list_filter = ("status", "language")
    raw_id_fields = ("attempt",)
    readonly_fields = ("attempt", "answer", "language", "status", "idempotency_key")


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "attempt_id", "language", "status", "created_at", "finished_at")
    list_filter = ("status", "language")
    search_fields = ("id", "user__username")
    raw_id_fields = ("user", "attempt")
    # The record of what ran: its state moves only through the run job.
    readonly_fields = ("user", "attempt", "answer", "language", "inputs", "status", "result", "error", "finished_at")


@admin.register(StateChange)
class StateChangeAdmin(ReadOnlyAdmin):
    list_display = ("id", "entity", "object_id", "from_status", "to_status", "actor", "reason", "created_at")
    list_filter = ("entity",)
    search_fields = ("object_id",)


@admin.register(PracticeRequest)
class PracticeRequestAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "kind", "difficulty", "topic", "status", "question", "attempt_id")
    list_filter = ("status",)


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "key", "status_code", "created_at", "expires_at")
    search_fields = ("key",)
    exclude = ("response_body",)
