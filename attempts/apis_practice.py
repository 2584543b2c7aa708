"""REST API of practice aids: mock interviews, hints, "I give up" and notes. Each class
validates input, calls one service or selector, shapes output."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from attempts import api_schema as shapes
from attempts.apis import StrictCharField, SubmitThrottle
from attempts.idempotent import creates_once
from attempts.models import Difficulty, QuestionKind
from attempts.selectors.attempts import attempt_get_for_user
from attempts.selectors.mock import (
    mock_interview_created_payload,
    mock_interview_get_for_user,
    mock_interview_list_for_user,
    mock_interview_payload,
    mock_interview_payloads,
)
from attempts.selectors.notes import note_get_for_user, note_payload
from attempts.selectors.payloads import attempt_hints_payload
from attempts.services.hints import attempt_give_up, attempt_hint_reveal
from attempts.services.mock import MOCK_MAX_MINUTES, MOCK_MAX_QUESTIONS, MOCK_MIN_MINUTES, mock_interview_create
from attempts.services.notes import NOTE_MAX_CHARS, note_save
from interviewprep.api import Pagination, json_object
from interviewprep.schema import PROBLEM


# One schema for any text up to the limit, blank included (DRF's allow_blank reads as a oneOf
# that an empty string matches twice); no NUL, as DRF says.
@extend_schema_field({"type": "string", "maxLength": NOTE_MAX_CHARS, "pattern": r"^[^\x00]*$"})
class NoteTextField(StrictCharField):
    def __init__(self, **kwargs):
        super().__init__(trim_whitespace=False, allow_blank=True, max_length=NOTE_MAX_CHARS, **kwargs)


class MockInterviewCreatedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    started_at = serializers.DateTimeField()
    deadline = serializers.DateTimeField()
    attempt_ids = serializers.ListField(child=serializers.IntegerField())


class MockAttemptSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    question_id = serializers.IntegerField()
    title = serializers.CharField()
    kind = serializers.ChoiceField(choices=QuestionKind.choices)
    status = serializers.CharField()
    version = serializers.IntegerField()


class MockSummaryRowSerializer(serializers.Serializer):
    attempt_id = serializers.IntegerField()
    question_id = serializers.IntegerField()
    title = serializers.CharField()
    kind = serializers.ChoiceField(choices=QuestionKind.choices)
    submitted = serializers.BooleanField()
    status = serializers.CharField()
    outcome = serializers.CharField(allow_null=True, help_text="scored or not_scored; null until graded.")
    score = serializers.FloatField(allow_null=True)
    max_score = serializers.FloatField(allow_null=True)
    time_used_seconds = serializers.IntegerField(allow_null=True, help_text="From the start to the last answer.")
    hints_used = serializers.IntegerField()
    gave_up = serializers.BooleanField()


class MockInterviewSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    started_at = serializers.DateTimeField()
    deadline = serializers.DateTimeField()
    duration_minutes = serializers.IntegerField()
    kinds = serializers.ListField(child=serializers.ChoiceField(choices=QuestionKind.choices))
    difficulty = serializers.ChoiceField(choices=Difficulty.choices, allow_null=True)
    finished = serializers.BooleanField(help_text="Whether the deadline has come.")
    seconds_left = serializers.IntegerField()
    attempts = MockAttemptSerializer(many=True)
    summary = MockSummaryRowSerializer(many=True, allow_null=True, help_text="Null until the deadline.")


class HintsSerializer(serializers.Serializer):
    attempt_id = serializers.IntegerField()
    hints_revealed = serializers.IntegerField()
    hints_total = serializers.IntegerField()
    hints = serializers.ListField(child=serializers.CharField(), help_text="The revealed hints, in order.")


class NoteSerializer(serializers.Serializer):
    question_id = serializers.IntegerField()
    text = serializers.CharField(allow_blank=True)
    updated_at = serializers.DateTimeField(allow_null=True)


class MockInterviewListCreateApi(APIView):
    # Starting a session opens attempts, as a practice request does: the same per-user limit.
    throttle_scope = "submit"
    pagination_class = Pagination

    def get_throttles(self):
        return [SubmitThrottle()] if self.request.method == "POST" else []

    class InputSerializer(serializers.Serializer):
        duration_minutes = serializers.IntegerField(
            min_value=MOCK_MIN_MINUTES, max_value=MOCK_MAX_MINUTES, required=False, help_text="Default 45."
        )
        kinds = serializers.ListField(
            child=serializers.ChoiceField(choices=QuestionKind.choices),
            min_length=1,
            max_length=MOCK_MAX_QUESTIONS,
            required=False,
            help_text='One question per entry, in order. Default ["coding", "behavioral"].',
        )
        difficulty = serializers.ChoiceField(choices=Difficulty.choices, required=False)

    @extend_schema(responses={200: MockInterviewSerializer(many=True)})
    def get(self, request):
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(mock_interview_list_for_user(user=request.user), request, view=self)
        return paginator.get_paginated_response(mock_interview_payloads(list(page)))

    # 409: the bank has no active question of a kind asked for.
    @extend_schema(request=InputSerializer, responses={201: MockInterviewCreatedSerializer, 400: PROBLEM, 409: PROBLEM})
    @creates_once(201, key_required=True)
    def post(self, request, *, data: dict, key: str) -> dict:
        return mock_interview_created_payload(mock_interview_create(user=request.user, **data))


class MockInterviewDetailApi(APIView):
    @extend_schema(responses={200: MockInterviewSerializer})
    def get(self, request, mock_interview_id: int):
        interview = mock_interview_get_for_user(user=request.user, mock_interview_id=mock_interview_id)
        return Response(mock_interview_payload(interview))


class AttemptHintsApi(APIView):
    class InputSerializer(serializers.Serializer):
        count = serializers.IntegerField(
            min_value=1,
            required=False,
            help_text="Reveal hints up to this one (a repeat changes nothing); default: one more.",
        )

    # 409: the question has no hints, or fewer than `count`.
    @extend_schema(request=InputSerializer, responses={200: HintsSerializer, 409: PROBLEM})
    @creates_once(200, key_required=False)
    def post(self, request, attempt_id: int, *, data: dict, key: str | None) -> dict:
        return attempt_hints_payload(attempt_hint_reveal(user=request.user, attempt_id=attempt_id, **data))


class AttemptGiveUpApi(APIView):
    @extend_schema(request=None, responses={200: shapes.AttemptSerializer})
    def post(self, request, attempt_id: int):
        attempt_give_up(user=request.user, attempt_id=attempt_id)
        return Response(attempt_get_for_user(user=request.user, attempt_id=attempt_id))


class QuestionNoteApi(APIView):
    class InputSerializer(serializers.Serializer):
        text = NoteTextField(help_text="The whole note.")

    @extend_schema(responses={200: NoteSerializer})
    def get(self, request, question_id: int):
        return Response(note_get_for_user(user=request.user, question_id=question_id))

    @extend_schema(request=InputSerializer, responses={200: NoteSerializer})
    def put(self, request, question_id: int):
        serializer = self.InputSerializer(data=json_object(request))
        serializer.is_valid(raise_exception=True)
        note = note_save(user=request.user, question_id=question_id, **serializer.validated_data)
        return Response(note_payload(question_id=question_id, note=note))
