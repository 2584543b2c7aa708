"""System checks of the project: `manage.py check`, `runserver` and `migrate` print them."""

from __future__ import annotations

from django.conf import settings
from django.core import checks

from interviewprep.config import DEV_SECRET_KEY


@checks.register(checks.Tags.security)
def development_secret_key_check(app_configs, **kwargs) -> list[checks.CheckMessage]:
    # Production mode refuses this key at start (interviewprep/config.py); elsewhere it is allowed
    # for a developer's machine, and anything signed with it can be forged by anyone.
    if settings.SECRET_KEY != DEV_SECRET_KEY:
        return []
    return [
        checks.Warning(
            "SECRET_KEY is the development key, published in the source: sessions, password reset "
            "links and CSRF tokens can be forged by anyone. Never serve real users like this.",
            hint="Set SECRET_KEY to 50 or more random characters and INTERVIEWPREP_PRODUCTION=true.",
            id="interviewprep.W001",
        )
    ]
