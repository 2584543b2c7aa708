"""What only pages need (the session, its user, messages, CSRF) is skipped for API requests that
name a token (interviewprep.middleware.token_api_request), and kept for everything else: the
pages, and the pages' own calls to the API on the session, which must still send their CSRF token."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from attempts.models import Submission
from tests.factories import AttemptFactory, TokenFactory, UserFactory

ANSWER = {"answer": "Hash the URL, store it, redirect on read."}


def submissions_url(attempt) -> str:
    return f"/api/v1/attempts/{attempt.pk}/submissions/"


def browser(user=None) -> Client:
    """A browser: CSRF enforced, and logged in when given a user."""
    client = Client(enforce_csrf_checks=True)
    if user is not None:
        client.force_login(user)
    return client


def submit(client: Client, attempt, key: str, **headers):
    return client.post(
        submissions_url(attempt), ANSWER, content_type="application/json", HTTP_IDEMPOTENCY_KEY=key, **headers
    )


@pytest.mark.django_db
def test_a_token_api_post_needs_no_csrf_token_and_sets_no_cookie():
    token = TokenFactory()
    attempt = AttemptFactory(user=token.user)
    response = submit(browser(), attempt, "token-post", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 202, response.content
    assert Submission.objects.filter(attempt=attempt).count() == 1
    assert not response.cookies  # neither a session nor a CSRF cookie
    assert "Cookie" not in response.get("Vary", "")
    request = response.wsgi_request
    assert not hasattr(request, "session")
    assert not hasattr(request, "_messages")


@pytest.mark.django_db
def test_a_token_api_request_is_its_tokens_user_whatever_session_it_carries():
    """A session cookie beside a token is never read: the token's user is the one served."""
    session_user = UserFactory()
    token = TokenFactory()
    client = browser(session_user)
    theirs = AttemptFactory(user=session_user)
    mine = AttemptFactory(user=token.user)
    as_token = {"HTTP_AUTHORIZATION": f"Token {token.key}"}

    assert client.get(f"/api/v1/attempts/{mine.pk}/", **as_token).status_code == 200
    assert client.get(f"/api/v1/attempts/{theirs.pk}/", **as_token).status_code == 404
    # No CSRF token, and the session's user owns the attempt: still only the token speaks.
    assert submit(client, theirs, "not-mine", **as_token).status_code == 404
    assert not Submission.objects.exists()


@pytest.mark.django_db
def test_a_wrong_token_is_refused_even_with_a_session_that_would_pass():
    user = UserFactory()
    attempt = AttemptFactory(user=user)
    response = browser(user).get(f"/api/v1/attempts/{attempt.pk}/", HTTP_AUTHORIZATION="Token not-a-token")
    assert response.status_code == 401
    assert response["Content-Type"].startswith("application/problem+json")


@pytest.mark.django_db
def test_a_session_api_post_without_its_csrf_token_is_refused():
    attempt = AttemptFactory()
    client = browser(attempt.user)
    response = submit(client, attempt, "no-csrf")
    assert response.status_code == 403
    assert response["Content-Type"].startswith("application/problem+json")
    assert "CSRF" in response.json()["detail"]
    assert not Submission.objects.exists()


@pytest.mark.django_db
def test_a_session_api_post_with_the_pages_csrf_token_is_accepted():
    """As the attempt page's script does (static/js/attempt.js): the session, and X-CSRFToken."""
    attempt = AttemptFactory()
    client = browser(attempt.user)
    assert client.get(f"/attempts/{attempt.pk}/").status_code == 200
    csrf = client.cookies[settings.CSRF_COOKIE_NAME].value
    response = submit(client, attempt, "page-submit", HTTP_X_CSRFTOKEN=csrf)
    assert response.status_code == 202, response.content
    assert Submission.objects.filter(attempt=attempt).count() == 1
    assert hasattr(response.wsgi_request, "session")


@pytest.mark.django_db
def test_a_page_keeps_its_session_even_when_sent_a_token_header():
    """Only API requests skip the session: a page is the session's user's, whatever else it carries."""
    token = TokenFactory()
    user = UserFactory()
    response = browser(user).get("/attempts/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200
    assert response.wsgi_request.user == user
    assert user.username in response.content.decode()


@pytest.mark.django_db
def test_registering_on_a_page_still_signs_in_on_the_session_and_shows_its_message():
    client = browser()
    assert client.get("/register/").status_code == 200
    password = "correct horse battery staple"
    response = client.post(
        "/register/",
        {
            "username": "ada",
            "password": password,
            "password_again": password,
            "csrfmiddlewaretoken": client.cookies[settings.CSRF_COOKIE_NAME].value,
        },
        follow=True,
    )
    assert response.status_code == 200
    assert settings.SESSION_COOKIE_NAME in client.cookies
    assert response.context["user"].username == "ada"
    assert "Welcome, ada." in response.content.decode()
