"""Browser tests: Playwright drives Debian's chromium against the real stack (the Procfile's web
server, a Celery worker and the relay) on the test database. Screenshots of each page are kept in
`test-artifacts/` for a person to look at."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from django.db import connection

from attempts.services.questions import question_file_read, question_upsert
from tests.factories import QuestionFactory, UserFactory
from tests.processes import ROOT
from tests.stack import shared_stack

ARTIFACTS = ROOT / "test-artifacts"
PASSWORD = "correct horse battery staple"
# What a headless Chromium needs on a machine with no network beyond its own services.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    """Chromium for one test module. Playwright's sync API keeps an event loop in the test's
    thread while it lives, and the tests' own ORM calls beside it are plain blocking calls all
    the same: Django is told so for this module only (processes the tests start never see it)."""
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("chromium is not installed: `bash scripts/setup-system.sh --browser` installs it (make test does)")
    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
            if before is None:
                os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
            else:
                os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


@pytest.fixture(scope="session")
def _stack_stopped_before_the_database_goes(django_db_setup):
    yield
    shared_stack.stop()


@pytest.fixture
def stack(_stack_stopped_before_the_database_goes, transactional_db, tmp_path_factory):
    """The web server, a worker for runs and evaluations, and the relay; the base URL. One stack
    serves the browser tests a test process runs in a row (tests/stack.py)."""
    yield shared_stack.url(tmp_path_factory.getbasetemp())
    # The stack's relay goes on polling while the test's tables are emptied after this, and its
    # query locks the outbox and the jobs in the opposite order to the flush's TRUNCATE. When
    # the two deadlock, the relay's pass is the one to give way (the next pass tries again): the
    # flush, run after this teardown on this connection, waits longer before it looks for one.
    with connection.cursor() as cursor:
        cursor.execute("SET deadlock_timeout = '20s'")


class Candidate:
    """A browser page with a logged-in candidate, collecting console errors as it goes."""

    def __init__(self, browser, base_url: str, user, *, width: int = 1280):
        self.base_url = base_url
        self.user = user
        self.context = browser.new_context(viewport={"width": width, "height": 900})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.set_default_timeout(30_000)
        self.log_in()

    def log_in(self) -> None:
        self.page.goto(f"{self.base_url}/login/")
        self.page.fill("input[name=username]", self.user.username)
        self.page.fill("input[name=password]", PASSWORD)
        self.page.click("button[type=submit]")
        self.page.wait_for_url(lambda url: "/login/" not in url)

    def expect_console_error(self, fragment: str) -> None:
        """An error the test caused on purpose (Chromium logs every refused fetch)."""
        matching = [error for error in self.errors if fragment in error]
        assert matching, f"expected a console error with {fragment!r}, got {self.errors}"
        self.errors.remove(matching[0])

    def goto(self, path: str) -> None:
        self.page.goto(f"{self.base_url}{path}")

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def candidate_page(browser, stack):
    pages = []

    def make(user=None, **kwargs) -> Candidate:
        page = Candidate(browser, stack, user or UserFactory(), **kwargs)
        pages.append(page)
        return page

    yield make
    errors = [error for page in pages for error in page.errors]
    for page in pages:
        page.close()
    assert errors == [], f"the browser console reported errors: {errors}"


@pytest.fixture
def adding_question():
    """A small coding question: one visible example, two hidden tests."""
    return QuestionFactory(
        kind="coding",
        evaluator="code",
        title="Add two numbers",
        prompt="Return the **sum** of `a` and `b`.",
        examples=[{"input": "a = 1, b = 2", "output": "3", "explanation": "One and two make *three*."}],
        evaluation_spec={
            "signature": {
                "function": "add",
                "params": [{"name": "a", "type": "int"}, {"name": "b", "type": "int"}],
                "returns": "int",
                "summary": "Return the sum of a and b.",
            },
            "tests": [
                {"name": "small", "args": [1, 2], "expected": 3, "visible": True},
                {"name": "negative", "args": [-5, 2], "expected": -3},
                {"name": "large", "args": [10**12, 1], "expected": 10**12 + 1},
            ],
        },
    )


@pytest.fixture
def warm_up_question():
    """The bank's warm-up question (sum of a list, in every language), loaded from its file."""
    path = ROOT / "questions" / "coding" / "sum-of-list.yaml"
    question, _ = question_upsert(data=question_file_read(path=path), source=str(path))
    return question
