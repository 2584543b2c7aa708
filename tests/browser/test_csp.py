"""Every page works under the Content-Security-Policy: the browser reports no violation on any of
them, anonymous, candidate or staff, with the editor typed into, an answer graded and drawn in
place, Swagger UI rendered and the admin used."""

from __future__ import annotations

import pytest

from attempts.models import PracticeRequest, PracticeRequestStatus
from tests.browser.conftest import PASSWORD
from tests.browser.test_attempt_page import SOLUTION, editor_text, start_attempt, type_answer
from tests.factories import UserFactory

pytestmark = pytest.mark.browser

# Runs before any script of the page: the browser fires this event for each thing the policy
# refuses, a blocked inline <style> or attribute included, which no page script would notice.
RECORD_VIOLATIONS = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", function (event) {
  window.cspViolations.push([event.violatedDirective, event.blockedURI, event.sourceFile, event.lineNumber,
    event.sample].join(" "));
});
"""
# One frame and one task later, violations from the last change to the page have been dispatched.
SETTLE = "new Promise(function (done) { requestAnimationFrame(function () { setTimeout(done, 0); }); })"


class PolicyWatch:
    """A browser context that records every CSP violation and console message, page by page."""

    def __init__(self, browser, base_url: str):
        self.base_url = base_url
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.context.add_init_script(RECORD_VIOLATIONS)
        self.page = self.context.new_page()
        self.page.set_default_timeout(30_000)
        self.console: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.console.append(f"page error: {error}"))
        self.checked: list[str] = []
        self.violations: list[str] = []

    def _console(self, message) -> None:
        if message.type == "error" or "Content Security Policy" in message.text:
            self.console.append(f"{message.type}: {message.text}")

    def goto(self, path: str) -> None:
        self.page.goto(f"{self.base_url}{path}")

    def check(self, label: str) -> None:
        """Record what the page in view has reported so far (its list starts empty on each load)."""
        self.page.evaluate(SETTLE)
        self.violations += [f"{label}: {v}" for v in self.page.evaluate("window.cspViolations")]
        self.checked.append(label)

    def log_in(self, path: str, username: str) -> None:
        self.goto(path)
        self.page.fill("input[name=username]", username)
        self.page.fill("input[name=password]", PASSWORD)
        self.page.click("[type=submit]")
        self.page.wait_for_url(lambda url: "/login/" not in url)

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def watch(browser, stack):
    watches: list[PolicyWatch] = []

    def make() -> PolicyWatch:
        watches.append(PolicyWatch(browser, stack))
        return watches[-1]

    yield make
    for one in watches:
        one.close()


def assert_clean(*watches: PolicyWatch) -> None:
    violations = [v for one in watches for v in one.violations]
    console = [m for one in watches for m in one.console]
    assert violations == [], f"the policy refused something: {violations}"
    assert console == [], f"the console reported: {console}"


def test_public_pages_swagger_ui_and_the_admin_report_no_violation(watch, adding_question):
    staff = UserFactory(is_staff=True, is_superuser=True)
    visitor = watch()
    page = visitor.page
    for path in ("/", "/questions/", f"/questions/{adding_question.pk}/", "/login/", "/register/"):
        visitor.goto(path)
        page.locator("main h1").first.wait_for()
        visitor.check(path)

    # Swagger UI draws the API from its schema; its start-up script is a URL, not inline.
    visitor.goto("/api/docs/")
    page.locator(".swagger-ui .opblock").first.wait_for()
    assert "InterviewPrep API" in page.locator(".swagger-ui .info .title").inner_text()
    visitor.check("/api/docs/")

    visitor.goto("/admin/login/")
    visitor.check("/admin/login/")
    visitor.log_in("/admin/login/", staff.username)
    page.locator("#content-main").wait_for()
    visitor.check("/admin/")
    for path in (
        "/admin/attempts/question/",
        f"/admin/attempts/question/{adding_question.pk}/change/",
        "/admin/evaluation/deadletter/",
    ):
        visitor.goto(path)
        page.locator("#content-main").wait_for()
        visitor.check(path)
    # The admin's own scripts ran: the changelist's select-all box is wired by actions.js.
    visitor.goto("/admin/attempts/question/")
    page.check("#action-toggle")
    assert page.locator("input.action-select").first.is_checked()
    visitor.check("/admin/attempts/question/ (actions)")

    assert len(visitor.checked) == 12
    assert_clean(visitor)


def test_the_candidates_pages_and_the_editor_report_no_violation(watch, adding_question):
    user = UserFactory()
    candidate = watch()
    page = candidate.page
    candidate.log_in("/login/", user.username)
    candidate.check("/ (logged in)")
    candidate.goto("/practice/")
    page.locator("main h1").wait_for()
    candidate.check("/practice/")
    practice = PracticeRequest.objects.create(
        user=user, status=PracticeRequestStatus.COMPLETED, question=adding_question, note="Picked for you."
    )
    candidate.goto(f"/practice/{practice.pk}/")
    page.locator("main h1").wait_for()
    candidate.check(f"/practice/{practice.pk}/")

    # The editor: its CSS comes from linked files (ace.css, the textmate theme), none injected.
    start_attempt(candidate, adding_question)
    editor = page.locator(".ace_editor")
    assert editor.evaluate("e => getComputedStyle(e).position") == "relative"
    assert page.locator(".ace_gutter").evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(240, 240, 240)"
    assert page.evaluate("document.querySelectorAll('head style, body style').length") == 0
    type_answer(page, SOLUTION)
    assert editor_text(page) == "def add(a, b):\n    return a + b"
    candidate.check("attempt page (typed)")

    # Graded and drawn in place: the score bar is a <meter> as wide as its share of the score.
    page.click("[data-submit]")
    page.locator(".live[data-status=completed]").wait_for()
    bar = page.locator("meter.bar")
    assert bar.get_attribute("value") == "100"
    assert bar.bounding_box()["width"] > 100
    candidate.check("attempt page (graded)")

    candidate.goto("/attempts/")
    page.locator("table.history").wait_for()
    candidate.check("/attempts/")
    assert_clean(candidate)
