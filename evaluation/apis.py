"""Staff operations on the job machinery: dead letters and their replay."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission, IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from evaluation.jobs import dead_letter_list, dead_letter_replay
from evaluation.models import DeadLetter
from interviewprep.api import Pagination
from interviewprep.errors import NotFound


class DeadLetterOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    job_id = serializers.IntegerField()
    attempt_id = serializers.SerializerMethodField()
    submission_id = serializers.SerializerMethodField()
    kind = serializers.CharField()
    subject_id = serializers.IntegerField()
    error = serializers.CharField()
    tries = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    replayed_at = serializers.DateTimeField(allow_null=True)

    def get_attempt_id(self, letter: DeadLetter) -> int | None:
        return letter.context.get("attempt_id")

    def get_submission_id(self, letter: DeadLetter) -> int | None:
        return letter.context.get("submission_id")


class DeadLetterReplayedSerializer(serializers.Serializer):
    dead_letter_id = serializers.IntegerField()
    job_id = serializers.IntegerField()
    replayed = serializers.BooleanField(help_text="False when the letter was replayed already.")
    detail = serializers.CharField()


class DeadLetterListApi(APIView):
    permission_classes = [IsAdminUser]
    pagination_class = Pagination

    @extend_schema(responses={200: DeadLetterOutputSerializer(many=True)})
    def get(self, request):
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(dead_letter_list(), request, view=self)
        return paginator.get_paginated_response(DeadLetterOutputSerializer(page, many=True).data)


class CanReplay(BasePermission):
    """The same permission the admin's replay action asks for."""

    def has_permission(self, request, view) -> bool:
        return request.user.has_perm("evaluation.replay_deadletter")


class DeadLetterReplayApi(APIView):
    permission_classes = [IsAdminUser, CanReplay]

    @extend_schema(request=None, responses={202: DeadLetterReplayedSerializer})
    def post(self, request, dead_letter_id: int):
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
