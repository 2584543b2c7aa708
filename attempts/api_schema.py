"""The bodies the attempts API answers, as serializers for the OpenAPI schema only: the payload
functions (attempts/selectors/) build the bodies, these describe them for clients."""

from __future__ import annotations

from rest_framework import serializers

from attempts.models import AttemptStatus, PracticeRequestStatus, RunStatus, SubmissionStatus
from evaluation.languages import LANGUAGES

# One enum in the schema, LanguageEnum (SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]).
LANGUAGE_IDS = list(LANGUAGES)


def _language(help_text: str) -> serializers.ChoiceField:
    return serializers.ChoiceField(choices=LANGUAGE_IDS, help_text=help_text)


class RegisteredSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    token = serializers.CharField()


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField()


class ScoreChangeSerializer(serializers.Serializer):
    previous_outcome = serializers.CharField(help_text='The old result\'s outcome: "scored" or "not_scored".')
    previous_score = serializers.FloatField(allow_null=True)
    previous_max_score = serializers.FloatField(allow_null=True)
    changed_at = serializers.DateTimeField()
    reason = serializers.CharField(help_text='Why, e.g. "the question\'s hidden tests changed".')


class ResultSerializer(serializers.Serializer):
    submission_id = serializers.IntegerField()
    outcome = serializers.ChoiceField(choices=["scored", "not_scored"])
    reason = serializers.ChoiceField(
        choices=["blank", "too_short", "off_topic", "not_english"],
        allow_null=True,
        help_text="Why a not-scored answer has no score; null when scored.",
    )
    score = serializers.FloatField(allow_null=True)
    max_score = serializers.FloatField()
    feedback = serializers.CharField(allow_blank=True)
    details = serializers.JSONField(help_text="Depends on the question's evaluator: code, rubric or remote.")
    score_change = ScoreChangeSerializer(
        allow_null=True, help_text="Set when a regrade after a question change replaced the score: the old one and why."
    )


class QueuePositionSerializer(serializers.Serializer):
    position = serializers.IntegerField(allow_null=True)
    estimated_seconds = serializers.FloatField(allow_null=True)


class ReferenceSerializer(serializers.Serializer):
    answer = serializers.CharField(allow_blank=True)
    explanation = serializers.CharField(allow_blank=True)


class AttemptMockInterviewSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    deadline = serializers.DateTimeField(help_text="A submit from this moment on is refused with 409.")


class AttemptSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    question_id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=AttemptStatus.choices)
    version = serializers.IntegerField()
    latest_submission_id = serializers.IntegerField(allow_null=True)
    language = _language("The last language of a submit, a run or a draft save; a submit or run without one uses it.")
    result = ResultSerializer(allow_null=True, help_text="Set when completed; always the latest submission's.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    queue = QueuePositionSerializer(required=False, help_text="Only while the attempt is queued.")
    hints_revealed = serializers.IntegerField(help_text="How many of the question's hints were revealed, in order.")
    gave_up = serializers.BooleanField(help_text='Whether the candidate chose "I give up".')
    reference = ReferenceSerializer(
        allow_null=True, help_text="The model answer and its explanation: null until a full score or a give-up."
    )
    mock_interview = AttemptMockInterviewSerializer(allow_null=True, help_text="The timed session it belongs to.")


class SubmissionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    attempt_id = serializers.IntegerField()
    answer = serializers.CharField(help_text="The answer as it was submitted.")
    language = _language("The language the answer is written in.")
    status = serializers.ChoiceField(choices=SubmissionStatus.choices)
    created_at = serializers.DateTimeField()
    result = ResultSerializer(allow_null=True)


class SubmissionAcceptedSerializer(serializers.Serializer):
    attempt_id = serializers.IntegerField()
    submission_id = serializers.IntegerField()
    language = _language("The language the answer is written in.")
    status = serializers.ChoiceField(choices=SubmissionStatus.choices)
    version = serializers.IntegerField(help_text="The attempt's version once the submission is queued.")


class PracticeRequestAcceptedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=PracticeRequestStatus.choices)


class PracticeRequestSerializer(PracticeRequestAcceptedSerializer):
    question_id = serializers.IntegerField(allow_null=True)
    attempt_id = serializers.IntegerField(allow_null=True)
    note = serializers.CharField(allow_blank=True)


class CacheDiffSerializer(serializers.Serializer):
    cache = serializers.JSONField(allow_null=True, help_text="The cached copy, null when none.")
    database = serializers.JSONField(help_text="The attempt as the database has it.")
    consistent = serializers.BooleanField()
    floor = serializers.IntegerField(allow_null=True)
    cache_error = serializers.CharField(required=False, help_text="Only when Redis did not answer.")


class TimelineEventSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    type = serializers.ChoiceField(choices=["request", "state", "try", "cache"])
    summary = serializers.CharField()
    request_id = serializers.CharField(help_text="The X-Request-ID that caused it; empty when unknown.")
    details = serializers.JSONField(
        help_text="By type: the submission or run; actor and reason; job, worker, timings; "
        "the cache write's stamp, version, status, outcome and writing process."
    )


class TimelineSerializer(serializers.Serializer):
    attempt_id = serializers.IntegerField()
    events = TimelineEventSerializer(many=True, help_text="Oldest first.")
    cache_writes = serializers.ChoiceField(
        choices=["shown", "unavailable"], help_text="unavailable: Redis did not answer; the other events stand."
    )


class RunAcceptedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=RunStatus.choices)
    language = _language("The language the answer is written in.")


class RanLanguageSerializer(serializers.Serializer):
    id = _language("The language's id.")
    name = serializers.CharField()
    version = serializers.CharField(allow_null=True, help_text="The toolchain's version; null when unknown.")


class RunTimeSerializer(serializers.Serializer):
    compile_ms = serializers.FloatField(allow_null=True, help_text="Compiling the answer; null for Python.")
    run_ms = serializers.FloatField(allow_null=True, help_text="Running the cases; null when it did not compile.")
    compile_cached = serializers.BooleanField(
        help_text="The same text was compiled before and that build was used (compile_ms is then 0)."
    )


class RunSerializer(RunAcceptedSerializer):
    attempt_id = serializers.IntegerField()
    language = RanLanguageSerializer(
        help_text="What the run is in: once completed, the language and version the worker ran it with "
        "(as a submission's `details.language`); before, the web server's own toolchain version."
    )
    time = RunTimeSerializer(allow_null=True, help_text="Null until the run is completed.")
    cases = serializers.ListField(child=serializers.DictField(), help_text="[] until the run is completed.")
    load_error = serializers.DictField(allow_null=True)
    stopped = serializers.DictField(allow_null=True)
    error = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()


class DraftSerializer(serializers.Serializer):
    language = _language("The attempt's language: `answer` is its draft.")
    answer = serializers.CharField(allow_blank=True, help_text="The draft of `language`; empty when there is none.")
    answers = serializers.DictField(
        child=serializers.CharField(), help_text="Every language's draft, by language id; only the ones saved."
    )
    saved_at = serializers.DateTimeField(allow_null=True, help_text="The last save; null when no draft is kept.")


class DraftSavedSerializer(serializers.Serializer):
    language = _language("The draft's language, now the attempt's.")
    saved_at = serializers.DateTimeField(allow_null=True)


class LanguageSerializer(serializers.Serializer):
    id = _language("The id that submissions, runs and drafts name.")
    name = serializers.CharField()
    version = serializers.CharField(allow_null=True, help_text="The toolchain's version here; null when unavailable.")
    available = serializers.BooleanField(help_text="Whether answers in it can be submitted and run here.")
