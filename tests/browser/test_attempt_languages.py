"""The attempt page in another language, in a real browser against the real stack: pick
JavaScript, see its starter and its highlighting, Run and Submit in it, and find each language's
text kept when switching back and forth and after a reload (drafts live on the server)."""

from __future__ import annotations

import pytest

from attempts.models import Attempt, Submission
from evaluation.languages import languages_status, starter_codes
from tests.browser.test_attempt_page import editor_text, start_attempt, type_answer
from tests.processes import wait_for

pytestmark = pytest.mark.browser

PYTHON = ["def sum_of_list(numbers: list[int]) -> int:", "return sum(numbers)"]
PYTHON_TEXT = "def sum_of_list(numbers: list[int]) -> int:\n    return sum(numbers)"
JAVASCRIPT = "function sumOfList(numbers) {\n  return numbers.reduce((total, n) => total + n, 0);\n}\n"


def editor_mode(page) -> str:
    return page.evaluate("document.querySelector('[data-editor]').env.editor.session.getMode().$id")


def wait_for_mode(page, mode: str) -> None:
    page.wait_for_function(
        "mode => document.querySelector('[data-editor]').env.editor.session.getMode().$id === mode", arg=mode
    )


def replace_text(page, text: str) -> None:
    """Put `text` in the editor as typed input, without the editor's own bracket pairing."""
    page.click(".ace_content")
    page.keyboard.press("Control+a")
    page.keyboard.press("Backspace")
    page.keyboard.insert_text(text)


def pick(page, language: str) -> None:
    page.select_option("#answer-language", language)


def test_switch_to_javascript_run_submit_and_every_languages_text_is_kept(candidate_page, warm_up_question):
    starters = starter_codes(warm_up_question.evaluation_spec)
    version = {row["id"]: row["version"] for row in languages_status()}["javascript"]
    candidate = candidate_page()
    page = candidate.page
    attempt_id = start_attempt(candidate, warm_up_question)

    # Python first: the attempt's language, on its starter, with its highlighting.
    assert page.input_value("#answer-language") == "python"
    assert page.locator("#answer-language option[value=javascript]").inner_text() == f"JavaScript {version}"
    assert editor_text(page) == starters["python"]
    wait_for_mode(page, "ace/mode/python")
    type_answer(page, PYTHON)
    assert editor_text(page) == PYTHON_TEXT

    # JavaScript: its starter and its mode, loaded from the page's own origin under the CSP.
    pick(page, "javascript")
    assert editor_text(page) == starters["javascript"]
    wait_for_mode(page, "ace/mode/javascript")
    candidate.screenshot("attempt-language-picker")
    replace_text(page, JAVASCRIPT)
    assert editor_text(page) == JAVASCRIPT

    page.click("text=Run examples")
    page.locator("[data-run-body] .run:not([data-pending])").wait_for()
    run_body = page.locator("[data-run-body]").inner_text()
    assert f"Ran in JavaScript {version}" in run_body, run_body
    assert "2 of 2 examples passed" in run_body, run_body
    assert page.locator("[data-run-body] .case-ok").count() == 2

    # Back to Python: the text typed there is kept; and JavaScript's, going back again.
    pick(page, "python")
    assert editor_text(page) == PYTHON_TEXT
    wait_for_mode(page, "ace/mode/python")
    pick(page, "javascript")
    assert editor_text(page) == JAVASCRIPT
    wait_for_mode(page, "ace/mode/javascript")

    # Both are drafts on the server, and JavaScript is the attempt's language: a reload keeps them.
    def saved() -> bool:
        attempt = Attempt.objects.get(pk=attempt_id)
        return attempt.language == "javascript" and attempt.drafts == {"python": PYTHON_TEXT, "javascript": JAVASCRIPT}

    # The page saves the language left, then the one picked, one request at a time: a state on
    # the way (JavaScript's draft saved before Python's) must not count as the end.
    page.locator("[data-draft-state=saved]").wait_for()
    wait_for(saved, timeout=10, message="both drafts saved and JavaScript the attempt's language")
    page.reload()
    page.wait_for_selector(".ace_editor")
    assert page.input_value("#answer-language") == "javascript"
    assert editor_text(page) == JAVASCRIPT
    wait_for_mode(page, "ace/mode/javascript")
    pick(page, "python")
    assert editor_text(page) == PYTHON_TEXT
    pick(page, "javascript")

    page.click("[data-submit]")
    page.locator(".live[data-status=completed]").wait_for()
    assert Submission.objects.get(attempt_id=attempt_id).language == "javascript"
    result = page.locator(".result").inner_text()
    assert f"Ran in JavaScript {version}" in result, result
    assert page.locator(".score-number strong").inner_text() == "100"
    candidate.screenshot("attempt-javascript-graded")


def test_the_picker_is_keyboard_operable_and_ctrl_enter_submits_in_the_language_chosen(
    candidate_page, warm_up_question
):
    candidate = candidate_page()
    page = candidate.page
    attempt_id = start_attempt(candidate, warm_up_question)
    page.focus("#answer-language")
    page.keyboard.press("ArrowDown")  # Python -> JavaScript, without a mouse
    assert page.input_value("#answer-language") == "javascript"
    wait_for_mode(page, "ace/mode/javascript")
    replace_text(page, JAVASCRIPT)
    page.keyboard.press("Control+Enter")
    page.locator(".live[data-status=completed]").wait_for()
    assert Submission.objects.get(attempt_id=attempt_id).language == "javascript"
