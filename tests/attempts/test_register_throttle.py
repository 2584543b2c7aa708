"""Registration is limited per client address (REGISTER_RATE), by one counter that the API and the
register page share, answering 429 with Retry-After."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from attempts.throttles import RegisterThrottle

PASSWORD = "correct horse battery staple"


@pytest.fixture
def rate(monkeypatch):
    def set_rate(value: str | None) -> None:
        monkeypatch.setattr(RegisterThrottle, "THROTTLE_RATES", {"register": value})

    return set_rate


def api_register(name: str, address: str):
    return APIClient().post(
        "/api/v1/auth/register/", {"username": name, "password": PASSWORD}, format="json", REMOTE_ADDR=address
    )


def page_register(name: str, address: str):
    data = {"username": name, "password": PASSWORD, "password_again": PASSWORD}
    return Client().post("/register/", data, REMOTE_ADDR=address)


@pytest.mark.django_db
def test_the_api_is_limited_per_address(rate):
    rate("3/hour")
    assert [api_register(f"user{n}", "10.0.0.1").status_code for n in range(3)] == [201, 201, 201]
    refused = api_register("user3", "10.0.0.1")
    assert refused.status_code == 429
    assert refused["Content-Type"] == "application/problem+json"
    assert 0 < int(refused["Retry-After"]) <= 3601
    assert api_register("user4", "10.0.0.2").status_code == 201
    assert not get_user_model().objects.filter(username="user3").exists()


@pytest.mark.django_db
def test_the_page_and_the_api_share_one_count(rate):
    rate("3/hour")
    assert api_register("user0", "10.0.0.1").status_code == 201
    assert page_register("user1", "10.0.0.1").status_code == 302
    # A refused registration (a taken name) counts as well: the limit is on trying.
    assert page_register("user1", "10.0.0.1").status_code == 400
    refused = page_register("user2", "10.0.0.1")
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 3601
    page = refused.content.decode()
    assert "Too many accounts" in page and "Try again in" in page
    assert 'name="username"' in page, "the form is shown again"
    assert api_register("user3", "10.0.0.1").status_code == 429
    assert page_register("user4", "10.0.0.2").status_code == 302


@pytest.mark.django_db
def test_showing_the_page_does_not_count(rate):
    rate("1/hour")
    client = Client(REMOTE_ADDR="10.0.0.1")
    for _ in range(3):
        assert client.get("/register/").status_code == 200
    assert page_register("user0", "10.0.0.1").status_code == 302


@pytest.mark.django_db
def test_off_means_no_limit(rate):
    rate(None)
    assert all(api_register(f"user{n}", "10.0.0.1").status_code == 201 for n in range(12))
