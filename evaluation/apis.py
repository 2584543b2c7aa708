"""Staff operations: dead letters and their replay, the cache diff of an attempt."""

from __future__ import annotations

from rest_framework import serializers, status
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from attempts.errors import NotFound
from attempts.selectors.cache import attempt_cache_diff
from evaluation.selectors import dead_letter_list
from evaluation.services.jobs import dead_letter_replay
from interviewprep.api import Pagination


class DeadLetterOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    job_id = serializers.IntegerField()
    attempt_id = serializers.IntegerField(allow_null=True)
    submission_id = serializers.IntegerField(allow_null=True)
    kind = serializers.CharField()
    error = serializers.CharField()
    tries = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    replayed_at = serializers.DateTimeField(allow_null=True)


class DeadLetterListApi(APIView):
    permission_classes = [IsAdminUser]

    def get(self, request):
        paginator = Pagination()
        page = paginator.paginate_queryset(dead_letter_list(), request, view=self)
        return paginator.get_paginated_response(DeadLetterOutputSerializer(page, many=True).data)


class DeadLetterReplayApi(APIView):
    permission_classes = [IsAdminUser]

    def post(self, request, dead_letter_id: int):
        from evaluation.models import DeadLetter

        if not DeadLetter.objects.filter(pk=dead_letter_id).exists():
            raise NotFound(f"There is no dead letter {dead_letter_id}.")
        result = dead_letter_replay(dead_letter_id=dead_letter_id, user=request.user)
        return Response(
            {
                "dead_letter_id": result.dead_letter_id,
                "job_id": result.job_id,
                "replayed": result.replayed,
                "detail": result.detail,
            },
            status=status.HTTP_202_ACCEPTED,
        )


class AttemptCacheDiffApi(APIView):
    permission_classes = [IsAdminUser]

    def get(self, request, attempt_id: int):
        diff = attempt_cache_diff(attempt_id=attempt_id)
        if diff["database"] is None:
            raise NotFound(f"There is no attempt {attempt_id}.")
        return Response(diff)
