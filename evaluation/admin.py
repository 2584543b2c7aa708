"""Staff watch the queues and replay dead letters here; actions call services and report counts."""

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.template.response import TemplateResponse

from evaluation.jobs import dead_letter_replay
from evaluation.models import DeadLetter, EvaluationJob, JobTry, Outbox


class JobTryInline(admin.TabularInline):
    model = JobTry
    extra = 0
    can_delete = False
    fields = ("number", "worker", "request_id", "started_at", "duration_ms", "outcome", "error")
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(EvaluationJob)
class EvaluationJobAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "subject_id", "status", "tries", "max_tries", "heartbeat_at", "updated_at")
    list_filter = ("kind", "status")
    search_fields = ("id", "subject_id", "correlation_id", "request_id")
    readonly_fields = [f.name for f in EvaluationJob._meta.fields]
    inlines = [JobTryInline]
    list_select_related = False

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Outbox)
class OutboxAdmin(admin.ModelAdmin):
    list_display = ("id", "job_id", "queue", "available_at", "published_at", "publish_attempts", "last_error")
    list_filter = ("queue",)
    readonly_fields = [f.name for f in Outbox._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(DeadLetter)
class DeadLetterAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "subject_id", "context", "short_error", "tries", "created_at", "replayed_at")
    list_filter = ("kind", ("replayed_at", admin.EmptyFieldListFilter), "created_at")
    search_fields = ("error", "subject_id")
    readonly_fields = [f.name for f in DeadLetter._meta.fields]
    actions = ["replay_dead_letters"]

    @admin.display(description="error")
    def short_error(self, obj: DeadLetter) -> str:
        return obj.error[:120]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_replay_permission(self, request) -> bool:
        return request.user.has_perm("evaluation.replay_deadletter")

    @admin.action(description="Replay selected dead letters through the normal path", permissions=["replay"])
    def replay_dead_letters(self, request, queryset):
        if request.POST.get("post") != "yes":
            return TemplateResponse(
                request,
                "admin/evaluation/deadletter/replay_confirmation.html",
                {
                    **self.admin_site.each_context(request),
                    "title": "Replay dead letters?",
                    "letters": queryset,
                    "opts": self.model._meta,
                    "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                },
            )
        replayed = skipped = 0
        for letter_id in queryset.values_list("pk", flat=True):
            result = dead_letter_replay(dead_letter_id=letter_id, user=request.user)
            if result.replayed:
                replayed += 1
            else:
                skipped += 1
        self.message_user(request, f"{replayed} replayed, {skipped} skipped (already replayed).", messages.SUCCESS)
        return None
