"""The progress chart and the review list in a real browser: an answer graded by the worker
becomes a point on the chart and a review; once overdue, the review list opens it on the starter
code with the last answer one click away, and "Practise what is due" opens it again."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from attempts.models import Result
from tests.browser.test_attempt_page import SOLUTION, editor_text, start_attempt, type_answer
from tests.browser.test_csp import RECORD_VIOLATIONS, SETTLE

pytestmark = pytest.mark.browser


def _violations(page) -> list[str]:
    page.evaluate(SETTLE)
    return page.evaluate("window.cspViolations")


def _graded(candidate, question) -> int:
    attempt_id = start_attempt(candidate, question)
    type_answer(candidate.page, SOLUTION)
    candidate.page.click("[data-submit]")
    candidate.page.wait_for_selector("text=3 of 3 tests passed")
    return attempt_id


def test_a_graded_answer_is_drawn_on_the_progress_chart_with_its_table(candidate_page, adding_question):
    candidate = candidate_page()
    page = candidate.page
    candidate.context.add_init_script(RECORD_VIOLATIONS)
    candidate.goto("/progress/")
    assert page.locator("[data-progress-empty]").is_visible()

    _graded(candidate, adding_question)
    page.click("nav >> text=Progress")
    chart = page.locator("svg[data-chart=over-time]")
    assert chart.get_attribute("role") == "img"
    assert "Mean score" in page.locator("#over-time-title").text_content()
    assert page.locator("svg[data-chart=over-time] circle").count() == 1
    assert chart.bounding_box()["width"] > 300  # drawn, not collapsed
    # The same number in the accessible table beside it.
    assert page.locator("#over-time-table tbody td").nth(1).text_content() == "100 %"
    assert page.locator("#kind-table tbody tr", has_text="Coding").locator("td").nth(2).text_content() == "1"
    assert page.locator("svg[data-chart=kind] rect.chart-solved").first.bounding_box()["width"] > 0
    assert "1 of 1 questions solved" in page.locator("[data-progress-summary]").text_content()
    assert _violations(page) == []
    candidate.screenshot("progress")


def test_an_overdue_question_opens_from_the_review_list_on_its_starter(candidate_page, adding_question):
    candidate = candidate_page()
    page = candidate.page
    attempt_id = _graded(candidate, adding_question)
    page.click("nav >> text=Review")
    assert page.locator("#review-upcoming").get_by_text("Add two numbers").is_visible()
    assert page.locator("[data-nothing-due]").is_visible()

    # Answered ten days ago, with the full score: due after eight.
    Result.objects.filter(submission__attempt_id=attempt_id).update(created_at=timezone.now() - timedelta(days=10))
    page.reload()
    page.locator("#review-due").get_by_role("link", name="Add two numbers").click()
    page.wait_for_selector(".ace_editor")
    assert page.url.endswith(f"/attempts/{attempt_id}/?from=review")
    assert "pass" in editor_text(page) and "return a + b" not in editor_text(page)
    candidate.screenshot("review-opened")

    page.get_by_role("link", name="Load my last answer").click()
    page.wait_for_selector(".ace_editor")
    assert "return a + b" in editor_text(page)

    candidate.goto("/review/")
    page.get_by_role("button", name="Practise what is due").click()
    page.get_by_role("link", name="Start answering").click()  # the page refreshes until the worker chose
    page.wait_for_selector(".ace_editor")
    assert "Add two numbers" in page.locator("h1").text_content()
    candidate.screenshot("review-practise-due")
