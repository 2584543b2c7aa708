"""Browser test: a staff member finds a dead letter in admin, groups the letters by cause, sees
what a replay would do without changing anything, then replays it behind a confirmation."""

from __future__ import annotations

import dataclasses

import pytest
from django.conf import settings
from django.test import override_settings

from evaluation.jobs import job_run
from evaluation.models import DeadLetter, DeadLetterReplay, EvaluationJob
from tests.browser.conftest import Candidate
from tests.factories import AttemptFactory, UserFactory
from tests.helpers import submit_via_service
from tests.web_server import start_web


@pytest.fixture
def web(transactional_db, tmp_path):
    server = start_web(tmp_path)
    yield f"http://127.0.0.1:{server.port}"
    server.process.stop()


def _dead_letter() -> DeadLetter:
    _, job_id = submit_via_service(AttemptFactory(), "score=5")
    with override_settings(CONFIG=dataclasses.replace(settings.CONFIG, evaluator_faults={"permanent": 1.0})):
        assert job_run(job_id=job_id, worker="test") == "dead"
    return DeadLetter.objects.get(job_id=job_id)


def _choose(page, letter: DeadLetter, action: str) -> None:
    page.wait_for_selector("#changelist")
    page.check(f'input[name="_selected_action"][value="{letter.pk}"]')
    page.select_option('select[name="action"]', action)
    page.click('button[name="index"]')


def test_staff_group_dry_run_and_replay_a_dead_letter_from_admin(browser, web):
    letter = _dead_letter()
    jobs_before = EvaluationJob.objects.count()
    staff = Candidate(browser, web, UserFactory(is_staff=True, is_superuser=True))
    try:
        page = staff.page
        staff.goto("/admin/evaluation/deadletter/")
        page.click("text=By error class and question")
        page.wait_for_url(lambda url: "/groups/" in url)
        page.click(f"a:text-is('{letter.error_class}')")  # the group's letters, filtered
        page.wait_for_url(lambda url: "error_class=" in url)

        _choose(page, letter, "dry_run_dead_letters")
        page.wait_for_selector(".dry-run-summary")
        assert page.inner_text(".dry-run-summary") == "1 would run again, 0 would be skipped."
        assert "run it again" in page.inner_text("table.dry-run")
        assert EvaluationJob.objects.count() == jobs_before  # the dry run changed nothing
        assert not DeadLetterReplay.objects.exists()
        staff.screenshot("dead-letter-dry-run")
        page.click("text=Back to the dead letters")
        page.wait_for_url(lambda url: url.endswith("/admin/evaluation/deadletter/"))

        _choose(page, letter, "replay_dead_letters")
        page.wait_for_selector('input[value="Yes, replay them"]')
        assert EvaluationJob.objects.count() == jobs_before  # not before the confirmation
        page.click('input[value="Yes, replay them"]')
        page.wait_for_selector(".messagelist")
        assert page.inner_text(".messagelist").strip() == "1 dead letter replayed."
        assert EvaluationJob.objects.count() == jobs_before + 1
        (replay,) = DeadLetterReplay.objects.all()
        assert replay.dead_letter_id == letter.pk
        assert staff.errors == []
    finally:
        staff.close()
