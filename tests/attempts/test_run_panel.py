"""The attempt page's Run: one request creates the run and answers with its panel, drawn from the
create's own payload (cases included when they ran within the wait)."""

import dataclasses
import threading

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test import Client, override_settings

from attempts.models import Run
from attempts.services.runs import run_complete, run_lock, run_start_processing
from tests.attempts.test_runs import ANSWER, COMPLETED, coding_attempt
from tests.factories import AttemptFactory, QuestionFactory
from tests.processes import wait_for


def page_client(user) -> Client:
    """A browser's session: logged in, CSRF enforced."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def post_panel(client, attempt_id, token, body=None):
    return client.post(
        f"/attempts/{attempt_id}/runs/",
        body or {"answer": ANSWER},
        content_type="application/json",
        HTTP_ACCEPT="text/html",  # as the page's script sends it
        HTTP_X_CSRFTOKEN=token,
    )


def csrf_token(client, attempt_id) -> str:
    assert client.get(f"/attempts/{attempt_id}/").status_code == 200
    return client.cookies["csrftoken"].value


@pytest.mark.django_db
def test_a_run_not_done_within_the_wait_answers_202_with_its_pending_panel():
    attempt = coding_attempt()
    client = page_client(attempt.user)
    response = post_panel(client, attempt.pk, csrf_token(client, attempt.pk))
    assert response.status_code == 202
    run = Run.objects.get(attempt=attempt)
    html = response.content.decode()
    assert f'data-run-id="{run.pk}" data-pending' in html
    assert "Running your code" in html


@pytest.mark.django_db(transaction=True)
def test_a_run_done_within_the_wait_answers_200_with_its_cases_drawn():
    attempt = coding_attempt()
    client = page_client(attempt.user)
    token = csrf_token(client, attempt.pk)

    def worker():
        # As the run's job does once it has run the answer: processing, then completed.
        row = wait_for(lambda: Run.objects.filter(attempt=attempt).first(), message="the run created")
        with transaction.atomic():
            run_start_processing(run=run_lock(run_id=row.pk), actor="test")
        with transaction.atomic():
            run_complete(run=run_lock(run_id=row.pk), result=COMPLETED, actor="test")
        connection.close()

    thread = threading.Thread(target=worker)
    with override_settings(CONFIG=dataclasses.replace(settings.CONFIG, run_wait_seconds=20)):
        thread.start()
        response = post_panel(client, attempt.pk, token)
    thread.join()
    assert response.status_code == 200
    html = response.content.decode()
    assert "data-pending" not in html
    assert "2 of 2 examples passed." in html
    assert "Ran in Python 3.99.1" in html


@pytest.mark.django_db
def test_without_the_csrf_token_a_session_run_is_refused_and_nothing_is_written():
    attempt = coding_attempt()
    client = page_client(attempt.user)
    response = post_panel(client, attempt.pk, "not-the-token")
    assert response.status_code == 403
    assert response["Content-Type"].startswith("application/problem+json")
    assert not Run.objects.exists()


@pytest.mark.django_db
def test_a_refused_run_answers_with_the_apis_problem_document():
    attempt = AttemptFactory(question=QuestionFactory(kind="behavioral"))
    client = page_client(attempt.user)
    response = post_panel(client, attempt.pk, csrf_token(client, attempt.pk))
    assert response.status_code == 400
    assert response.json()["detail"]
    assert not Run.objects.exists()
