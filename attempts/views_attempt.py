"""The attempt page: the question, the editor, Run, Submit, the live result and the history.

It works without JavaScript (a form post and a redirect, as before). With it, the page submits
and runs through the REST API and redraws only its live panel, from the fragment views below,
which wait for a change without holding a worker thread.
"""

from __future__ import annotations

import json
from datetime import datetime

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from attempts.apis import RunCreateApi
from attempts.forms import SubmissionForm, idempotency_key_new
from attempts.models import AttemptStatus, Question, QuestionKind
from attempts.presenting import examples_view, queue_words, result_view, run_view, status_word
from attempts.presenting_written import length_meter_view
from attempts.selectors.answers import submission_answer_for_user
from attempts.selectors.attempts import (
    attempt_editor_texts_for_user,
    attempt_get_for_user,
    submission_list_for_attempt,
    submission_payloads,
)
from attempts.selectors.questions import (
    question_evaluator,
    question_expected_words,
    question_get,
    question_starter_codes,
)
from attempts.selectors.reviews import review_editor_texts, review_opening
from attempts.selectors.runs import run_get_for_user, run_payload
from attempts.services.admission import evaluation_degraded
from attempts.services.attempts import submission_create
from attempts.services.transitions import attempt_channel, run_channel
from attempts.views_common import redirect_once
from evaluation.languages import LANGUAGES, languages_status
from interviewprep.errors import AnswerTooLarge, IdempotencyKeyReused, InvalidInput, NotFound, Overloaded
from interviewprep.notify import read_until

SUBMISSIONS_PER_PAGE = 10
# Without JavaScript a pending page reloads itself this often.
REFRESH_SECONDS = 2
PENDING = (AttemptStatus.QUEUED, AttemptStatus.PROCESSING)
# The longest wait the page's script may ask of the fragment views.
MAX_WAIT_SECONDS = 30


def _int_or_none(raw: str | None) -> int | None:
    try:
        value = int(raw or "")
    except ValueError:
        return None
    return value if value >= 0 else None


@login_required
@require_http_methods(["GET", "POST"])
def attempt_detail(request: HttpRequest, attempt_id: int) -> HttpResponse:
    if request.method == "POST":
        return _attempt_submit(request, attempt_id)
    return _attempt_page(request, attempt_id, min_version=_int_or_none(request.GET.get("v")))


def _attempt_submit(request: HttpRequest, attempt_id: int) -> HttpResponse:
    form = SubmissionForm(request.POST)
    if not form.is_valid():
        # Only the hidden key can fail here (a tampered or truncated form); keep the text.
        answer = str(form.data.get("answer", "")).replace("\r\n", "\n")
        return _attempt_page(
            request,
            attempt_id,
            answer=answer,
            language=str(form.data.get("language", "")),
            key=idempotency_key_new(),
            status=400,
            error="The form was incomplete, so nothing was submitted. Your answer is kept below: submit it again.",
        )
    answer = form.cleaned_data["answer"]
    language = form.cleaned_data["language"] or None  # none sent: the attempt's (a prose question's)
    key = form.cleaned_data["idempotency_key"]
    # What the key stands for; a form without a language keeps the fingerprint it always had.
    kept = {"answer": answer, "language": language} if language else {"answer": answer}

    def work() -> tuple[int, bytes]:
        submission = submission_create(
            user=request.user, attempt_id=attempt_id, answer=answer, language=language, correlation_id=key
        )
        url = reverse("attempt", kwargs={"attempt_id": attempt_id})
        return 303, f"{url}?v={submission.attempt.version}".encode()

    try:
        response = redirect_once(request, key, kept, work)
    except NotFound:
        raise Http404("No such attempt.") from None
    except Overloaded as exc:
        retry_after = exc.extra.get("retry_after") or exc.headers.get("Retry-After")
        response = _attempt_page(
            request,
            attempt_id,
            **kept,
            key=key,  # nothing was stored under it, so the same key may try again
            status=503,
            error=(
                f"Evaluation is busy right now, so your answer was not submitted. "
                f"Your text is kept below: please try again in {retry_after} seconds."
            ),
        )
        response["Retry-After"] = str(retry_after)
        return response
    except AnswerTooLarge as exc:
        return _attempt_page(request, attempt_id, **kept, key=key, status=413, error=exc.detail)
    except IdempotencyKeyReused:
        return _attempt_page(
            request,
            attempt_id,
            **kept,
            key=idempotency_key_new(),
            status=422,
            error=(
                "This form had already been used to submit a different answer (perhaps from an older "
                "page), so nothing new was submitted. Your text is kept below: submit it again to send it."
            ),
        )
    except InvalidInput as exc:
        message = "Write an answer before submitting." if exc.extra.get("field") == "answer" else exc.detail
        return _attempt_page(request, attempt_id, **kept, key=key, status=400, error=message)
    messages.success(request, "Your answer was submitted and is being evaluated.")
    return response


def _attempt_question(question_id: int) -> Question | None:
    # A retired question is "not found" to question_get; its attempts still open, without it.
    try:
        return question_get(question_id=question_id)
    except NotFound:
        return None


def _editor_languages(starters: dict[str, str]) -> list[dict]:
    """The picker's choices: the languages this question can be answered in, with whether this
    server can run them (an unavailable one is shown, disabled) and the editor's mode for each."""
    return [{**row, "mode": LANGUAGES[row["id"]].ace_mode} for row in languages_status() if row["id"] in starters]


def live_context(request: HttpRequest, attempt_id: int, *, min_version: int | None = None) -> dict:
    """What the live panel shows: status, result and history, all from one read of the attempt.
    The latest submission's row takes the attempt's status, so the panel and the table agree."""
    try:
        attempt = attempt_get_for_user(user=request.user, attempt_id=attempt_id, min_version=min_version)
        submissions = submission_list_for_attempt(user=request.user, attempt_id=attempt_id)
    except NotFound:
        raise Http404("No such attempt.") from None
    page = Paginator(submissions, SUBMISSIONS_PER_PAGE).get_page(request.GET.get("page"))
    rows = []
    for payload in submission_payloads(list(page.object_list)):
        latest = payload["id"] == attempt["latest_submission_id"]
        status = attempt["status"] if latest else payload["status"]
        rows.append(
            {
                **payload,
                "latest": latest,
                "status": status,
                "status_word": status_word(status),
                "created": datetime.fromisoformat(payload["created_at"]),
            }
        )
    pending = attempt["status"] in PENDING
    result = attempt["result"]
    # A written answer's feedback quotes it back with its evidence marked.
    answer = None
    if result is not None and (result.get("details") or {}).get("criteria"):
        answer = submission_answer_for_user(user=request.user, submission_id=result["submission_id"])
    return {
        "attempt": attempt,
        "status_word": status_word(attempt["status"]),
        "queue_words": queue_words(attempt.get("queue")) if attempt["status"] == AttemptStatus.QUEUED else None,
        "degraded": (
            evaluation_degraded(evaluator=question_evaluator(question_id=attempt["question_id"])) if pending else None
        ),
        "result": result_view(result, answer=answer),
        "submissions": rows,
        "page": page,
        "pending": pending,
    }


def _attempt_page(
    request: HttpRequest,
    attempt_id: int,
    *,
    min_version: int | None = None,
    answer: str | None = None,
    language: str | None = None,
    key: str | None = None,
    status: int = 200,
    error: str | None = None,
) -> HttpResponse:
    context = live_context(request, attempt_id, min_version=min_version)
    question = _attempt_question(context["attempt"]["question_id"])
    coding = question is not None and question.kind == QuestionKind.CODING
    starters = question_starter_codes(question=question) if question else {}
    # Opened from the review list: the starters, the last answer one click away.
    review = review_opening(request.GET)
    if review is not None:
        editor = review_editor_texts(
            user=request.user, attempt_id=attempt_id, starters=starters, last_answer=review["loaded"]
        )
    else:
        editor = attempt_editor_texts_for_user(user=request.user, attempt_id=attempt_id, starters=starters)
    saved_language, texts, draft_saved_at = editor.language, editor.texts, editor.saved_at
    # A refused form post comes back in the language it was sent in, with its text.
    if language not in starters:
        language = saved_language
    if answer is None:
        answer = texts.get(language, starters.get(language, ""))
    else:
        texts[language] = answer
    context.update(
        {
            "question": question,
            "examples": (
                examples_view(question.examples, tests=question.evaluation_spec.get("tests"), language=language)
                if question
                else []
            ),
            "form": SubmissionForm(
                initial={"answer": answer, "language": language, "idempotency_key": key or idempotency_key_new()}
            ),
            "coding": coding,
            "languages": _editor_languages(starters),
            "language": language,
            "editor_starters": starters,
            "editor_texts": texts,
            "editor_mode": LANGUAGES[language].ace_mode if coding else None,
            "length_meter": length_meter_view(question_expected_words(question=question)) if question else None,
            "draft_saved_at": draft_saved_at,
            "review": review,
            "error": error,
            "refresh_seconds": REFRESH_SECONDS,
            "max_bytes": settings.ANSWER_MAX_BYTES,
        }
    )
    return render(request, "attempts/detail.html", context, status=status)


def _wait_seconds(raw: str | None) -> float | None:
    try:
        seconds = float(raw or "")
    except ValueError:
        return None
    return min(seconds, MAX_WAIT_SECONDS) if seconds > 0 else None


@login_required
def _live_read(request: HttpRequest, attempt_id: int, min_version: int | None) -> HttpResponse:
    context = live_context(request, attempt_id, min_version=min_version)
    response = render(request, "attempts/_live.html", context)
    response.version = context["attempt"]["version"]  # what the waiting view compares
    return response


async def attempt_live_fragment(request: HttpRequest, attempt_id: int) -> HttpResponse:
    """The live panel alone, for the page's script to put in place of the old one. With
    `?min_version=N&wait=S` it answers once the attempt reaches version N (or after S seconds),
    waiting on the event loop, not on a thread."""
    min_version = _int_or_none(request.GET.get("min_version"))
    wait = _wait_seconds(request.GET.get("wait"))
    read = sync_to_async(_live_read)
    if min_version is None or wait is None:
        return await read(request, attempt_id, min_version)
    return await read_until(
        lambda: read(request, attempt_id, min_version),
        attempt_channel(attempt_id),
        lambda response: response.status_code != 200 or response.version >= min_version,
        timeout=wait,
        moot=lambda message: message.isdigit() and int(message) < min_version,
    )


@login_required
def _run_read(request: HttpRequest, run_id: int) -> HttpResponse:
    try:
        payload = run_payload(run_get_for_user(user=request.user, run_id=run_id))
    except NotFound:
        raise Http404("No such run.") from None
    run = run_view(payload)
    response = render(request, "attempts/_run.html", {"run": run})
    response.done = run["done"]
    return response


async def run_panel_fragment(request: HttpRequest, run_id: int) -> HttpResponse:
    """A run's panel alone, for the page's script; with `?wait=S`, once the run is done (or
    after S seconds)."""
    wait = _wait_seconds(request.GET.get("wait"))
    read = sync_to_async(_run_read)
    if wait is None:
        return await read(request, run_id)
    return await read_until(
        lambda: read(request, run_id),
        run_channel(run_id),
        lambda response: response.status_code != 200 or response.done,
        timeout=wait,
    )


_run_create = RunCreateApi.as_waiting_view()


async def run_create_panel(request: HttpRequest, attempt_id: int) -> HttpResponse:
    """Create a run exactly as `POST /api/v1/attempts/{id}/runs/` does (its checks, its wait for
    the cases) and answer with the run's panel, drawn from that answer's own payload: the page
    draws the cases without a second request. A refusal stays the API's problem document."""
    request.META["HTTP_ACCEPT"] = "application/json"  # what this view asks of the API, whatever the page accepts
    response = await _run_create(request, attempt_id=attempt_id)
    if response.status_code not in (200, 202):
        return response
    panel = render_to_string("attempts/_run.html", {"run": run_view(json.loads(response.content))})
    return HttpResponse(panel, status=response.status_code)


# CSRF is the API view's business, as for the API itself: DRF checks it for a session user.
run_create_panel.csrf_exempt = True
