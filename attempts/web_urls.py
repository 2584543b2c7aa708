from django.contrib.auth import views as auth_views
from django.urls import path

from attempts import views, views_attempt, views_history, views_practice, views_progress, views_staff
from attempts.forms import LoginForm
from interviewprep.async_views import hashes_passwords

urlpatterns = [
    path("", views.home, name="home"),
    path(
        "staff/attempts/<id:attempt_id>/cache-diff/",
        views_staff.attempt_cache_diff_page,
        name="staff-cache-diff",
    ),
    path("staff/attempts/<id:attempt_id>/timeline/", views_staff.attempt_timeline_page, name="staff-timeline"),
    path("staff/dashboard/", views_staff.ops_dashboard_page, name="staff-dashboard"),
    path("staff/dashboard/panels/", views_staff.ops_dashboard_panels, name="staff-dashboard-panels"),
    path("register/", hashes_passwords(views.register), name="register"),
    path(
        "login/",
        hashes_passwords(
            auth_views.LoginView.as_view(
                template_name="registration/login.html", authentication_form=LoginForm, redirect_authenticated_user=True
            )
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("questions/", views.questions, name="questions"),
    path("questions/<id:question_id>/", views.question_detail, name="question"),
    path("questions/<id:question_id>/start/", views.attempt_start, name="attempt_start"),
    path("questions/<id:question_id>/fresh/", views.attempt_start_fresh, name="attempt_start_fresh"),
    path("attempts/", views.attempts, name="attempts"),
    path("attempts/<id:attempt_id>/", views_attempt.attempt_detail, name="attempt"),
    path("attempts/<id:attempt_id>/compare/", views_history.attempt_compare, name="attempt-compare"),
    path("attempts/<id:attempt_id>/live/", views_attempt.attempt_live_fragment, name="attempt-live"),
    path("attempts/<id:attempt_id>/runs/", views_attempt.run_create_panel, name="attempt-run"),
    path("submissions/<id:submission_id>/", views_history.submission_detail, name="submission"),
    path("runs/<id:run_id>/panel/", views_attempt.run_panel_fragment, name="run-panel"),
    path("attempts/<id:attempt_id>/hints/", views_practice.attempt_hint_page, name="attempt-hint"),
    path("attempts/<id:attempt_id>/give-up/", views_practice.attempt_give_up_page, name="attempt-give-up"),
    path("questions/<id:question_id>/note/", views_practice.question_note_page, name="question-note"),
    path("mock/", views_practice.mock_interviews, name="mock"),
    path("mock/<id:mock_interview_id>/", views_practice.mock_interview_detail, name="mock_interview"),
    path("notes/", views_practice.notes, name="notes"),
    path("settings/", views_practice.settings_page, name="settings"),
    path("practice/", views.practice_request_new, name="practice"),
    path("practice/<id:practice_request_id>/", views.practice_request_detail, name="practice_request"),
    path("progress/", views_progress.progress_page, name="progress"),
    path("review/", views_progress.review_page, name="review"),
    path("review/practise/", views_progress.review_practise, name="review-practise"),
]
