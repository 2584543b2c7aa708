"""Guessing passwords is not free: after LOGIN_FAILURE_LIMIT failures for one username from one
address, or LOGIN_ADDRESS_FAILURE_LIMIT from one address (for any usernames), the token endpoint,
the web login and the admin login answer 429 with Retry-After, refuse even the right password, and let it in once the
cool-off has passed. One user's guesses never lock out the others behind the same (office)
address. Counts live in PostgreSQL (axes' tables), so every process sees them."""

import dataclasses
from dataclasses import dataclass
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import F
from django.test import Client, override_settings
from rest_framework.test import APIClient

from tests.factories import UserFactory

PASSWORD = "correct horse battery staple"
WRONG = "not the password"


@dataclass(frozen=True)
class Surface:
    name: str
    path: str

    def attempt(self, username: str, password: str, address: str, **headers):
        if self.name == "api":
            return APIClient().post(
                self.path, {"username": username, "password": password}, format="json", REMOTE_ADDR=address, **headers
            )
        data = {"username": username, "password": password, "next": "/admin/" if self.name == "admin" else "/"}
        return Client().post(self.path, data, REMOTE_ADDR=address, **headers)

    def succeeded(self, response) -> bool:
        if self.name == "api":
            return response.status_code == 200 and bool(response.json()["token"])
        return response.status_code == 302

    def assert_locked_out(self, response) -> None:
        assert response.status_code == 429, response.content[:500]
        retry_after = int(response["Retry-After"])
        assert 0 < retry_after <= settings.AXES_COOLOFF_TIME.total_seconds() + 1
        if self.name == "api":
            assert response["Content-Type"] == "application/problem+json"
            body = response.json()
            assert body["status"] == 429 and "Too many failed" in body["detail"]
            assert body["retry_after"] == retry_after
        else:
            page = response.content.decode()
            assert "Too many failed" in page and "Try again in" in page
            assert 'name="password"' in page, "the login form is shown again"


SURFACES = [
    Surface("api", "/api/v1/auth/token/"),
    Surface("web", "/login/"),
    Surface("admin", "/admin/login/"),
]


@pytest.fixture(params=SURFACES, ids=lambda surface: surface.name)
def surface(request) -> Surface:
    return request.param


@pytest.fixture
def ada(db):
    # Staff, so the admin login can succeed too.
    return UserFactory(username="ada", is_staff=True)


LIMIT = 5


@pytest.fixture(autouse=True)
def _limit_is_the_default():
    assert settings.AXES_FAILURE_LIMIT == LIMIT


def cool_off_passes() -> None:
    """The clock moves on: every recorded failure becomes older than the cool-off."""
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - settings.AXES_COOLOFF_TIME - timedelta(seconds=1))


def test_failures_for_one_username_from_one_address_lock_that_username_there(surface, ada):
    for _ in range(LIMIT - 1):
        response = surface.attempt("ada", WRONG, "10.0.0.1")
        assert response.status_code != 429 and not surface.succeeded(response)
    surface.assert_locked_out(surface.attempt("ada", WRONG, "10.0.0.1"))
    surface.assert_locked_out(surface.attempt("ada", PASSWORD, "10.0.0.1"))
    # The guesses were counted against ada from that address, not against ada everywhere.
    assert surface.succeeded(surface.attempt("ada", PASSWORD, "10.0.1.1"))


def test_one_users_failures_do_not_lock_out_the_office_behind_the_same_address(surface, ada):
    for _ in range(LIMIT):
        surface.attempt("ada", WRONG, "10.0.0.7")
    surface.assert_locked_out(surface.attempt("ada", PASSWORD, "10.0.0.7"))
    UserFactory(username="grace", is_staff=True)
    assert surface.succeeded(surface.attempt("grace", PASSWORD, "10.0.0.7"))


def test_the_address_alone_has_a_higher_ceiling(ada):
    assert settings.CONFIG.login_address_failure_limit == 50


@override_settings(CONFIG=dataclasses.replace(settings.CONFIG, login_address_failure_limit=8))
def test_failures_from_one_address_past_its_ceiling_lock_it_for_every_username(surface, ada):
    for n in range(8 - 1):
        response = surface.attempt(f"guess{n}", WRONG, "10.0.0.7")
        assert response.status_code != 429 and not surface.succeeded(response)
    surface.assert_locked_out(surface.attempt("guess-last", WRONG, "10.0.0.7"))
    surface.assert_locked_out(surface.attempt("ada", PASSWORD, "10.0.0.7"))
    assert surface.succeeded(surface.attempt("ada", PASSWORD, "10.0.0.8"))


def test_the_right_password_is_refused_while_locked_out_and_accepted_after_the_cool_off(surface, ada):
    for _ in range(LIMIT):
        surface.attempt("ada", WRONG, "10.0.0.1")
    surface.assert_locked_out(surface.attempt("ada", PASSWORD, "10.0.0.1"))
    # Attempts during a lock-out are refused without being counted, so Retry-After stays true.
    assert sum(AccessAttempt.objects.values_list("failures_since_start", flat=True)) == LIMIT

    cool_off_passes()
    assert surface.succeeded(surface.attempt("ada", PASSWORD, "10.0.0.1"))
    assert not AccessAttempt.objects.filter(username="ada").exists()


def test_a_success_resets_the_usernames_count(surface, ada):
    for _ in range(LIMIT - 1):
        surface.attempt("ada", WRONG, "10.0.0.1")
    assert surface.succeeded(surface.attempt("ada", PASSWORD, "10.0.0.1"))
    for _ in range(LIMIT - 1):
        response = surface.attempt("ada", WRONG, "10.0.0.1")
        assert response.status_code != 429
    surface.assert_locked_out(surface.attempt("ada", WRONG, "10.0.0.1"))


def test_another_accounts_success_does_not_reset_a_victims_count(ada):
    """One attacker with an account of their own must not wipe the count of the name they guess."""
    api = SURFACES[0]
    UserFactory(username="mallory")
    for _ in range(LIMIT - 1):
        api.attempt("ada", WRONG, "10.0.0.66")
    assert api.succeeded(api.attempt("mallory", PASSWORD, "10.0.0.66"))
    api.assert_locked_out(api.attempt("ada", WRONG, "10.0.0.66"))


def test_case_variants_of_a_name_share_one_count(ada):
    api = SURFACES[0]
    for name in ["ADA", "Ada", "aDa", "adA"]:
        api.attempt(name, WRONG, "10.0.0.1")
    api.assert_locked_out(api.attempt("ada", WRONG, "10.0.0.1"))


def test_forwarded_for_is_ignored_unless_behind_a_proxy(ada):
    api = SURFACES[0]
    for n in range(LIMIT - 1):
        api.attempt("guess", WRONG, "10.0.0.5", HTTP_X_FORWARDED_FOR=f"198.51.100.{n + 1}")
    api.assert_locked_out(api.attempt("guess", WRONG, "10.0.0.5", HTTP_X_FORWARDED_FOR="198.51.100.200"))
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"10.0.0.5"}


@override_settings(BEHIND_PROXY=True, TRUSTED_PROXIES=("127.0.0.1/32",))
def test_behind_a_proxy_the_right_most_untrusted_forwarded_address_is_the_client(ada):
    api = SURFACES[0]
    api.attempt("guess", WRONG, "127.0.0.1", HTTP_X_FORWARDED_FOR="10.1.1.1, 198.51.100.7")
    api.attempt("guess", WRONG, "127.0.0.1", HTTP_X_FORWARDED_FOR="not-an-address")
    # The address the proxy saw, never the one the client wrote; an unknown client has no address.
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"198.51.100.7", None}
