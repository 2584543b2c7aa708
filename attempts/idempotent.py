"""The REST API's keyed POSTs: one create, once per Idempotency-Key. The rules of a key (its
form, its fingerprint, the one read of a replay, the claim) are services.idempotency's."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema

from attempts.services.idempotency import (
    StoredResponse,
    idempotency_key_validate,
    idempotent,
    render_body,
    request_fingerprint,
)
from interviewprep.api import json_object
from interviewprep.schema import IDEMPOTENCY_KEY


def _key_header(*, required: bool, description: str) -> OpenApiParameter:
    pattern = r"^[!-~]{1,255}$"
    return OpenApiParameter(
        IDEMPOTENCY_KEY, str, OpenApiParameter.HEADER, required, pattern=pattern, description=description
    )


_KEY_HEADER = {
    True: _key_header(
        required=True,
        description="1-255 printable ASCII characters, no spaces; "
        "a repeat with the same body replays the first answer.",
    ),
    False: _key_header(
        required=False,
        description="Optional here, honoured when sent: the same key with the same body replays the first answer.",
    ),
}


def creates_once(status_code: int, *, key_required: bool) -> Callable[[Callable[..., dict[str, Any]]], Callable]:
    """A POST handler that creates once per Idempotency-Key, from the view's `InputSerializer`.

    The decorated method gets the URL's arguments and, by keyword, `data` (the validated body)
    and `key` (None for an optional key not sent); it creates and returns the body of its
    `status_code` answer. A repeat of the key with the same request gets the first answer byte
    for byte, with `Idempotent-Replayed: true`; with another request, 422. A required key is
    checked before the body (docs/api.md), an optional one after it. The header's schema is
    declared here too.
    """

    def decorate(create: Callable[..., dict[str, Any]]) -> Callable:
        @functools.wraps(create)
        def post(view, request, *args, **kwargs) -> HttpResponse:
            header = request.headers.get(IDEMPOTENCY_KEY)
            key = idempotency_key_validate(header) if key_required else None
            data = json_object(request)
            serializer = view.InputSerializer(data=data)
            serializer.is_valid(raise_exception=True)
            if header is not None and not key_required:
                key = idempotency_key_validate(header)

            def work(render: Callable[[dict[str, Any]], bytes]) -> tuple[int, bytes]:
                payload = create(view, request, *args, data=serializer.validated_data, key=key, **kwargs)
                return status_code, render(payload)

            if key is None:
                # Rendered as a DRF Response would be (an Accept's `indent`, U+2028 escaped).
                drf_render = functools.partial(
                    request.accepted_renderer.render,
                    accepted_media_type=request.accepted_media_type,
                    renderer_context=view.get_renderer_context(),
                )
                stored = StoredResponse(*work(drf_render), replayed=False)
            else:
                fingerprint = request_fingerprint(method=request.method, path=request.path, data=data)
                stored = idempotent(
                    user_id=request.user.pk, key=key, fingerprint=fingerprint, work=lambda: work(render_body)
                )
            response = HttpResponse(stored.body, status=stored.status_code, content_type="application/json")
            if stored.replayed:
                response["Idempotent-Replayed"] = "true"
            return response

        return extend_schema(parameters=[_KEY_HEADER[key_required]])(post)

    return decorate
