import pytest
from rest_framework.test import APIClient


@pytest.mark.django_db
def test_register_then_obtain_a_token_and_use_it():
    client = APIClient()
    registered = client.post(
        "/api/v1/auth/register/", {"username": "ada", "password": "analytical engine 1843"}, format="json"
    )
    assert registered.status_code == 201
    body = registered.json()
    assert body["username"] == "ada" and body["token"]
    token = client.post("/api/v1/auth/token/", {"username": "ada", "password": "analytical engine 1843"}, format="json")
    assert token.status_code == 200 and token.json()["token"] == body["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {body['token']}")
    assert client.get("/api/v1/attempts/").json()["count"] == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("payload", "words"),
    [
        ({"username": "bob", "password": "123"}, "too short"),
        ({"username": "bob", "password": "password"}, "too common"),
        ({"username": "bad name!", "password": "a fine long password"}, "username"),
        ({"username": "bob"}, "password"),
    ],
)
def test_register_refuses_weak_passwords_and_bad_names(payload, words):
    response = APIClient().post("/api/v1/auth/register/", payload, format="json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert words in response.json()["detail"]


@pytest.mark.django_db
def test_register_refuses_a_taken_name():
    client = APIClient()
    payload = {"username": "carol", "password": "a fine long password"}
    assert client.post("/api/v1/auth/register/", payload, format="json").status_code == 201
    again = client.post("/api/v1/auth/register/", payload, format="json")
    assert again.status_code == 400
    assert "taken" in again.json()["detail"]


@pytest.mark.django_db
def test_bad_credentials_are_400():
    response = APIClient().post("/api/v1/auth/token/", {"username": "nobody", "password": "x"}, format="json")
    assert response.status_code == 400
