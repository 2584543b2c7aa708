"""Browser test: a staff user opens the operations dashboard from the admin index, sees its
server-drawn charts, and a job that finishes after the page loaded shows up without a reload."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from evaluation.models import EvaluationJob, JobStatus
from tests.browser.conftest import Candidate
from tests.factories import UserFactory
from tests.web_server import start_web


@pytest.fixture
def web(transactional_db, tmp_path):
    server = start_web(tmp_path)
    yield f"http://127.0.0.1:{server.port}"
    server.process.stop()


def test_staff_open_the_dashboard_from_admin_and_it_refreshes_live(browser, web):
    staff = Candidate(browser, web, UserFactory(is_staff=True, is_superuser=True))
    try:
        page = staff.page
        staff.goto("/admin/")
        page.click("[data-dashboard-link]")
        page.wait_for_url(lambda url: url.endswith("/staff/dashboard/"))
        for chart in ("queue-depth", "oldest-waiting", "throughput", "latency", "failures", "cache-hit-ratio"):
            assert page.locator(f'svg[data-chart="{chart}"]').count() == 1
        assert page.locator('svg[data-chart="throughput"]').get_attribute("data-total") == "0"
        finished = page.locator('tr[data-kind="evaluate"] [data-finished]')
        assert finished.inner_text().strip() == "0"
        navigations = []
        page.on("framenavigated", lambda frame: frame == page.main_frame and navigations.append(frame.url))
        staff.screenshot("ops-dashboard-before")

        job = EvaluationJob.objects.create(kind="evaluate", subject_id=1, status=JobStatus.SUCCEEDED, max_tries=3)
        EvaluationJob.objects.filter(pk=job.pk).update(
            created_at=timezone.now() - timedelta(seconds=3), finished_at=timezone.now()
        )

        page.wait_for_function(
            """() => {
              const cell = document.querySelector('tr[data-kind="evaluate"] [data-finished]');
              return cell !== null && cell.textContent.trim() === "1";
            }""",
            timeout=45_000,
        )
        assert page.locator('svg[data-chart="throughput"]').get_attribute("data-total") == "1"
        assert page.locator('svg[data-chart="throughput"] polyline').count() >= 1
        assert navigations == [], f"the page reloaded: {navigations}"
        staff.screenshot("ops-dashboard-after")
        assert staff.errors == []
    finally:
        staff.close()
