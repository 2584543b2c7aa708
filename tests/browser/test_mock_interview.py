"""A mock interview that runs out of time, in a real browser against the real stack: the clock
counts down from the server's deadline, a submit after it is refused with the answer kept, and
the session's page turns into its summary."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from attempts.models import Submission
from attempts.services.mock import mock_interview_create
from tests.factories import QuestionFactory

pytestmark = pytest.mark.browser

# Long enough to open the pages and type, short enough that the test waits a few seconds only.
SECONDS_AHEAD = 12
ANSWER = ["def add(a, b):", "return a + b"]


def test_a_mock_interview_runs_out_of_time(candidate_page, adding_question):
    QuestionFactory(kind="behavioral", title="Tell me about a conflict")
    candidate = candidate_page()
    page = candidate.page
    # A one-minute session started almost a minute ago, by the clock the server reads.
    started = timezone.now() - timedelta(seconds=60 - SECONDS_AHEAD)
    interview = mock_interview_create(user=candidate.user, duration_minutes=1, now=started)

    candidate.goto(f"/mock/{interview.pk}/")
    timer = page.locator("[data-timer] [data-timer-text]")
    assert timer.inner_text().endswith(" left")
    assert page.locator("text=Tell me about a conflict").count() == 1
    candidate.screenshot("mock-running")

    page.click("text=Add two numbers")
    page.wait_for_selector(".ace_editor")
    page.click(".ace_content")
    page.keyboard.press("Control+a")
    page.keyboard.press("Backspace")
    page.keyboard.type(ANSWER[0])
    page.keyboard.press("Enter")
    page.keyboard.type(ANSWER[1])
    page.wait_for_selector("[data-draft-status][data-draft-state=saved]:has-text('Draft saved')")

    # No sleep: the page's own clock says when time is up, within the deadline plus a margin.
    page.wait_for_selector("[data-timer][data-time-up]", timeout=(SECONDS_AHEAD + 10) * 1000)
    assert "Time is up" in page.locator("[data-timer]").inner_text()
    page.click("[data-submit]")
    error = page.locator("[data-action-error]")
    error.wait_for(state="visible")
    assert "Time is up: this mock interview ended at" in error.inner_text()
    assert "Your answer is kept" in error.inner_text()
    candidate.expect_console_error("409")
    assert page.evaluate("document.querySelector('[data-editor]').env.editor.getValue()") == (
        "def add(a, b):\n    return a + b"
    )
    assert not Submission.objects.filter(attempt__mock_interview=interview).exists()
    candidate.screenshot("mock-time-up-on-attempt")

    # A reload keeps the answer: it is the draft the server holds.
    page.reload()
    page.wait_for_selector(".ace_editor")
    assert "return a + b" in page.evaluate("document.querySelector('[data-editor]').env.editor.getValue()")

    candidate.goto(f"/mock/{interview.pk}/")
    page.wait_for_selector("[data-summary]")
    rows = page.locator("[data-summary] tbody tr")
    assert rows.count() == 2
    assert "not submitted" in rows.nth(0).inner_text()
    assert "Tell me about a conflict" in rows.nth(1).inner_text()
    candidate.screenshot("mock-summary")
