"""REST API of progress and the review schedule: one selector call each, shaped for output."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from attempts.selectors.progress import progress_for_user
from attempts.selectors.reviews import review_due_list_for_user, review_list_for_user
from interviewprep.api import Pagination

SCORE_HELP = "Percent of the full score, 0 to 100."


class ProgressGroupSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    questions = serializers.IntegerField()
    practised = serializers.IntegerField()
    solved = serializers.IntegerField()
    average_best_score = serializers.FloatField(allow_null=True, help_text="Mean best score of the practised ones.")


class ProgressDaySerializer(serializers.Serializer):
    date = serializers.DateField(source="day", help_text="A day in UTC.")
    answers = serializers.IntegerField()
    average_score = serializers.FloatField(help_text=SCORE_HELP)
    best_score = serializers.FloatField(help_text=SCORE_HELP)


class ProgressApi(APIView):
    class OutputSerializer(serializers.Serializer):
        questions = serializers.IntegerField()
        practised = serializers.IntegerField()
        solved = serializers.IntegerField()
        scored_answers = serializers.IntegerField()
        by_kind = ProgressGroupSerializer(many=True)
        by_difficulty = ProgressGroupSerializer(many=True)
        by_topic = ProgressGroupSerializer(many=True)
        over_time = ProgressDaySerializer(many=True)

    @extend_schema(responses={200: OutputSerializer})
    def get(self, request):
        return Response(self.OutputSerializer(progress_for_user(user_id=request.user.pk)).data)


class ReviewOutputSerializer(serializers.Serializer):
    question_id = serializers.IntegerField()
    due_at = serializers.DateTimeField()
    best_score = serializers.FloatField(help_text=SCORE_HELP)
    last_score = serializers.FloatField(help_text=SCORE_HELP)
    reviews = serializers.IntegerField(help_text="Scored answers the schedule was replayed from.")


class ReviewListApi(APIView):
    """Every question the caller practised, soonest due first."""

    pagination_class = Pagination

    def reviews(self, request) -> list:
        return review_list_for_user(user_id=request.user.pk)

    @extend_schema(responses={200: ReviewOutputSerializer(many=True)})
    def get(self, request):
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(self.reviews(request), request, view=self)
        return paginator.get_paginated_response(ReviewOutputSerializer(page, many=True).data)


class ReviewDueListApi(ReviewListApi):
    """The questions due for review now, most overdue first."""

    def reviews(self, request) -> list:
        return review_due_list_for_user(user_id=request.user.pk)
