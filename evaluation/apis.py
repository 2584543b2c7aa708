"""Staff operations on the job machinery: dead letters, their groups and their replay, and the
dashboard's figures."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluation.dashboard import Dashboard, ops_dashboard
from evaluation.jobs import (
    DeadLetterFilters,
    ReplayResult,
    dead_letter_groups,
    dead_letter_list,
    dead_letter_replay,
    dead_letters_replay,
)
from evaluation.models import DeadLetter
from interviewprep.api import Pagination, StrictBooleanField, StrictIntegerField
from interviewprep.converters import ID_MAX
from interviewprep.errors import NotFound
from interviewprep.schema import PROBLEM

BULK_REPLAY_MAX = 500


class DeadLetterOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    job_id = serializers.IntegerField()
    attempt_id = serializers.SerializerMethodField()
    submission_id = serializers.SerializerMethodField()
    question = serializers.SerializerMethodField()
    kind = serializers.CharField()
    subject_id = serializers.IntegerField()
    error = serializers.CharField()
    error_class = serializers.CharField()
    tries = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    replayed_at = serializers.DateTimeField(allow_null=True)

    def get_attempt_id(self, letter: DeadLetter) -> int | None:
        return letter.context.get("attempt_id")

    def get_submission_id(self, letter: DeadLetter) -> int | None:
        return letter.context.get("submission_id")

    def get_question(self, letter: DeadLetter) -> str | None:
        return letter.context.get("question")


class DeadLetterFilterSerializer(serializers.Serializer):
    """An empty filter (`?kind=`) is ignored."""

    kind = serializers.CharField(required=False, allow_blank=True, max_length=20)
    error_class = serializers.CharField(required=False, allow_blank=True, max_length=100)
    question = serializers.CharField(required=False, allow_blank=True, max_length=200, help_text="A question's slug.")
    replayed = serializers.ChoiceField(choices=["true", "false"], required=False, allow_blank=True)
    since = serializers.DateTimeField(required=False)

    def validate(self, data):
        repeated = [name for name in self.fields if len(getattr(self.initial_data, "getlist", lambda _: [])(name)) > 1]
        if repeated:
            raise serializers.ValidationError({name: "Give it once." for name in repeated})
        return data

    def filters(self) -> DeadLetterFilters:
        data = dict(self.validated_data)
        replayed = {"true": True, "false": False}.get(data.pop("replayed", ""))
        return DeadLetterFilters(**data, replayed=replayed)


class DeadLetterGroupQuerySerializer(DeadLetterFilterSerializer):
    by = serializers.ChoiceField(choices=["error_class", "question"], allow_blank=True, default="error_class")


class DeadLetterGroupSerializer(serializers.Serializer):
    key = serializers.CharField(allow_null=True, help_text="The error class or question slug; null: none named.")
    count = serializers.IntegerField()
    waiting = serializers.IntegerField(help_text="Letters not replayed yet.")
    newest = serializers.DateTimeField()


class DeadLetterGroupsSerializer(serializers.Serializer):
    by = serializers.CharField()
    groups = DeadLetterGroupSerializer(many=True)


class DeadLetterReplayedSerializer(serializers.Serializer):
    dead_letter_id = serializers.IntegerField()
    job_id = serializers.IntegerField(allow_null=True)
    replayed = serializers.BooleanField(help_text="True when this call made a job.")
    action = serializers.ChoiceField(choices=["requeue", "skip"], help_text="What the replay did, or would do.")
    current = serializers.BooleanField(
        help_text="Whether what the letter was about is still wanted (for an evaluation: its submission is the latest)."
    )
    dry_run = serializers.BooleanField()
    detail = serializers.CharField()


class BulkReplayInputSerializer(serializers.Serializer):
    ids = serializers.ListField(
        child=StrictIntegerField(min_value=1, max_value=ID_MAX), min_length=1, max_length=BULK_REPLAY_MAX
    )
    dry_run = StrictBooleanField(required=False, default=False)
    confirm = StrictBooleanField(
        required=False, default=False, help_text="Replays only when true; without it the call is a dry run."
    )


class BulkReplayOutputSerializer(serializers.Serializer):
    dry_run = serializers.BooleanField()
    requeued = serializers.IntegerField(help_text="Letters that made (or, dry, would make) a job.")
    skipped = serializers.IntegerField()
    results = DeadLetterReplayedSerializer(many=True)


def _result(result: ReplayResult) -> dict:
    return {
        "dead_letter_id": result.dead_letter_id,
        "job_id": result.job_id,
        "replayed": result.replayed,
        "action": result.action,
        "current": result.current,
        "dry_run": result.dry_run,
        "detail": result.detail,
    }


def _check_replay_permission(request) -> None:
    """A dry run only reads; a replay asks the permission the admin's replay action asks for."""
    if not request.user.has_perm("evaluation.replay_deadletter"):
        raise PermissionDenied("Replaying dead letters needs the evaluation.replay_deadletter permission.")


class DeadLetterListApi(APIView):
    permission_classes = [IsAdminUser]
    pagination_class = Pagination

    @extend_schema(parameters=[DeadLetterFilterSerializer], responses={200: DeadLetterOutputSerializer(many=True)})
    def get(self, request):
        query = DeadLetterFilterSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(dead_letter_list(query.filters()), request, view=self)
        return paginator.get_paginated_response(DeadLetterOutputSerializer(page, many=True).data)


class DeadLetterGroupsApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(parameters=[DeadLetterGroupQuerySerializer], responses={200: DeadLetterGroupsSerializer})
    def get(self, request):
        query = DeadLetterGroupQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        by = query.validated_data.pop("by") or "error_class"
        return Response({"by": by, "groups": dead_letter_groups(by=by, filters=query.filters())})


class DeadLetterReplayApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        request=None,
        parameters=[OpenApiParameter("dry_run", bool, description="What a replay would do, changing nothing.")],
        responses={200: DeadLetterReplayedSerializer, 202: DeadLetterReplayedSerializer, 403: PROBLEM, 404: PROBLEM},
    )
    def post(self, request, dead_letter_id: int):
        dry_run = serializers.BooleanField().to_internal_value(request.query_params.get("dry_run", False))
        if not dry_run:
            _check_replay_permission(request)
        if not DeadLetter.objects.filter(pk=dead_letter_id).exists():
            raise NotFound(f"There is no dead letter {dead_letter_id}.")
        result = dead_letter_replay(dead_letter_id=dead_letter_id, user=request.user, dry_run=dry_run)
        return Response(_result(result), status=status.HTTP_200_OK if dry_run else status.HTTP_202_ACCEPTED)


class DeadLetterBulkReplayApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="v1_ops_dead_letters_bulk_replay",
        request=BulkReplayInputSerializer,
        responses={200: BulkReplayOutputSerializer, 202: BulkReplayOutputSerializer, 403: PROBLEM, 404: PROBLEM},
    )
    def post(self, request):
        body = BulkReplayInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        ids = set(body.validated_data["ids"])
        dry_run = body.validated_data["dry_run"] or not body.validated_data["confirm"]
        if not dry_run:
            _check_replay_permission(request)
        missing = ids - set(DeadLetter.objects.filter(pk__in=ids).values_list("pk", flat=True))
        if missing:
            raise NotFound(
                f"There are no dead letters {', '.join(map(str, sorted(missing)))}.", missing=sorted(missing)
            )
        results = dead_letters_replay(ids=list(ids), user=request.user, dry_run=dry_run)
        requeued = sum(result.action == "requeue" for result in results)
        return Response(
            {
                "dry_run": dry_run,
                "requeued": requeued,
                "skipped": len(results) - requeued,
                "results": [_result(result) for result in results],
            },
            status=status.HTTP_200_OK if dry_run else status.HTTP_202_ACCEPTED,
        )


class KindWorkSerializer(serializers.Serializer):
    kind = serializers.CharField()
    queue = serializers.CharField()
    waiting = serializers.IntegerField(help_text="Pending, queued or retrying now.")
    processing = serializers.IntegerField(help_text="Running now.")
    finished = serializers.IntegerField(help_text="Reached a final state within the hour.")
    succeeded = serializers.IntegerField()
    dead = serializers.IntegerField()
    discarded = serializers.IntegerField()
    oldest_waiting_seconds = serializers.FloatField(allow_null=True, help_text="Oldest pending or queued job's wait.")


SERIES_HELP = "[time, value] pairs, oldest first; value null where nothing was measured."


class OpsDashboardSerializer(serializers.Serializer):
    now = serializers.DateTimeField()
    since = serializers.DateTimeField()
    bucket_seconds = serializers.IntegerField()
    kinds = KindWorkSerializer(many=True)
    queue_depths = serializers.DictField(child=serializers.IntegerField(), help_text="-1: the broker did not answer.")
    breaker = serializers.DictField(help_text='{"name", "state": closed | open | half_open, "retry_after"}')
    throughput = serializers.ListField(help_text="Jobs finished per bucket: " + SERIES_HELP)
    latency = serializers.DictField(help_text="p50, p95, p99 seconds (created to succeeded) per bucket: " + SERIES_HELP)
    retries = serializers.ListField(help_text="Tries ended in a transient error per bucket: " + SERIES_HELP)
    dead_letters = serializers.ListField(help_text="Dead letters per bucket: " + SERIES_HELP)
    lock_contention = serializers.ListField(help_text="Tries deferred by a held lock per bucket: " + SERIES_HELP)
    cache_hit_ratio = serializers.ListField(help_text="Hits over cached reads between samples (0-1): " + SERIES_HELP)
    queue_depth_history = serializers.DictField(help_text="Per queue, sampled: " + SERIES_HELP)
    oldest_waiting_history = serializers.DictField(help_text="Per kind, seconds, sampled: " + SERIES_HELP)
    cache_requests = serializers.DictField(child=serializers.IntegerField(), help_text="Cached reads in the hour.")


def _series(points) -> list[list]:
    return [[at, value] for at, value in points]


def _dashboard(dashboard: Dashboard) -> dict:
    return {
        **{name: getattr(dashboard, name) for name in ("now", "since", "bucket_seconds", "queue_depths", "breaker")},
        "kinds": dashboard.kinds,
        "cache_requests": dashboard.cache_requests,
        **{
            name: _series(getattr(dashboard, name))
            for name in ("throughput", "retries", "dead_letters", "lock_contention", "cache_hit_ratio")
        },
        **{
            name: {key: _series(points) for key, points in getattr(dashboard, name).items()}
            for name in ("latency", "queue_depth_history", "oldest_waiting_history")
        },
    }


class OpsDashboardApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(responses={200: OpsDashboardSerializer})
    def get(self, request):
        return Response(OpsDashboardSerializer(_dashboard(ops_dashboard())).data)
