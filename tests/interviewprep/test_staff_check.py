"""GET /staff/check/, the proxy's question before Flower: Django's own login and staff flag decide."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _status(user=None, method: str = "get") -> int:
    client = Client()
    if user is not None:
        client.force_login(user)
    return getattr(client, method)("/staff/check/").status_code


def test_no_login_is_401():
    assert _status() == 401


def test_a_candidate_is_403():
    assert _status(UserFactory()) == 403


def test_a_staff_user_is_204_with_nothing_to_cache():
    client = Client()
    client.force_login(UserFactory(is_staff=True))
    response = client.get("/staff/check/")
    assert response.status_code == 204
    assert response.content == b""
    assert "no-cache" in response["Cache-Control"]


def test_a_deactivated_staff_user_is_not_let_through():
    user = UserFactory(is_staff=True)
    client = Client()
    client.force_login(user)
    user.is_active = False
    user.save(update_fields=["is_active"])
    assert client.get("/staff/check/").status_code in {401, 403}


def test_a_token_is_no_session():
    token = Token.objects.create(user=UserFactory(is_staff=True))
    assert Client().get("/staff/check/", HTTP_AUTHORIZATION=f"Token {token.key}").status_code == 401
