"""A candidate reveals a hint and earns the model answer with a full score: each shows at once
and is still there after a reload, read through the attempt's cached copy."""

from __future__ import annotations

import pytest

from tests.browser.test_attempt_page import SOLUTION, start_attempt, type_answer

pytestmark = pytest.mark.browser

HINTS = ["Python adds with +.", "Return, do not print."]


def test_a_hint_and_the_model_answer_show_at_once_and_after_a_reload(candidate_page, adding_question):
    adding_question.hints = HINTS
    adding_question.reference_answer = "def add(a, b):\n    return a + b"
    adding_question.explanation = "Addition is all it takes."
    adding_question.save()
    candidate = candidate_page()
    page = candidate.page
    start_attempt(candidate, adding_question)
    assert page.locator("#reference").count() == 0  # closed before a full score

    page.click("[data-hints] summary")
    page.click("[data-hint-button]")
    page.locator("[data-hint-list] li", has_text=HINTS[0]).wait_for()
    page.reload()
    assert page.locator("[data-hint-list] li").all_inner_texts() == HINTS[:1]

    type_answer(page, SOLUTION)
    page.click("[data-submit]")
    page.locator(".live[data-status=completed]").wait_for()
    page.reload()
    reference = page.locator("#reference")
    reference.wait_for()
    assert "Opened by your full score." in reference.inner_text()
    assert "Addition is all it takes." in reference.inner_text()
    assert page.locator("[data-hint-list] li").all_inner_texts() == HINTS[:1]
    candidate.screenshot("attempt-hint-and-reference")
