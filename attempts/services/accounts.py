"""Accounts: register and obtain an API token."""

from __future__ import annotations

from django.contrib.auth import authenticate, get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.http import HttpRequest
from rest_framework.authtoken.models import Token

from attempts.login_attempts import lockout_message, login_attempts_reset, login_locked_out, login_retry_after
from interviewprep.errors import InvalidInput, LoginLockedOut


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


def token_obtain(*, request: HttpRequest, username: str, password: str) -> str:
    """The user's token. `request` is Django's own, which axes counts failures by and marks when
    it refuses one (attempts/login_attempts.py): then even the right password is refused."""
    user = authenticate(request, username=username, password=password)
    if user is None or not user.is_active:
        if login_locked_out(request):
            retry_after = login_retry_after(request, username)
            raise LoginLockedOut(lockout_message(retry_after), retry_after=retry_after)
        raise InvalidInput("Unable to sign in with those credentials.")
    login_attempts_reset(request=request, username=user.get_username())
    token, _ = Token.objects.get_or_create(user=user)
    return token.key
