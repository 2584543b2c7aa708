"""The OpenAPI schema's shared rules (DEFAULT_SCHEMA_CLASS): every error an operation can answer,
as problem details, derived once from what its view declares rather than repeated per view."""

from __future__ import annotations

from typing import Any

from drf_spectacular.drainage import has_override
from drf_spectacular.openapi import AutoSchema
from rest_framework import permissions, serializers
from rest_framework.authentication import SessionAuthentication

from interviewprep.api import PROBLEM_CONTENT_TYPE

IDEMPOTENCY_KEY = "Idempotency-Key"
NO_NUL = r"^[^\x00]*$"
_BODY_METHODS = ("POST", "PUT", "PATCH")
_RETRY_AFTER = {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait before trying again."}}
_REPLAYED = {
    "Idempotent-Replayed": {
        "schema": {"type": "string", "enum": ["true"]},
        "description": "Present when this is the stored first answer to the same key and request.",
    }
}
_WHY = {
    400: "Malformed JSON, a malformed field or query parameter, or a missing or malformed Idempotency-Key.",
    401: "No credentials, or a token that is not valid.",
    403: "Staff only, or a session request without its CSRF token.",
    404: "Missing, or not the caller's (the two are indistinguishable); also a page beyond the last.",
    413: "The answer is over 64 KiB.",
    415: "The body is not JSON.",
    422: "This Idempotency-Key was used for another request.",
    429: "Over the rate; retry after Retry-After seconds.",
    503: "Overloaded: nothing was written; retry after Retry-After seconds.",
}


class ProblemSerializer(serializers.Serializer):
    """RFC 9457 problem details; some problems carry fields of their own (errors, field, retry_after...)."""

    type = serializers.CharField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField()
    errors = serializers.JSONField(required=False, help_text="Per field messages, for a 400 on invalid fields.")
    field = serializers.CharField(required=False, help_text="The field at fault.")
    retry_after = serializers.IntegerField(required=False, help_text="As the Retry-After header.")


# For statuses a rule below cannot see (a 503 on overload, a 429 without a throttle class):
# `responses={503: PROBLEM}`.
PROBLEM = ProblemSerializer


class ProblemAutoSchema(AutoSchema):
    def _get_response_bodies(self, direction="response") -> dict[str, Any]:
        responses = super()._get_response_bodies(direction)
        parameters = self._get_parameters()
        replayable = any(p["in"] == "header" and p["name"] == IDEMPOTENCY_KEY for p in parameters)
        for code, response in responses.items():
            if replayable and code.startswith("2"):
                response.setdefault("headers", {}).update(_REPLAYED)
        for code in self._problem_statuses(parameters, replayable) | {int(c) for c in responses if c >= "400"}:
            responses[str(code)] = self._problem_response(code)
        return dict(sorted(responses.items()))

    def _problem_statuses(self, parameters: list[dict], replayable: bool) -> set[int]:
        has_body = self.method in _BODY_METHODS and self.get_request_serializer() is not None
        locations = {p["in"] for p in parameters}
        perms = {type(p) for p in self.view.get_permissions()}
        authenticators = self.view.get_authenticators()
        statuses = set()
        if has_body or "query" in locations or replayable:
            statuses.add(400)
        if has_body:
            # Every body is read through the same size check and JSON parser.
            statuses |= {413, 415}
        if authenticators and permissions.AllowAny not in perms:
            statuses.add(401)
        csrf = self.method in _BODY_METHODS and any(isinstance(a, SessionAuthentication) for a in authenticators)
        if csrf or perms - {permissions.AllowAny, permissions.IsAuthenticated}:
            statuses.add(403)
        # A path id may name nothing; a paginated list's page may be past the last one.
        if "path" in locations or any(p["in"] == "query" and p["name"] == "page" for p in parameters):
            statuses.add(404)
        if replayable:
            statuses.add(422)
        if self.view.get_throttles():
            statuses.add(429)
        return statuses

    def _problem_response(self, code: int) -> dict[str, Any]:
        response: dict[str, Any] = {
            "description": _WHY.get(code, "Problem details."),
            "content": {PROBLEM_CONTENT_TYPE: {"schema": self.resolve_serializer(PROBLEM, "response").ref}},
        }
        if code in (429, 503):
            response["headers"] = dict(_RETRY_AFTER)
        return response

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if direction == "request" and isinstance(field, serializers.CharField) and schema.get("type") == "string":
            # DRF refuses a NUL in any string it reads (ProhibitNullCharactersValidator).
            schema.setdefault("pattern", NO_NUL)
        return schema

    def _insert_field_validators(self, field, schema) -> None:
        # A schema declared for the field (extend_schema_field) is the whole truth; leave it be.
        if not has_override(field, "field"):
            super()._insert_field_validators(field, schema)

    def get_serializer_name(self, serializer, direction) -> str:
        # A serializer nested in its view (`RunCreateApi.InputSerializer`) is named after the view,
        # so no two views' `InputSerializer`s share a component; "Output" says nothing to a client.
        view, _, name = type(serializer).__qualname__.rpartition(".")
        name = name.removesuffix("Serializer").replace("Output", "")
        return view.removesuffix("Api") + name if view else name
