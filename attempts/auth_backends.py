"""Logging in finds the account by its name in any case: `ADA` is `ada` (usernames are unique
regardless of case, attempts/migrations/0005_username_unique_ci.py)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend

from attempts.selectors.accounts import user_find_by_username


class UsernameAnyCaseBackend(ModelBackend):
    """Django's ModelBackend with a lookup that ignores case; permissions and sessions as before."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        User = get_user_model()
        if username is None:
            username = kwargs.get(User.USERNAME_FIELD)
        if username is None or password is None:
            return None
        user = user_find_by_username(username=username)
        if user is None:
            # Hash anyway, as ModelBackend does, so an unknown name answers as slowly as a known one.
            User().set_password(password)
            return None
        if user.check_password(password) and self.user_can_authenticate(user):
            return user
        return None
