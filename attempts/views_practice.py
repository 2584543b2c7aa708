"""Pages of the practice aids: mock interviews, hints and "I give up" on the attempt page,
notes, settings. Each adapts, as the API classes do: a Form in, one service or selector call, a
template or a redirect out. The page's script (static/js/practice.js) uses the REST API for
hints and notes; these form posts are what works without it."""

from __future__ import annotations

from datetime import datetime

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from attempts.forms import idempotency_key_new
from attempts.forms_practice import MockInterviewForm, NoteForm, PreferencesForm
from attempts.presenting import percent, status_word
from attempts.selectors.mock import (
    mock_interview_get_for_user,
    mock_interview_list_for_user,
    mock_interview_payload,
    mock_interview_payloads,
)
from attempts.selectors.notes import note_list_for_user
from attempts.selectors.preferences import preferences_for_user
from attempts.services.hints import attempt_give_up, attempt_hint_reveal
from attempts.services.mock import mock_interview_create
from attempts.services.notes import note_save
from attempts.services.preferences import preferences_save
from attempts.views_common import redirect_once
from interviewprep.errors import IdempotencyKeyReused, InvalidInput, NotFound

SESSIONS_PER_PAGE = 20
NOTES_PER_PAGE = 30


def _minutes_and_seconds(seconds: int | None) -> str:
    if seconds is None:
        return ""
    minutes, rest = divmod(max(0, seconds), 60)
    return f"{minutes} min {rest:02d} s"


def _summary_view(payload: dict) -> list[dict]:
    rows = []
    for row in payload["summary"] or []:
        if not row["submitted"]:
            shown = "not submitted"
        elif row["outcome"] == "not_scored":
            shown = "not scored"
        elif row["score"] is None:
            shown = status_word(row["status"]).lower()
        else:
            shown = f"{percent(row['score'], row['max_score']):.0f}% ({row['score']:g} of {row['max_score']:g})"
        rows.append({**row, "shown": shown, "time_used": _minutes_and_seconds(row["time_used_seconds"])})
    return rows


def _session_view(payload: dict) -> dict:
    return {
        **payload,
        "started": datetime.fromisoformat(payload["started_at"]),
        "ends": datetime.fromisoformat(payload["deadline"]),
        "attempts": [{**a, "status_word": status_word(a["status"])} for a in payload["attempts"]],
    }


@login_required
@require_http_methods(["GET", "POST"])
def mock_interviews(request: HttpRequest) -> HttpResponse:
    """The start form and the candidate's past sessions."""
    status, error = 200, None
    if request.method == "POST":
        form = MockInterviewForm(request.POST)
        if form.is_valid():
            data = {key: value for key, value in form.cleaned_data.items() if key != "idempotency_key"}

            def work() -> tuple[int, bytes]:
                interview = mock_interview_create(user=request.user, **data)
                return 303, reverse("mock_interview", kwargs={"mock_interview_id": interview.pk}).encode()

            try:
                return redirect_once(request, form.cleaned_data["idempotency_key"], data, work)
            except IdempotencyKeyReused:
                status, error = 422, "This form was already used to start another session; start again from this one."
            except InvalidInput as exc:
                status, error = exc.status_code, exc.detail
            form = MockInterviewForm(initial={**form.cleaned_data, "idempotency_key": idempotency_key_new()})
        else:
            status = 400
    else:
        form = MockInterviewForm(initial={"idempotency_key": idempotency_key_new()})
    page = Paginator(mock_interview_list_for_user(user=request.user), SESSIONS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    sessions = [_session_view(payload) for payload in mock_interview_payloads(list(page.object_list))]
    return render(
        request, "mock/list.html", {"form": form, "error": error, "page": page, "sessions": sessions}, status=status
    )


@login_required
def mock_interview_detail(request: HttpRequest, mock_interview_id: int) -> HttpResponse:
    """The session: a timer to its deadline and its questions while it runs, its summary after."""
    try:
        interview = mock_interview_get_for_user(user=request.user, mock_interview_id=mock_interview_id)
    except NotFound:
        raise Http404("No such mock interview.") from None
    payload = mock_interview_payload(interview)
    return render(request, "mock/detail.html", {"session": _session_view(payload), "summary": _summary_view(payload)})


def _back_to_attempt(attempt_id: int) -> HttpResponse:
    return redirect(reverse("attempt", kwargs={"attempt_id": attempt_id}))


@login_required
@require_POST
def attempt_hint_page(request: HttpRequest, attempt_id: int) -> HttpResponse:
    raw = request.POST.get("count", "")
    try:
        attempt_hint_reveal(user=request.user, attempt_id=attempt_id, count=int(raw) if raw.isdigit() else None)
    except NotFound:
        raise Http404("No such attempt.") from None
    except InvalidInput as exc:
        messages.error(request, exc.detail)
    return _back_to_attempt(attempt_id)


@login_required
@require_POST
def attempt_give_up_page(request: HttpRequest, attempt_id: int) -> HttpResponse:
    try:
        attempt_give_up(user=request.user, attempt_id=attempt_id)
    except NotFound:
        raise Http404("No such attempt.") from None
    return redirect(reverse("attempt", kwargs={"attempt_id": attempt_id}) + "#reference")


@login_required
@require_POST
def question_note_page(request: HttpRequest, question_id: int) -> HttpResponse:
    form = NoteForm(request.POST)
    back = request.POST.get("next") or reverse("question", kwargs={"question_id": question_id})
    if not back.startswith("/") or back.startswith("//"):
        back = reverse("question", kwargs={"question_id": question_id})
    if not form.is_valid():
        messages.error(request, " ".join(form.errors.get("text", ["The note could not be saved."])))
        return redirect(back)
    try:
        note_save(user=request.user, question_id=question_id, text=form.cleaned_data["text"])
    except NotFound:
        raise Http404("No such question.") from None
    messages.success(request, "Your note was saved.")
    return redirect(back)


@login_required
def notes(request: HttpRequest) -> HttpResponse:
    page = Paginator(note_list_for_user(user=request.user), NOTES_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "notes/list.html", {"page": page})


@login_required
@require_http_methods(["GET", "POST"])
def settings_page(request: HttpRequest) -> HttpResponse:
    current = preferences_for_user(user=request.user)
    if request.method == "POST":
        form = PreferencesForm(request.POST)
        if form.is_valid():
            preferences_save(user=request.user, **form.cleaned_data)
            messages.success(request, "Your settings were saved.")
            return redirect("settings")
        status = 400
    else:
        form = PreferencesForm(initial={"blind": current.blind, "time_zone": current.time_zone})
        status = 200
    # Never saved: the page's script picks the browser's zone in the select.
    return render(request, "settings/edit.html", {"form": form, "zone_unset": current.pk is None}, status=status)
