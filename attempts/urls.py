from django.urls import path

from attempts import apis, apis_ops, apis_practice, apis_progress
from interviewprep.async_views import hashes_passwords

urlpatterns = [
    path("auth/register/", hashes_passwords(apis.RegisterApi.as_view()), name="api-register"),
    path("auth/token/", hashes_passwords(apis.TokenApi.as_view()), name="api-token"),
    path("languages/", apis.LanguageListApi.as_view(), name="api-languages"),
    path("questions/", apis.QuestionListApi.as_view(), name="api-questions"),
    path("questions/<id:question_id>/", apis.QuestionDetailApi.as_view(), name="api-question"),
    path("practice-requests/", apis.PracticeRequestCreateApi.as_view(), name="api-practice-requests"),
    path(
        "practice-requests/<id:practice_request_id>/",
        apis.PracticeRequestDetailApi.as_view(),
        name="api-practice-request",
    ),
    path("attempts/", apis.AttemptListCreateApi.as_view(), name="api-attempts"),
    path("attempts/<id:attempt_id>/", apis.AttemptDetailApi.as_waiting_view(), name="api-attempt"),
    path("attempts/<id:attempt_id>/submissions/", apis.SubmissionListCreateApi.as_view(), name="api-submissions"),
    path("attempts/<id:attempt_id>/runs/", apis.RunCreateApi.as_waiting_view(), name="api-runs"),
    path("attempts/<id:attempt_id>/draft/", apis.AttemptDraftApi.as_view(), name="api-attempt-draft"),
    path("attempts/<id:attempt_id>/hints/", apis_practice.AttemptHintsApi.as_view(), name="api-attempt-hints"),
    path("attempts/<id:attempt_id>/give-up/", apis_practice.AttemptGiveUpApi.as_view(), name="api-attempt-give-up"),
    path("questions/<id:question_id>/note/", apis_practice.QuestionNoteApi.as_view(), name="api-question-note"),
    path("mock-interviews/", apis_practice.MockInterviewListCreateApi.as_view(), name="api-mock-interviews"),
    path(
        "mock-interviews/<id:mock_interview_id>/",
        apis_practice.MockInterviewDetailApi.as_view(),
        name="api-mock-interview",
    ),
    path("ops/attempts/<id:attempt_id>/cache-diff/", apis.AttemptCacheDiffApi.as_view(), name="api-cache-diff"),
    path("ops/attempts/<id:attempt_id>/timeline/", apis.AttemptTimelineApi.as_view(), name="api-timeline"),
    path("ops/questions/<slug:slug>/regrade/", apis_ops.QuestionRegradeApi.as_view(), name="api-question-regrade"),
    path("submissions/<id:submission_id>/", apis.SubmissionDetailApi.as_view(), name="api-submission"),
    path("runs/<id:run_id>/", apis.RunDetailApi.as_view(), name="api-run"),
    path("progress/", apis_progress.ProgressApi.as_view(), name="api-progress"),
    path("reviews/", apis_progress.ReviewListApi.as_view(), name="api-reviews"),
    path("reviews/due/", apis_progress.ReviewDueListApi.as_view(), name="api-reviews-due"),
]
