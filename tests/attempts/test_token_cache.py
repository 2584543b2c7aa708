"""The token cache (attempts/authentication.py) against real Redis and PostgreSQL: a token is
read from the database at most once per bound, and a deleted one stops authenticating within
the bound however it was deleted, at once when deleted through Django."""

from __future__ import annotations

import threading

import pytest
import redis
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from attempts import authentication
from attempts.authentication import token_cache_key
from tests.factories import TokenFactory
from tests.processes import free_port, wait_for

URL = "/api/v1/attempts/"
# Generous: polls end as soon as their condition holds, this only stops a broken test.
DEADLINE_SECONDS = 60


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def _cache_redis() -> redis.Redis:
    return redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])


def _redis_key(key: str) -> str:
    return cache.make_key(token_cache_key(key))


def _entry(key: str):
    """What the cache holds for this token: a Token, a tombstone, or None."""
    return cache.get(token_cache_key(key))


def _token_queries(captured: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in captured.captured_queries if Token._meta.db_table in q["sql"]]


def _poll(predicate, what: str):
    return wait_for(predicate, timeout=DEADLINE_SECONDS, interval=0.02, message=what)


@pytest.mark.django_db
def test_a_token_is_read_from_the_database_once_then_from_the_cache():
    token = TokenFactory()
    client = _client(token.key)
    with CaptureQueriesContext(connection) as first:
        assert client.get(URL).status_code == 200
    with CaptureQueriesContext(connection) as second:
        assert client.get(URL).status_code == 200
    assert len(_token_queries(first)) == 1
    assert _token_queries(second) == []
    assert isinstance(_entry(token.key), Token) and _entry(token.key).user_id == token.user_id


@pytest.mark.django_db
def test_a_wrong_token_is_refused_and_nothing_is_cached():
    assert _client("0" * 40).get(URL).status_code == 401
    assert _entry("0" * 40) is None


@pytest.mark.django_db
def test_the_entry_expires_within_the_bound_counted_from_before_the_database_read(monkeypatch):
    """Redis holds the entry no longer than the bound minus the time the read took, so its
    expiry is never later than the bound after the database last said the token existed."""
    bound = settings.AUTH_TOKEN_CACHE_SECONDS
    quick, slow, too_slow = TokenFactory(), TokenFactory(), TokenFactory()
    assert _client(quick.key).get(URL).status_code == 200
    assert 0 < _cache_redis().pttl(_redis_key(quick.key)) <= bound * 1000

    # The read took three quarters of the bound (the clock is the module's, faked).
    clock = iter([1000.0, 1000.0 + bound * 0.75])
    monkeypatch.setattr(authentication, "monotonic", lambda: next(clock))
    assert _client(slow.key).get(URL).status_code == 200
    assert 0 < _cache_redis().pttl(_redis_key(slow.key)) <= bound * 250

    # A read that took the whole bound vouches for nothing: it is not cached at all.
    clock = iter([1000.0, 1000.0 + bound])
    assert _client(too_slow.key).get(URL).status_code == 200
    assert _entry(too_slow.key) is None


@pytest.mark.django_db(transaction=True)
def test_a_token_deleted_behind_the_apps_back_works_until_its_entry_expires_then_never(settings):
    """SQL sends no signal: the cached entry serves on, and once Redis expires it (at most the
    bound after it was filled, as the test above holds) the database refuses the token."""
    settings.AUTH_TOKEN_CACHE_SECONDS = 2
    token = TokenFactory()
    client = _client(token.key)
    assert client.get(URL).status_code == 200
    assert 0 < _cache_redis().pttl(_redis_key(token.key)) <= 2000
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {Token._meta.db_table} WHERE key = %s", [token.key])  # noqa: S608

    _poll(lambda: client.get(URL).status_code == 401, "the deleted token to be refused")
    assert _entry(token.key) is None, "a refused token was cached"
    assert client.get(URL).status_code == 401


@pytest.mark.django_db(transaction=True)
def test_a_deleted_token_is_served_from_its_entry_until_that_expires(settings):
    """The other side of the bound: without a signal nothing evicts the entry early (a bound
    long enough that no test run reaches it), so the bound is the entry's lifetime."""
    settings.AUTH_TOKEN_CACHE_SECONDS = 3600
    token = TokenFactory()
    client = _client(token.key)
    assert client.get(URL).status_code == 200
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {Token._meta.db_table} WHERE key = %s", [token.key])  # noqa: S608
    assert client.get(URL).status_code == 200
    # What Redis does when the bound has passed: the entry is gone, and so is the token.
    _cache_redis().pexpire(_redis_key(token.key), 1)
    _poll(lambda: not _cache_redis().exists(_redis_key(token.key)), "Redis to expire the entry")
    assert client.get(URL).status_code == 401


def _delete_token(token: Token) -> None:
    token.delete()


def _delete_tokens_by_query(token: Token) -> None:
    Token.objects.filter(user_id=token.user_id).delete()


def _delete_user(token: Token) -> None:
    get_user_model().objects.get(pk=token.user_id).delete()


def _deactivate_user(token: Token) -> None:
    user = get_user_model().objects.get(pk=token.user_id)
    user.is_active = False
    user.save()


def _delete_in_a_transaction(token: Token) -> None:
    with transaction.atomic():
        Token.objects.get(pk=token.pk).delete()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "revoke", [_delete_token, _delete_tokens_by_query, _delete_user, _deactivate_user, _delete_in_a_transaction]
)
def test_a_token_revoked_through_django_is_refused_by_the_next_request(revoke):
    token = TokenFactory()
    key = token.key  # a deleted instance's primary key (the key) is cleared
    client = _client(key)
    assert client.get(URL).status_code == 200
    assert isinstance(_entry(key), Token)
    revoke(token)
    assert client.get(URL).status_code == 401
    assert _entry(key) is not None and not isinstance(_entry(key), Token), "no tombstone"


@pytest.mark.django_db(transaction=True)
def test_a_request_that_read_the_token_before_its_deletion_cannot_cache_it(monkeypatch):
    """The race the tombstone is for: a request reads the token, the token is deleted and
    evicted, then that request tries to cache what it read."""
    token = TokenFactory()
    read, go_on = threading.Event(), threading.Event()
    original = TokenAuthentication.authenticate_credentials
    slow_thread: list[threading.Thread] = []

    def gated(self, key):
        found = original(self, key)
        if threading.current_thread() in slow_thread:
            read.set()
            assert go_on.wait(DEADLINE_SECONDS)
        return found

    monkeypatch.setattr(TokenAuthentication, "authenticate_credentials", gated)
    answers: list[int] = []

    def in_flight() -> None:
        try:
            answers.append(_client(token.key).get(URL).status_code)
        finally:
            connection.close()

    slow = threading.Thread(target=in_flight)
    slow_thread.append(slow)
    slow.start()
    assert read.wait(DEADLINE_SECONDS)
    Token.objects.get(pk=token.pk).delete()
    go_on.set()
    slow.join(DEADLINE_SECONDS)

    assert answers == [200], "the request in flight had read a live token"
    assert not isinstance(_entry(token.key), Token), "the request in flight cached a deleted token"
    assert _client(token.key).get(URL).status_code == 401


@pytest.mark.django_db(transaction=True)
def test_without_redis_tokens_are_read_from_the_database_and_revocations_hold():
    token = TokenFactory()
    client = _client(token.key)
    unreachable = {**settings.CACHES["default"], "LOCATION": f"redis://127.0.0.1:{free_port()}/0"}
    with override_settings(CACHES={"default": unreachable}):
        with CaptureQueriesContext(connection) as captured:
            assert client.get(URL).status_code == 200
            assert client.get(URL).status_code == 200
        assert len(_token_queries(captured)) == 2
        token.delete()
        assert client.get(URL).status_code == 401
