"""The Content-Security-Policy: one strict policy on every response, dev and production, and pages
rendered with nothing it would refuse (inline scripts, inline styles, event-handler attributes).
tests/browser/test_csp.py proves the same in a browser, Ace and Swagger UI included."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

from attempts.models import AttemptStatus, PracticeRequest, Result, Submission, SubmissionStatus
from tests.factories import AttemptFactory, QuestionFactory, UserFactory
from tests.interviewprep.test_production import PRODUCTION, manage

POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "connect-src": ["'self'"],
    "font-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "frame-ancestors": ["'none'"],
    "form-action": ["'self'"],
}


class InlineFinder(HTMLParser):
    """Collects what a strict policy refuses: <style>, <script> without src, style and on* attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _ in attrs}
        if tag == "style" or (tag == "script" and "src" not in names):
            self.found.append(f"inline <{tag}>")
        for name, value in attrs:
            if name == "style" or name.startswith("on"):
                self.found.append(f"<{tag} {name}={value!r}>")
            if name in {"href", "src", "action"} and (value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"<{tag} {name}={value!r}>")


def inline_parts(html: str) -> list[str]:
    finder = InlineFinder()
    finder.feed(html)
    return finder.found


def directives(header: str) -> dict[str, list[str]]:
    """The header as {directive: sources}; django-csp does not keep the settings' order."""
    return {words[0]: words[1:] for words in (part.split() for part in header.split(";")) if words}


def graded_attempt(user):
    """An attempt with a result, so the page draws the score bar."""
    attempt = AttemptFactory(user=user, question=QuestionFactory(kind="coding", prompt="Sum `a` and **b**."))
    submission = Submission.objects.create(attempt=attempt, answer="x", status=SubmissionStatus.COMPLETED)
    Result.objects.create(submission=submission, score=66.7, max_score=100, feedback="Close.", details={})
    attempt.status = AttemptStatus.COMPLETED
    attempt.latest_submission = attempt.scored_submission = submission
    attempt.version = 2
    attempt.save()
    return attempt


@pytest.fixture
def pages(client, db):
    """(client, path) for every kind of page: anonymous, a candidate's, and staff's."""
    candidate = UserFactory()
    staff = UserFactory(is_staff=True, is_superuser=True)
    attempt = graded_attempt(candidate)
    practice = PracticeRequest.objects.create(user=candidate)
    from django.test import Client

    as_candidate, as_staff = Client(), Client()
    as_candidate.force_login(candidate)
    as_staff.force_login(staff)
    question = attempt.question
    return [
        (client, "/"),
        (client, "/questions/"),
        (client, f"/questions/{question.pk}/"),
        (client, "/login/"),
        (client, "/register/"),
        (client, "/api/docs/"),
        (client, "/admin/login/"),
        (as_candidate, "/attempts/"),
        (as_candidate, f"/attempts/{attempt.pk}/"),
        (as_candidate, f"/attempts/{attempt.pk}/live/"),
        (as_candidate, "/practice/"),
        (as_candidate, f"/practice/{practice.pk}/"),
        (as_staff, "/admin/"),
        (as_staff, "/admin/attempts/question/"),
        (as_staff, f"/admin/attempts/question/{question.pk}/change/"),
        (as_staff, "/admin/evaluation/deadletter/"),
        (as_staff, f"/staff/attempts/{attempt.pk}/cache-diff/"),
    ]


def test_every_page_carries_the_strict_policy_and_nothing_inline_it_would_refuse(pages):
    for client, path in pages:
        response = client.get(path)
        assert response.status_code == 200, path
        assert response["Content-Type"].startswith("text/html"), path
        header = response["Content-Security-Policy"]
        assert directives(header) == POLICY, path
        assert "unsafe-inline" not in header and "unsafe-eval" not in header, path
        assert "nonce-" not in header, path  # no page needs one: the policy is the same string everywhere
        assert inline_parts(response.content.decode()) == [], path


def test_the_score_bar_is_a_meter_not_a_styled_span(pages):
    client, path = next((client, path) for client, path in pages if path.endswith("/live/"))
    html = client.get(path).content.decode()
    assert '<meter class="bar" min="0" max="100" value="67"' in html


def test_swagger_ui_starts_from_a_script_url_not_an_inline_script(client, db):
    html = client.get("/api/docs/").content.decode()
    assert '<script src="/api/docs/?script="></script>' in html
    script = client.get("/api/docs/?script=")
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle(" in script.content.decode()
    # No badge from validator.swagger.io (an image from another origin, refused by img-src).
    assert '"validatorUrl": null' in script.content.decode()


def test_error_pages_and_static_files_carry_the_policy_too(client, db):
    assert directives(client.get("/no-such-page/")["Content-Security-Policy"]) == POLICY
    assert directives(client.get("/static/favicon.svg")["Content-Security-Policy"]) == POLICY


def test_the_policy_is_the_same_in_production_mode():
    done = manage(
        "shell",
        "-c",
        "from django.conf import settings; import json; print(json.dumps(settings.CONTENT_SECURITY_POLICY))",
        **PRODUCTION,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["DIRECTIVES"] == POLICY
