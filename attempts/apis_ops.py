"""Staff calls about the question bank: the regrade a question change offers, and its progress."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import IsAdminUser
from rest_framework.response import Response
from rest_framework.views import APIView

from attempts.models import QuestionChange
from attempts.selectors.regrades import regrade_candidates, regrade_progress
from attempts.services.regrades import question_change_latest, regrade_start
from interviewprep.schema import PROBLEM

REGRADE_PERMISSION = "attempts.regrade_questionchange"


class RegradeSerializer(serializers.Serializer):
    question = serializers.CharField(help_text="The question's slug.")
    change_id = serializers.IntegerField()
    changed = serializers.ListField(child=serializers.ChoiceField(choices=["tests", "rubric", "reference"]))
    summary = serializers.CharField(help_text="What candidates whose score changes are told.")
    changed_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    would_touch = serializers.IntegerField(help_text="Scored latest submissions a regrade of the change touches.")
    jobs_created = serializers.IntegerField(help_text="Regrade jobs this call made: 0 when started already.")
    regrades = serializers.IntegerField()
    verdicts = serializers.DictField(child=serializers.IntegerField())
    jobs = serializers.DictField(child=serializers.IntegerField(), help_text="The regrade jobs by status.")


def _body(change: QuestionChange, *, jobs_created: int = 0) -> dict:
    progress = regrade_progress(change=change)
    return {
        "question": change.question.slug,
        "change_id": change.pk,
        "changed": change.fields,
        "summary": change.summary,
        "changed_at": change.created_at,
        "started_at": change.regrade_started_at,
        "would_touch": regrade_candidates(change=change).count(),
        "jobs_created": jobs_created,
        "regrades": progress.regrades,
        "verdicts": progress.verdicts,
        "jobs": progress.jobs,
    }


class QuestionRegradeApi(APIView):
    """The question's latest change: its regrade's progress (GET), or its start (POST)."""

    permission_classes = [IsAdminUser]

    @extend_schema(responses={200: RegradeSerializer, 404: PROBLEM})
    def get(self, request, slug: str):
        return Response(_body(question_change_latest(slug=slug)))

    @extend_schema(request=None, responses={202: RegradeSerializer, 200: RegradeSerializer, 403: PROBLEM, 404: PROBLEM})
    def post(self, request, slug: str):
        if not request.user.has_perm(REGRADE_PERMISSION):
            raise PermissionDenied(f"Starting a regrade needs the {REGRADE_PERMISSION} permission.")
        started = regrade_start(change_id=question_change_latest(slug=slug).pk, user=request.user)
        code = status.HTTP_202_ACCEPTED if started.first else status.HTTP_200_OK
        return Response(_body(started.change, jobs_created=started.jobs), status=code)
