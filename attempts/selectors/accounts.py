"""Reads of accounts."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Value
from django.db.models.functions import Lower


def user_find_by_username(*, username: str) -> AbstractBaseUser | None:
    """The account whose name is `username` in any case. The same expression as the unique index
    of migration 0005, so PostgreSQL answers from that index and at most one row matches."""
    User = get_user_model()
    try:
        return User._default_manager.alias(name_lower=Lower(User.USERNAME_FIELD)).get(name_lower=Lower(Value(username)))
    except User.DoesNotExist:
        return None
