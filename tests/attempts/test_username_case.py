"""A username is one account however it is capitalised: `Ada` cannot register beside `ada`, the
database refuses it whatever path a row comes by, and `ADA` logs in as `ada`."""

import importlib
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.test import Client
from rest_framework.test import APIClient

from attempts import migrations
from tests.factories import UserFactory

PASSWORD = "correct horse battery staple"
User = get_user_model()
# Found by name, whatever number it is given.
(_migration_file,) = Path(migrations.__file__).parent.glob("*_username_unique_ci.py")
migration = importlib.import_module(f"attempts.migrations.{_migration_file.stem}")


@pytest.mark.django_db
def test_the_api_refuses_a_name_taken_in_another_case():
    client = APIClient()
    assert (
        client.post("/api/v1/auth/register/", {"username": "ada", "password": PASSWORD}, format="json").status_code
        == 201
    )
    again = client.post("/api/v1/auth/register/", {"username": "Ada", "password": PASSWORD}, format="json")
    assert again.status_code == 400
    assert again.json()["field"] == "username" and "taken" in again.json()["detail"]
    assert list(User.objects.values_list("username", flat=True)) == ["ada"]


@pytest.mark.django_db
def test_the_register_page_refuses_a_name_taken_in_another_case(client):
    UserFactory(username="ada")
    response = client.post("/register/", {"username": "ADA", "password": PASSWORD, "password_again": PASSWORD})
    assert response.status_code == 400
    assert "That username is taken." in response.content.decode()
    assert User.objects.count() == 1


@pytest.mark.django_db
def test_the_database_refuses_a_name_taken_in_another_case():
    User.objects.create(username="ada")
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create(username="ADA")


@pytest.mark.django_db
def test_a_name_logs_in_in_any_case_as_its_account():
    ada = UserFactory(username="ada")
    response = APIClient().post("/api/v1/auth/token/", {"username": "ADA", "password": PASSWORD}, format="json")
    assert response.status_code == 200
    assert response.json()["token"] == ada.auth_token.key

    client = Client()
    assert client.post("/login/", {"username": "Ada", "password": PASSWORD}).status_code == 302
    assert client.get("/").context["user"] == ada

    mixed = UserFactory(username="Grace")
    assert Client().post("/login/", {"username": "grace", "password": PASSWORD}).status_code == 302
    assert (
        APIClient()
        .post("/api/v1/auth/token/", {"username": "GRACE", "password": PASSWORD}, format="json")
        .json()["token"]
        == mixed.auth_token.key
    )


@pytest.mark.django_db
def test_the_wrong_password_in_another_case_is_still_wrong():
    UserFactory(username="ada")
    response = APIClient().post("/api/v1/auth/token/", {"username": "ADA", "password": "nope"}, format="json")
    assert response.status_code == 400


@pytest.mark.django_db
def test_the_migration_stops_on_names_that_differ_only_in_case():
    """Existing accounts are never merged silently: the migration names them and stops."""
    with pytest.raises(DatabaseError) as error, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(migration.DROP_INDEX)
        User.objects.bulk_create([User(username="bob"), User(username="BOB"), User(username="Bob")])
        cursor.execute(migration.CREATE_INDEX)
    assert "differ only in case" in str(error.value)
    assert "bob" in str(error.value) and "BOB" in str(error.value)
    # The transaction rolled back: the index is there again.
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.bulk_create([User(username="eve"), User(username="EVE")])
