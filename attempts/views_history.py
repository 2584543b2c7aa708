"""The history pages: one submission with its answer and result, and two submissions of an
attempt compared line by line. They adapt as the other pages do: a Form in, one selector call,
a template out."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import dateformat, timezone

from attempts.answer_diff import answer_diff
from attempts.forms_history import SubmissionCompareForm
from attempts.presenting import percent, result_view, status_word
from attempts.selectors.attempts import SubmissionChoice, submission_pair_for_user, submission_record_for_user
from attempts.templatetags.clock import WHEN_FORMAT
from evaluation.languages import LANGUAGES
from interviewprep.errors import NotFound

COMPARE_REFUSED = "Choose two submissions of this attempt to compare; the two newest are shown instead."


@login_required
def submission_detail(request: HttpRequest, submission_id: int) -> HttpResponse:
    try:
        record = submission_record_for_user(user=request.user, submission_id=submission_id)
    except NotFound:
        raise Http404("No such submission.") from None
    payload = record.payload
    language = LANGUAGES.get(payload["language"])
    context = {
        "record": record,
        "submission": payload,
        "language_name": language.name if language else payload["language"],
        "status_word": status_word(payload["status"]),
        "created": datetime.fromisoformat(payload["created_at"]),
        "result": result_view(payload["result"]),
    }
    return render(request, "attempts/submission.html", context)


def _choice_label(choice: SubmissionChoice) -> str:
    scored = percent(choice.score, choice.max_score)
    score = f"{scored:g}%" if scored is not None else status_word(choice.status)
    return f"{dateformat.format(timezone.localtime(choice.created_at), WHEN_FORMAT)} · {score} (#{choice.id})"


@login_required
def attempt_compare(request: HttpRequest, attempt_id: int) -> HttpResponse:
    form = SubmissionCompareForm(request.GET)
    refused = not form.is_valid()
    asked = {} if refused else form.cleaned_data
    try:
        pair = submission_pair_for_user(
            user=request.user, attempt_id=attempt_id, old_id=asked.get("a"), new_id=asked.get("b")
        )
        if not pair.found:  # an id of no submission of this attempt: say so, and show the two newest
            refused = True
            pair = submission_pair_for_user(user=request.user, attempt_id=attempt_id)
    except NotFound:
        raise Http404("No such attempt.") from None
    context = {
        "attempt_id": attempt_id,
        "pair": pair,
        "choices": [(choice.id, _choice_label(choice)) for choice in pair.choices],
        "diff": answer_diff(old=pair.old_answer, new=pair.new_answer) if pair.old and pair.new else None,
        "error": COMPARE_REFUSED if refused else None,
    }
    return render(request, "attempts/compare.html", context, status=400 if refused else 200)
