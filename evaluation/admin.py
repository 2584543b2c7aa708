"""Staff watch the queues and replay dead letters here; actions call services and report counts.
Records of what happened (jobs, tries, the outbox, dead letters, replays) are read-only."""

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models.fields.json import KT
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.translation import ngettext

from evaluation.jobs import DeadLetterFilters, dead_letter_groups, dead_letters_replay
from evaluation.models import DeadLetter, DeadLetterReplay, EvaluationJob, JobTry, Outbox
from interviewprep.admin_readonly import ReadOnlyAdmin, ReadOnlyInline


class JobTryInline(ReadOnlyInline):
    model = JobTry
    fields = ("number", "worker", "request_id", "started_at", "duration_ms", "outcome", "error")
    readonly_fields = fields


@admin.register(EvaluationJob)
class EvaluationJobAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "subject_id", "status", "tries", "max_tries", "heartbeat_at", "updated_at")
    list_filter = ("kind", "status")
    search_fields = ("id", "subject_id", "correlation_id", "request_id")
    inlines = [JobTryInline]
    list_select_related = False


@admin.register(Outbox)
class OutboxAdmin(ReadOnlyAdmin):
    list_display = ("id", "job_id", "queue", "available_at", "published_at", "publish_attempts", "last_error")
    list_filter = ("queue",)


class QuestionFilter(admin.SimpleListFilter):
    """The question a letter's handler named (none for a practice request not yet given one)."""

    title = "question"
    parameter_name = "question"

    def lookups(self, request, model_admin):
        slugs = (
            DeadLetter.objects.annotate(slug=KT("context__question"))
            .exclude(slug=None)
            .order_by("slug")
            .values_list("slug", flat=True)
            .distinct()
        )
        return [(slug, slug) for slug in slugs]

    def queryset(self, request, queryset):
        return queryset.filter(context__question=self.value()) if self.value() else queryset


class ErrorClassFilter(admin.SimpleListFilter):
    title = "error class"
    parameter_name = "error_class"

    def lookups(self, request, model_admin):
        names = DeadLetter.objects.order_by("error_class").values_list("error_class", flat=True).distinct()
        return [(name, name) for name in names]

    def queryset(self, request, queryset):
        return queryset.filter(error_class=self.value()) if self.value() else queryset


class DeadLetterReplayInline(ReadOnlyInline):
    model = DeadLetterReplay
    fk_name = "dead_letter"
    fields = ("created_at", "user", "outcome", "reason", "job")
    readonly_fields = fields
    verbose_name_plural = "replays (audit)"


@admin.register(DeadLetter)
class DeadLetterAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "kind",
        "error_class",
        "question",
        "subject_id",
        "context",
        "short_error",
        "tries",
        "created_at",
        "replayed_at",
    )
    list_filter = ("kind", ErrorClassFilter, QuestionFilter, ("replayed_at", admin.EmptyFieldListFilter), "created_at")
    search_fields = ("error", "subject_id")
    actions = ["replay_dead_letters", "dry_run_dead_letters"]
    inlines = [DeadLetterReplayInline]
    change_list_template = "admin/evaluation/deadletter/change_list.html"

    @admin.display(description="error")
    def short_error(self, obj: DeadLetter) -> str:
        return obj.error[:120]

    @admin.display(description="question")
    def question(self, obj: DeadLetter) -> str:
        return obj.context.get("question") or "-"

    def has_replay_permission(self, request) -> bool:
        return request.user.has_perm("evaluation.replay_deadletter")

    def get_urls(self):
        groups = path("groups/", self.admin_site.admin_view(self.groups_view), name="evaluation_deadletter_groups")
        return [groups, *super().get_urls()]

    def groups_view(self, request):
        """Letters per error class and per question, newest first; the filters of the list apply."""
        replayed = {"true": True, "false": False}.get(request.GET.get("replayed", ""))
        filters = DeadLetterFilters(kind=request.GET.get("kind") or None, replayed=replayed)
        return TemplateResponse(
            request,
            "admin/evaluation/deadletter/groups.html",
            {
                **self.admin_site.each_context(request),
                "title": "Dead letters by error class and by question",
                "opts": self.model._meta,
                "by_error_class": dead_letter_groups(by="error_class", filters=filters),
                "by_question": dead_letter_groups(by="question", filters=filters),
                "replayed": request.GET.get("replayed", ""),
                "kind": request.GET.get("kind", ""),
                "kinds": DeadLetter.objects.order_by("kind").values_list("kind", flat=True).distinct(),
            },
        )

    def _dry_run_page(self, request, queryset, *, confirm: bool):
        ids = list(queryset.values_list("pk", flat=True))
        results = {r.dead_letter_id: r for r in dead_letters_replay(ids=ids, user=request.user, dry_run=True)}
        rows = [(letter, results[letter.pk]) for letter in queryset.order_by("pk")]
        requeue = sum(result.action == "requeue" for _, result in rows)
        return TemplateResponse(
            request,
            "admin/evaluation/deadletter/replay_confirmation.html",
            {
                **self.admin_site.each_context(request),
                "title": "Replay dead letters?" if confirm else "What a replay would do",
                "rows": rows,
                "requeue": requeue,
                "skip": len(rows) - requeue,
                "confirm": confirm,
                "opts": self.model._meta,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            },
        )

    @admin.action(description="See what a replay of the selected dead letters would do (changes nothing)")
    def dry_run_dead_letters(self, request, queryset):
        return self._dry_run_page(request, queryset, confirm=False)

    @admin.action(description="Replay selected dead letters through the normal path", permissions=["replay"])
    def replay_dead_letters(self, request, queryset):
        if request.POST.get("post") != "yes":
            return self._dry_run_page(request, queryset, confirm=True)
        results = dead_letters_replay(ids=list(queryset.values_list("pk", flat=True)), user=request.user)
        replayed = sum(result.replayed for result in results)
        skipped = len(results) - replayed
        text = ngettext("%(count)d dead letter replayed", "%(count)d dead letters replayed", replayed) % {
            "count": replayed
        }
        if skipped:
            text += ngettext(
                "; %(count)d skipped (already replayed, or no longer wanted: see its replays)",
                "; %(count)d skipped (already replayed, or no longer wanted: see their replays)",
                skipped,
            ) % {"count": skipped}
        self.message_user(request, f"{text}.", messages.SUCCESS)
        return None


@admin.register(DeadLetterReplay)
class DeadLetterReplayAdmin(ReadOnlyAdmin):
    list_display = ("id", "created_at", "user", "dead_letter", "outcome", "reason", "job")
    list_filter = ("outcome", "created_at")
    search_fields = ("dead_letter__id", "user__username", "reason")
    list_select_related = ("user", "dead_letter")
    raw_id_fields = ("dead_letter", "job")
