"""The attempt page as a candidate uses it, in a real browser against the real stack: type in the
editor, Run the examples, Submit, and see the result drawn in place without a reload."""

from __future__ import annotations

import pytest

from attempts.models import Attempt, Submission
from evaluation.models import EvaluationJob, JobStatus
from tests.factories import AttemptFactory
from tests.web_server import start_web

pytestmark = pytest.mark.browser

SOLUTION = ["def add(a, b):", "return a + b"]  # the editor indents the second line itself
WRONG = ["def add(a, b):", "return a - b"]


def start_attempt(candidate, question) -> int:
    candidate.goto(f"/questions/{question.pk}/")
    candidate.page.click("text=Start practising")
    candidate.page.wait_for_selector(".ace_editor")
    return int(candidate.page.url.rstrip("/").rsplit("/", 1)[1])


def type_answer(page, lines: list[str]) -> None:
    page.click(".ace_content")
    page.keyboard.press("Control+a")
    page.keyboard.press("Backspace")
    for number, line in enumerate(lines):
        if number:
            page.keyboard.press("Enter")
        page.keyboard.type(line)


def editor_text(page) -> str:
    return page.evaluate("document.querySelector('[data-editor]').env.editor.getValue()")


def test_type_run_then_submit_and_the_result_appears_in_place(candidate_page, adding_question):
    candidate = candidate_page()
    page = candidate.page
    candidate.goto(f"/questions/{adding_question.pk}/")
    # The prompt's Markdown is rendered, not shown raw.
    assert page.inner_html(".prompt").count("<strong>sum</strong>") == 1
    start_attempt(candidate, adding_question)
    page.evaluate("window.stayedOnPage = true")

    type_answer(page, WRONG)
    assert editor_text(page) == "def add(a, b):\n    return a - b"
    page.click("text=Run examples")
    case = page.locator("[data-run-body] .case").first
    case.wait_for()
    assert "Wrong answer" in case.inner_text()
    values = case.locator(".case-values").inner_text()
    assert "1, 2" in values and "3" in values and "-1" in values
    candidate.screenshot("attempt-run-failing")

    type_answer(page, SOLUTION)
    page.click("text=Run examples")
    page.locator("[data-run-body] .case-ok").first.wait_for()
    # A run is not a submission.
    attempt = Attempt.objects.get(user=candidate.user)
    assert attempt.status == "draft" and not Submission.objects.filter(attempt=attempt).exists()

    page.click("[data-submit]")
    page.locator(".live[data-status=completed]").wait_for()
    assert page.evaluate("window.stayedOnPage") is True  # drawn in place, no reload
    assert editor_text(page) == "def add(a, b):\n    return a + b"
    assert page.locator(".score-number strong").inner_text() == "100"
    assert page.evaluate("document.activeElement.id") == "result-heading"
    # The hidden tests show how they ended, never their arguments.
    result = page.locator(".result").inner_text()
    assert "negative" in result and "-5" not in result
    # The announcement is set a moment after the result is drawn (so screen readers notice it).
    page.locator("[data-announce]", has_text="Graded").wait_for()
    candidate.screenshot("attempt-graded")


def test_a_double_click_on_submit_is_one_submission(candidate_page, adding_question):
    candidate = candidate_page()
    page = candidate.page
    attempt_id = start_attempt(candidate, adding_question)
    type_answer(page, SOLUTION)
    page.dblclick("[data-submit]")
    page.locator(".live[data-status=completed]").wait_for()
    assert Submission.objects.filter(attempt_id=attempt_id).count() == 1


def test_keyboard_only_submit_and_a_way_out_of_the_editor(candidate_page, adding_question):
    candidate = candidate_page()
    page = candidate.page
    attempt_id = start_attempt(candidate, adding_question)
    page.focus("#main")
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('ace_scroller')"):
            break
    else:
        pytest.fail("Tab never reached the editor")
    page.keyboard.press("Enter")  # into the text
    page.keyboard.press("Control+a")
    page.keyboard.press("Backspace")
    page.keyboard.type("def add(a, b):")
    page.keyboard.press("Enter")
    page.keyboard.type("return a + b")
    page.keyboard.press("Control+Enter")
    page.locator(".live[data-status=completed]").wait_for()
    assert Submission.objects.get(attempt_id=attempt_id).answer == "def add(a, b):\n    return a + b"
    # Esc leaves the text; Tab then moves on instead of indenting.
    page.click(".ace_content")
    # Predicates as functions: Playwright evaluates an expression string anew at each poll,
    # which the page's CSP refuses (no 'unsafe-eval').
    page.wait_for_function("() => document.activeElement.classList.contains('ace_text-input')")
    page.keyboard.press("Escape")
    # Ace moves focus to its scroller on Esc, a moment after the key.
    page.wait_for_function("() => document.activeElement.classList.contains('ace_scroller')")
    page.keyboard.press("Tab")
    assert page.evaluate("!document.querySelector('[data-editor]').contains(document.activeElement)")
    assert editor_text(page) == "def add(a, b):\n    return a + b"


def test_the_draft_follows_the_candidate_to_another_device(candidate_page, adding_question):
    laptop = candidate_page()
    attempt_id = start_attempt(laptop, adding_question)
    type_answer(laptop.page, ["def add(a, b):", "return b + a  # draft"])
    laptop.page.locator("[data-draft-status]", has_text="Draft saved").wait_for()
    phone = candidate_page(laptop.user, width=390)
    phone.goto(f"/attempts/{attempt_id}/")
    phone.page.wait_for_selector(".ace_editor")
    assert editor_text(phone.page) == "def add(a, b):\n    return b + a  # draft"


def test_leaving_with_unsaved_edits_asks_first(candidate_page, adding_question):
    candidate = candidate_page()
    page = candidate.page
    start_attempt(candidate, adding_question)
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.accept()))
    page.click(".ace_content")
    page.keyboard.type("# not saved yet")
    # Leaving before the draft is saved asks first (accepted here, so the page goes on).
    page.goto(f"{candidate.base_url}/questions/")
    assert dialogs == ["beforeunload"]


def test_narrow_screen_keeps_every_column_and_a_short_header(candidate_page, adding_question):
    candidate = candidate_page(width=390)
    page = candidate.page
    start_attempt(candidate, adding_question)
    type_answer(page, WRONG)
    page.click("[data-submit]")
    page.locator(".live[data-status=completed]").wait_for()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.locator(".site-header").bounding_box()["height"] < 90
    case = page.locator(".result .case").first
    assert "Expected" in case.inner_text() and "Got" in case.inner_text()
    candidate.screenshot("attempt-390px")


def test_an_overloaded_submit_keeps_the_typed_answer(browser, candidate_page, adding_question, tmp_path):
    candidate = candidate_page()
    # A second web server whose backlog limit is already reached by someone else's waiting job
    # (the session cookie, made for the host, logs the candidate in there too).
    busy = start_web(tmp_path, EVALUATE_QUEUE_LIMIT="1")
    candidate.base_url = f"http://127.0.0.1:{busy.port}"
    try:
        someone = AttemptFactory(question=adding_question)
        waiting = Submission.objects.create(attempt=someone, answer="x")
        EvaluationJob.objects.create(kind="evaluate", subject_id=waiting.pk, status=JobStatus.PENDING, max_tries=3)
        attempt_id = start_attempt(candidate, adding_question)
        type_answer(candidate.page, SOLUTION)
        candidate.page.click("[data-submit]")
        error = candidate.page.locator("[data-action-error]")
        error.wait_for()
        assert "try again in" in error.inner_text()
        assert editor_text(candidate.page) == "def add(a, b):\n    return a + b"
        assert not Submission.objects.filter(attempt_id=attempt_id).exists()
        candidate.expect_console_error("status of 503")
        candidate.screenshot("attempt-overloaded")
    finally:
        busy.process.stop()
