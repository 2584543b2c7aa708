"""REST API of attempts: each class validates input, calls one service or selector, shapes output."""

from __future__ import annotations

import json
import math

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny, IsAdminUser
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from attempts import api_schema as shapes
from attempts.cache import attempt_cache_diff
from attempts.idempotent import creates_once
from attempts.models import Difficulty, QuestionKind
from attempts.selectors.attempts import (
    attempt_draft_get_for_user,
    attempt_draft_saved_payload,
    attempt_get_for_user,
    attempt_list_for_user,
    attempt_payloads,
    practice_request_get_for_user,
    submission_get_for_user,
    submission_list_for_attempt,
    submission_payloads,
)
from attempts.selectors.history import QuestionRecord, question_records_for_user
from attempts.selectors.payloads import attempt_api_payload, practice_request_payload, submission_accepted_payload
from attempts.selectors.questions import (
    question_expected_words,
    question_get,
    question_list,
    question_starter_codes,
)
from attempts.selectors.runs import run_accepted_payload, run_get_for_user, run_payload
from attempts.selectors.timeline import attempt_timeline, timeline_payload
from attempts.services.accounts import token_obtain, user_register
from attempts.services.attempts import attempt_create, attempt_draft_save, submission_create
from attempts.services.idempotency import render_body
from attempts.services.practice import practice_request_create
from attempts.services.runs import RUN_MAX_INPUTS, run_create
from attempts.services.transitions import attempt_channel, run_channel
from attempts.throttles import RegisterThrottle
from evaluation.languages import LANGUAGES, languages_status
from interviewprep.api import Pagination, StrictBooleanField, json_object
from interviewprep.async_views import awaits_only_when
from interviewprep.converters import ID_MAX
from interviewprep.errors import NotFound
from interviewprep.notify import read_until
from interviewprep.schema import PROBLEM

# The longest `?wait=` on an attempt: below the usual 60 s idle timeout of proxies in front.
MAX_WAIT_SECONDS = 30
RUN_DONE = ("completed", "failed")


def _like_drf_view(view, cls):
    """An async view around a DRF one, marked as DRF marks its own: drf-spectacular reads its
    class, and CSRF stays DRF's business (enforced for session users, not for tokens)."""
    view.cls, view.initkwargs, view.csrf_exempt = cls, {}, True
    return view


class StrictCharField(serializers.CharField):
    """A string and nothing else: a number or a list is a client's mistake, not an answer."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


# Not blank by Python's strip(), which also takes \x1c-\x1f and \x85 for spaces; no NUL, as DRF says.
@extend_schema_field({"type": "string", "minLength": 1, "pattern": r"^[^\x00]*[^\s\x00\x1c-\x1f\x85][^\x00]*$"})
class AnswerField(StrictCharField):
    """An answer to submit or run: blank passes here and the service refuses it (400, its own words)."""

    def __init__(self, **kwargs):
        super().__init__(trim_whitespace=False, allow_blank=True, **kwargs)


@extend_schema_field({"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": MAX_WAIT_SECONDS})
class WaitField(serializers.FloatField):
    """`?wait=` seconds; the bounds are checked by the attempt's query serializer."""


@extend_schema_field({"type": "string", "enum": list(LANGUAGES)})
class LanguageField(StrictCharField):
    """Checked by the service (answer_language_validate: known, installed here, and the
    default for a prose question); the schema names the ids it knows."""


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "array", "items": {}},
        "minItems": 1,
        "maxItems": RUN_MAX_INPUTS,
        "nullable": True,
    }
)
class RunInputsField(serializers.JSONField):
    """Checked by the service (run_inputs_validate): 1 to RUN_MAX_INPUTS argument lists, or null."""


# An empty filter (`?kind=`) is ignored, as DRF ignores empty optional query values.
EMPTY_FILTERS_IGNORED = [
    OpenApiParameter("kind", str, enum=[*QuestionKind.values, ""]),
    OpenApiParameter("difficulty", str, enum=[*Difficulty.values, ""]),
]


class SubmitThrottle(ScopedRateThrottle):
    scope_attr = "throttle_scope"

    def get_cache_key(self, request, view):
        # Per user; requests without a user were refused by authentication already.
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class RunThrottle(SubmitThrottle):
    """Per user, with the `run` scope's own rate (RUN_RATE): trying code is no submit."""


class CredentialsSerializer(serializers.Serializer):
    username = StrictCharField(max_length=150)
    password = StrictCharField(max_length=128, trim_whitespace=False)


class QuestionFiltersSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=QuestionKind.choices, required=False)
    difficulty = serializers.ChoiceField(choices=Difficulty.choices, required=False)
    # Blank (or only spaces) is no topic, as an empty kind or difficulty is no filter.
    topic = StrictCharField(max_length=60, required=False, allow_blank=True)


class RegisterApi(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list = []
    throttle_classes = [RegisterThrottle]

    InputSerializer = CredentialsSerializer

    @extend_schema(request=InputSerializer, responses={201: shapes.RegisteredSerializer})
    def post(self, request):
        serializer = self.InputSerializer(data=json_object(request))
        serializer.is_valid(raise_exception=True)
        user, token = user_register(**serializer.validated_data)
        return Response({"id": user.pk, "username": user.username, "token": token}, status=status.HTTP_201_CREATED)


class TokenApi(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list = []

    InputSerializer = CredentialsSerializer

    # 429: the log-in lock-out (django-axes), no throttle class.
    @extend_schema(request=InputSerializer, responses={200: shapes.TokenSerializer, 429: PROBLEM})
    def post(self, request):
        serializer = self.InputSerializer(data=json_object(request))
        serializer.is_valid(raise_exception=True)
        # Django's request, not DRF's wrapper: axes marks a refused login on it for its middleware.
        return Response({"token": token_obtain(request=request._request, **serializer.validated_data)})


class QuestionOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    slug = serializers.CharField()
    title = serializers.CharField()
    kind = serializers.CharField()
    difficulty = serializers.CharField()
    topics = serializers.ListField(child=serializers.CharField())


class QuestionListApi(APIView):
    class FilterSerializer(QuestionFiltersSerializer):
        topic = StrictCharField(
            max_length=60, required=False, allow_blank=True, help_text="One of the question's topics, in any case."
        )
        q = StrictCharField(
            max_length=200, required=False, help_text="Words of the title or prompt, in any case (full-text search)."
        )

    class OutputSerializer(QuestionOutputSerializer):
        best_score = serializers.SerializerMethodField(
            help_text="The caller's best score on the question, in percent of a full score; null when never scored."
        )
        solved = serializers.SerializerMethodField(help_text="Whether the caller scored full marks on it once.")

        def _record(self, question) -> QuestionRecord | None:
            return self.context["records"].get(question.pk)

        def get_best_score(self, question) -> float | None:
            record = self._record(question)
            return record.best_percent if record else None

        def get_solved(self, question) -> bool:
            record = self._record(question)
            return record.solved if record else False

    pagination_class = Pagination

    @extend_schema(parameters=[FilterSerializer, *EMPTY_FILTERS_IGNORED], responses={200: OutputSerializer(many=True)})
    def get(self, request):
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(question_list(**filters.validated_data), request, view=self)
        # One read of the scores for the whole page, whatever its size.
        records = question_records_for_user(user_id=request.user.pk, question_ids=[q.pk for q in page])
        return paginator.get_paginated_response(
            self.OutputSerializer(page, many=True, context={"records": records}).data
        )


@extend_schema_field(
    {
        "type": "object",
        "properties": {language_id: {"type": "string"} for language_id in LANGUAGES},
        "additionalProperties": False,
        "description": "Each language's starter code, by language id; empty for a prose question.",
    }
)
class StarterCodeField(serializers.Field):
    def to_representation(self, question):
        return question_starter_codes(question=question)


@extend_schema_field(
    {
        "type": "object",
        "nullable": True,
        "properties": {name: {"type": "integer"} for name in ("min", "max", "min_scored")},
        "description": "A written answer's expected length in words; under `min_scored` it is not scored. "
        "Null for a coding question.",
    }
)
class ExpectedWordsField(serializers.Field):
    def to_representation(self, question):
        return question_expected_words(question=question)


class QuestionDetailApi(APIView):
    class OutputSerializer(QuestionOutputSerializer):
        prompt = serializers.CharField()
        starter_code = StarterCodeField(source="*", read_only=True)
        examples = serializers.JSONField()
        expected_words = ExpectedWordsField(source="*", read_only=True)

    @extend_schema(responses={200: OutputSerializer})
    def get(self, request, question_id: int):
        return Response(self.OutputSerializer(question_get(question_id=question_id)).data)


class AttemptListCreateApi(APIView):
    pagination_class = Pagination

    class InputSerializer(serializers.Serializer):
        question_id = serializers.IntegerField(min_value=1, max_value=ID_MAX)

    @extend_schema(responses={200: shapes.AttemptSerializer(many=True)})
    def get(self, request):
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(attempt_list_for_user(user=request.user), request, view=self)
        return paginator.get_paginated_response(attempt_payloads(page))

    # 404: no such question. The key is optional, honoured when sent: a retried create opens one attempt.
    @extend_schema(request=InputSerializer, responses={201: shapes.AttemptSerializer, 404: PROBLEM})
    @creates_once(status.HTTP_201_CREATED, key_required=False)
    def post(self, request, *, data: dict, key: str | None) -> dict:
        return attempt_api_payload(attempt_create(user=request.user, **data), None)


class AttemptDetailApi(APIView):
    """One attempt. Routed through `as_waiting_view()`: with `?wait=`, the answer waits for
    `min_version` on the event loop, between reads made by this sync view."""

    class QuerySerializer(serializers.Serializer):
        min_version = serializers.IntegerField(min_value=0, required=False)
        wait = WaitField(
            required=False,
            help_text="Seconds (more than 0, at most 30) to wait for the attempt to reach min_version; needs it.",
        )

        WAIT_RULE = f"wait is a number of seconds, more than 0 and at most {MAX_WAIT_SECONDS}."

        def validate_wait(self, value: float) -> float:
            if not (math.isfinite(value) and 0 < value <= MAX_WAIT_SECONDS):
                raise serializers.ValidationError(self.WAIT_RULE)
            return value

        def validate(self, data: dict) -> dict:
            if "wait" in self.initial_data and "wait" not in data:  # `?wait=`, which DRF skips
                raise serializers.ValidationError({"wait": self.WAIT_RULE})
            if "wait" in data and "min_version" not in data:
                raise serializers.ValidationError({"wait": "wait needs min_version, the version to wait for."})
            return data

    @extend_schema(parameters=[QuerySerializer], responses={200: shapes.AttemptSerializer})
    def get(self, request, attempt_id: int):
        min_version = None
        # Most reads (every poll) carry no query, which validates to nothing: building the
        # serializer for it cost a twentieth of the read.
        if request.query_params:
            query = self.QuerySerializer(data=request.query_params)
            query.is_valid(raise_exception=True)
            min_version = query.validated_data.get("min_version")
        return Response(attempt_get_for_user(user=request.user, attempt_id=attempt_id, min_version=min_version))

    @classmethod
    def as_waiting_view(cls):
        """An async view around this one. Authentication, validation, permissions, 404s and every
        read stay in the sync view, run through `sync_to_async`; only the wait between reads is
        the async view's, and it holds no thread. A read that is not 200 (400, 401, 404) answers
        at once."""
        sync_view = cls.as_view()
        read = sync_to_async(sync_view)

        # Under ASGI a request without `wait` goes to the sync view in one hop.
        @awaits_only_when(lambda request: "wait" in request.GET, sync_view=sync_view)
        async def view(request, attempt_id: int):
            query = cls.QuerySerializer(data=request.GET)
            if "wait" not in request.GET or not query.is_valid():
                return await read(request, attempt_id=attempt_id)
            min_version = query.validated_data["min_version"]
            return await read_until(
                lambda: read(request, attempt_id=attempt_id),
                attempt_channel(attempt_id),
                lambda answer: answer.status_code != 200 or answer.data["version"] >= min_version,
                timeout=query.validated_data["wait"],
                # A version older than the one awaited: no need to look.
                moot=lambda message: message.isdigit() and int(message) < min_version,
            )

        return _like_drf_view(view, cls)


class SubmissionListCreateApi(APIView):
    throttle_scope = "submit"
    pagination_class = Pagination

    class InputSerializer(serializers.Serializer):
        answer = AnswerField()
        language = LanguageField(required=False, help_text="Default: the attempt's last language.")

    def get_throttles(self):
        return [SubmitThrottle()] if self.request.method == "POST" else []

    @extend_schema(responses={200: shapes.SubmissionSerializer(many=True)})
    def get(self, request, attempt_id: int):
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(
            submission_list_for_attempt(user=request.user, attempt_id=attempt_id), request, view=self
        )
        return paginator.get_paginated_response(submission_payloads(page))

    @extend_schema(request=InputSerializer, responses={202: shapes.SubmissionAcceptedSerializer, 503: PROBLEM})
    @creates_once(status.HTTP_202_ACCEPTED, key_required=True)
    def post(self, request, attempt_id: int, *, data: dict, key: str) -> dict:
        submission = submission_create(user=request.user, attempt_id=attempt_id, **data, correlation_id=key)
        return submission_accepted_payload(submission)


class SubmissionDetailApi(APIView):
    @extend_schema(responses={200: shapes.SubmissionSerializer})
    def get(self, request, submission_id: int):
        return Response(submission_get_for_user(user=request.user, submission_id=submission_id))


class PracticeRequestCreateApi(APIView):
    throttle_scope = "submit"
    throttle_classes = [SubmitThrottle]

    class InputSerializer(QuestionFiltersSerializer):
        due = StrictBooleanField(
            required=False,
            help_text="Pick the most overdue question of the review schedule, among those the filters match.",
        )

    @extend_schema(request=InputSerializer, responses={202: shapes.PracticeRequestAcceptedSerializer})
    @creates_once(status.HTTP_202_ACCEPTED, key_required=True)
    def post(self, request, *, data: dict, key: str) -> dict:
        practice = practice_request_create(user=request.user, **data, correlation_id=key)
        return {"id": practice.pk, "status": practice.status}


class PracticeRequestDetailApi(APIView):
    @extend_schema(responses={200: shapes.PracticeRequestSerializer})
    def get(self, request, practice_request_id: int):
        practice = practice_request_get_for_user(user=request.user, practice_request_id=practice_request_id)
        return Response(practice_request_payload(practice))


class AttemptCacheDiffApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(responses={200: shapes.CacheDiffSerializer})
    def get(self, request, attempt_id: int):
        diff = attempt_cache_diff(attempt_id=attempt_id)
        if diff["database"] is None:
            raise NotFound(f"There is no attempt {attempt_id}.")
        return Response(diff)


class AttemptTimelineApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(responses={200: shapes.TimelineSerializer})
    def get(self, request, attempt_id: int):
        timeline = attempt_timeline(attempt_id=attempt_id)
        if timeline is None:
            raise NotFound(f"There is no attempt {attempt_id}.")
        return Response({"attempt_id": attempt_id, **timeline_payload(timeline)})


class RunCreateApi(APIView):
    throttle_scope = "run"
    throttle_classes = [RunThrottle]

    class InputSerializer(serializers.Serializer):
        answer = AnswerField()
        # The service names what is accepted; here only the types.
        language = LanguageField(required=False, help_text="Default: the attempt's last language.")
        inputs = RunInputsField(required=False, allow_null=True)

    # 200 when the run finished within RUN_WAIT_SECONDS, else 202. The key is optional, honoured
    # when sent: a retried run runs once.
    @extend_schema(
        request=InputSerializer,
        responses={200: shapes.RunSerializer, 202: shapes.RunAcceptedSerializer, 503: PROBLEM},
    )
    @creates_once(status.HTTP_202_ACCEPTED, key_required=False)
    def post(self, request, attempt_id: int, *, data: dict, key: str | None) -> dict:
        run = run_create(user=request.user, attempt_id=attempt_id, **data, correlation_id=key or "")
        return run_accepted_payload(run)

    @classmethod
    def as_waiting_view(cls):
        """The create, then a wait of up to RUN_WAIT_SECONDS on the event loop for the run to
        finish: 200 with its cases when it did, else the create's 202 (at once when it is 0)."""
        create = sync_to_async(cls.as_view())
        read = sync_to_async(_run_read)

        async def view(request, attempt_id: int):
            created = await create(request, attempt_id=attempt_id)
            wait = settings.CONFIG.run_wait_seconds
            if created.status_code != 202 or not wait:
                return created
            run_id = json.loads(created.content)["id"]
            payload = await read_until(
                lambda: read(request.user, run_id),
                run_channel(run_id),
                lambda payload: payload["status"] in RUN_DONE,
                timeout=wait,
            )
            if payload["status"] not in RUN_DONE:
                return created
            return HttpResponse(render_body(payload), content_type="application/json")

        return _like_drf_view(view, cls)


def _run_read(user, run_id: int) -> dict:
    return run_payload(run_get_for_user(user=user, run_id=run_id))


class RunDetailApi(APIView):
    @extend_schema(responses={200: shapes.RunSerializer})
    def get(self, request, run_id: int):
        return Response(run_payload(run_get_for_user(user=request.user, run_id=run_id)))


class AttemptDraftApi(APIView):
    class InputSerializer(serializers.Serializer):
        answer = StrictCharField(trim_whitespace=False, allow_blank=True)
        language = LanguageField(required=False, help_text="Default: the attempt's last language.")

    @extend_schema(responses={200: shapes.DraftSerializer})
    def get(self, request, attempt_id: int):
        return Response(attempt_draft_get_for_user(user=request.user, attempt_id=attempt_id))

    @extend_schema(
        request=InputSerializer,
        responses={200: shapes.DraftSavedSerializer},
    )
    def put(self, request, attempt_id: int):
        serializer = self.InputSerializer(data=json_object(request))
        serializer.is_valid(raise_exception=True)
        attempt = attempt_draft_save(user=request.user, attempt_id=attempt_id, **serializer.validated_data)
        return Response(attempt_draft_saved_payload(attempt))


class LanguageListApi(APIView):
    """The languages answers may be written in, and whether each one's toolchain is installed here."""

    @extend_schema(responses={200: shapes.LanguageSerializer(many=True)})
    def get(self, request):
        return Response(languages_status())
