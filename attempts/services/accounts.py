"""Accounts: register and obtain an API token."""

from __future__ import annotations

from django.contrib.auth import authenticate, get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from rest_framework.authtoken.models import Token

from interviewprep.errors import InvalidInput


def user_register(*, username: str, password: str) -> tuple[object, str]:
    User = get_user_model()
    username = username.strip()
    try:
        User.username_validator(username)
    except ValidationError as exc:
        raise InvalidInput(" ".join(exc.messages), field="username") from None
    candidate = User(username=username)
    try:
        password_validation.validate_password(password, user=candidate)
    except ValidationError as exc:
        raise InvalidInput(" ".join(exc.messages), field="password") from None
    try:
        with transaction.atomic():
            user = User.objects.create_user(username=username, password=password)
            token = Token.objects.create(user=user)
    except IntegrityError:
        raise InvalidInput("That username is taken.", field="username") from None
    return user, token.key


def token_obtain(*, username: str, password: str) -> str:
    user = authenticate(username=username, password=password)
    if user is None or not user.is_active:
        raise InvalidInput("Unable to sign in with those credentials.")
    token, _ = Token.objects.get_or_create(user=user)
    return token.key
