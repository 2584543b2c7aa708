"""What the page views share."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from attempts.services.idempotency import idempotent, request_fingerprint


def redirect_once(request: HttpRequest, key: str, data: dict, work) -> HttpResponse:
    """A form post under its key: `work` once, and every repeat redirected where the first went."""
    stored = idempotent(
        user_id=request.user.pk,
        key=key,
        fingerprint=request_fingerprint(method="POST", path=request.path, data=data),
        work=work,
    )
    return redirect(stored.body.decode())
