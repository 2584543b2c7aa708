"""Token authentication that asks the cache (django-redis) before the database.

A token found in the database is kept in the cache, with its user, for at most
`AUTH_TOKEN_CACHE_SECONDS` counted from the moment that database read began: whatever deletes
a token (the ORM, the admin, deleting its user, or SQL behind the app's back, while Redis
answers or not), it stops authenticating at most that long after the deletion commits.

Deleted or changed through Django (the token, or its user: deactivated, made staff or not),
the entry is replaced by a tombstone at once and again when the transaction commits, so the
very next request reads the database. A request that read the token just before the commit
can no longer put it back: entries are added only where no key exists (`cache.add`), and a
tombstone outlives any entry such a request could still add.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from time import monotonic

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

# Any value that is not a Token: the entry was evicted, ask the database and do not cache.
_TOMBSTONE = 0
# The tombstone's margin over the entry's lifetime covers the add's own trip to Redis.
_TOMBSTONE_MARGIN_SECONDS = 1.0


def token_cache_key(key: str) -> str:
    """Where a token's entry lives: a digest, so no token is readable from Redis' key names."""
    return "auth:token:" + hashlib.sha256(key.encode()).hexdigest()


class CachedTokenAuthentication(TokenAuthentication):
    """DRF's TokenAuthentication, its lookup served from the cache for a bounded time."""

    def authenticate_credentials(self, key: str):
        cache_key = token_cache_key(key)
        found = cache.get(cache_key)
        if isinstance(found, Token):
            return found.user, found
        started = monotonic()
        user, token = super().authenticate_credentials(key)
        # Counted from before the read: an entry never vouches for a token longer than the
        # bound after the database last said it existed.
        left = settings.AUTH_TOKEN_CACHE_SECONDS - (monotonic() - started)
        if found is None and left > 0:
            cache.add(cache_key, token, timeout=left)
        return user, token


def token_evict(keys: Iterable[str]) -> None:
    """Tombstone these tokens' entries now and, inside a transaction, again once it commits
    (a request reading the database in between still sees the token)."""
    keys = [key for key in keys if key]
    if not keys:
        return
    _tombstone(keys)
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(lambda: _tombstone(keys))


def _tombstone(keys: list[str]) -> None:
    timeout = settings.AUTH_TOKEN_CACHE_SECONDS + _TOMBSTONE_MARGIN_SECONDS
    cache.set_many({token_cache_key(key): _TOMBSTONE for key in keys}, timeout=timeout)


def _token_deleted(sender, instance: Token, **kwargs) -> None:
    token_evict([instance.key])


def _token_saved(sender, instance: Token, created: bool, **kwargs) -> None:
    if not created:
        token_evict([instance.key])


def _user_saved(sender, instance, created: bool, **kwargs) -> None:
    if not created:
        token_evict(Token.objects.filter(user_id=instance.pk).values_list("key", flat=True))


def connect_evictions() -> None:
    """Deleting a user deletes its token through the ORM too, so the token's receiver sees it."""
    post_delete.connect(_token_deleted, sender=Token, dispatch_uid="token-cache-deleted")
    post_save.connect(_token_saved, sender=Token, dispatch_uid="token-cache-saved")
    post_save.connect(_user_saved, sender=get_user_model(), dispatch_uid="token-cache-user-saved")
