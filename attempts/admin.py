from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import ngettext

from attempts.forms import AdminLoginForm
from attempts.models import (
    Attempt,
    IdempotencyRecord,
    PracticeRequest,
    Question,
    QuestionChange,
    Regrade,
    Run,
    StateChange,
    Submission,
)
from attempts.selectors.regrades import regrade_candidates, regrade_progress
from attempts.services.regrades import regrade_start
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


@admin.register(QuestionChange)
class QuestionChangeAdmin(ReadOnlyAdmin):
    """Loads that changed what grades a question's answers: each offers a regrade of the scored
    latest submissions, started by the action below and followed in the progress column."""

    list_display = ("id", "question", "summary", "created_at", "would_touch", "regrade_started_at", "progress")
    list_filter = ("regrade_started_at", "created_at")
    search_fields = ("question__slug",)
    list_select_related = ("question",)
    actions = ["start_regrades"]

    @admin.display(description="scored latest submissions to regrade")
    def would_touch(self, change: QuestionChange) -> int:
        return regrade_candidates(change=change).count()

    @admin.display(description="regrade progress")
    def progress(self, change: QuestionChange) -> str:
        if change.regrade_started_at is None:
            return "not started"
        progress = regrade_progress(change=change)
        verdicts = progress.verdicts
        return (
            f"{progress.done} of {progress.regrades} done: {verdicts['changed']} changed, "
            f"{verdicts['unchanged']} same score, {progress.jobs['discarded']} superseded, "
            f"{progress.jobs['dead']} failed"
        )

    def has_regrade_permission(self, request) -> bool:
        return request.user.has_perm("attempts.regrade_questionchange")

    @admin.action(description="Regrade the scored latest submissions of the selected changes", permissions=["regrade"])
    def start_regrades(self, request, queryset):
        changes = list(queryset.select_related("question").order_by("pk"))
        if request.POST.get("post") != "yes":
            return TemplateResponse(
                request,
                "admin/attempts/questionchange/regrade_confirmation.html",
                {
                    **self.admin_site.each_context(request),
                    "title": "Regrade these questions' answers?",
                    "rows": [(change, regrade_candidates(change=change).count()) for change in changes],
                    "opts": self.model._meta,
                    "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                },
            )
        starts = [regrade_start(change_id=change.pk, user=request.user) for change in changes]
        jobs = sum(start.jobs for start in starts)
        again = sum(not start.first for start in starts)
        text = ngettext("%(count)d regrade job queued", "%(count)d regrade jobs queued", jobs) % {"count": jobs}
        if again:
            text += ngettext(
                "; %(count)d change skipped (its regrade was started already)",
                "; %(count)d changes skipped (their regrades were started already)",
                again,
            ) % {"count": again}
        self.message_user(request, f"{text}.", messages.SUCCESS)
        return None


@admin.register(Regrade)
class RegradeAdmin(ReadOnlyAdmin):
    list_display = ("id", "change", "submission_id", "status", "previous_score", "score", "max_score", "finished_at")
    list_filter = ("status",)
    search_fields = ("submission__id", "change__question__slug")
    raw_id_fields = ("change", "submission")
