"""The answer to a login axes refused, for every login surface (settings.AXES_LOCKOUT_CALLABLE)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from attempts.login_attempts import lockout_message, login_retry_after, login_username_key


def login_locked_out_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict | None = None
) -> HttpResponse:
    """The surface has already said why (the token endpoint's problem details, the login form's
    error on the login page shown again); this makes its answer a 429 with Retry-After."""
    if isinstance(original_response, dict):
        # Axes calls (request, credentials) too, when the first call of the three-argument form
        # raised a TypeError.
        original_response, credentials = None, original_response
    retry_after = login_retry_after(request, login_username_key(request, credentials))
    response = original_response
    if response is None:
        response = HttpResponse(lockout_message(retry_after), content_type="text/plain; charset=utf-8")
    response.status_code = 429
    if not response.has_header("Retry-After"):
        response["Retry-After"] = str(retry_after)
    return response
