"""What every API view shares: problem details for errors (RFC 9457), pagination, a JSON object body."""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from django.views.defaults import page_not_found, server_error
from rest_framework import exceptions, serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.views import exception_handler

from interviewprep.errors import DomainError, InvalidInput

logger = logging.getLogger(__name__)

PROBLEM_CONTENT_TYPE = "application/problem+json"

# One problem type per kind of error, whichever layer refused (a service, DRF, the URL
# resolver, the body limit): a client tells errors apart by `type` and must not learn a second
# spelling of "not found". Statuses not listed (409, 422) carry their service's own code.
_PROBLEMS = {
    400: ("invalid", "Bad request"),
    401: ("not-authenticated", "Authentication required"),
    403: ("permission-denied", "Forbidden"),
    404: ("not-found", "Not found"),
    405: ("method-not-allowed", "Method not allowed"),
    406: ("not-acceptable", "Not acceptable"),
    413: ("content-too-large", "Content too large"),
    415: ("unsupported-media-type", "Unsupported media type"),
    429: ("throttled", "Too many requests"),
    500: ("server-error", "Internal server error"),
    503: ("overloaded", "Service unavailable"),
}
_TITLES = {409: "Conflict", 422: "Unprocessable content"}


def problem_body(status_code: int, detail: str, *, code: str = "error", **extra) -> dict:
    code, title = _PROBLEMS.get(status_code, (code, _TITLES.get(status_code, "Error")))
    return {
        "type": f"https://interviewprep.dev/problems/{code}",
        "title": title,
        "status": status_code,
        "detail": detail,
        **extra,
    }


def problem_response(status_code: int, detail: str, **extra) -> JsonResponse:
    """Problem details outside DRF's views (URL resolver, middleware)."""
    return JsonResponse(
        problem_body(status_code, detail, **extra), status=status_code, content_type=PROBLEM_CONTENT_TYPE
    )


def json_object(request) -> dict:
    # Bodies over the limit never get here (interviewprep.middleware.BodyLimitMiddleware).
    data = request.data
    if not isinstance(data, dict):
        raise InvalidInput("The body must be a JSON object.")
    return data


class Pagination(PageNumberPagination):
    """`page` is 1 or more (or `last`), `page_size` 1 to 200; anything else is a 400 naming the
    parameter, not a silent default. A well-formed page past the end stays a 404."""

    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 200

    def get_page_size(self, request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= self.max_page_size):
            raise exceptions.ValidationError(
                {"page_size": [f"page_size must be a whole number from 1 to {self.max_page_size}."]}
            )
        return int(raw)

    def get_page_number(self, request, paginator) -> int | str:
        raw = request.query_params.get(self.page_query_param)
        if raw is None:
            return 1
        if raw in self.last_page_strings:
            return paginator.num_pages
        if not (raw.isascii() and raw.isdigit() and int(raw) >= 1):
            raise exceptions.ValidationError({"page": ["page must be a whole number from 1 on, or `last`."]})
        return raw

    def get_schema_operation_parameters(self, view) -> list[dict]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_page_size)
                parameter["description"] = f"Results per page, from 1 to {self.max_page_size}."
            elif parameter["name"] == self.page_query_param:
                parameter["schema"].update(minimum=1)
                parameter["description"] = "A page number from 1."
        return parameters


class ProblemError(exceptions.APIException):
    """An error answered as problem details; services raise subclasses of DomainError instead."""

    def __init__(self, status_code: int, detail: str, *, code: str = "error", headers=None, **extra):
        self.status_code = status_code
        self.problem_code = code
        self.extra = extra
        self.headers = headers or {}
        super().__init__(detail=detail, code=code)


def problem(status_code: int, detail: str, *, code: str = "error", headers=None, **extra) -> Response:
    body = problem_body(status_code, detail, code=code, **extra)
    return Response(body, status=status_code, headers=headers, content_type=PROBLEM_CONTENT_TYPE)


def _flatten(detail) -> str:
    if isinstance(detail, dict):
        return "; ".join(f"{k}: {_flatten(v)}" for k, v in detail.items())
    if isinstance(detail, list):
        return " ".join(_flatten(v) for v in detail)
    return str(detail)


def problem_exception_handler(exc, context):
    if isinstance(exc, DomainError):
        return problem(exc.status_code, exc.detail, code=exc.code, headers=exc.headers, **exc.extra)
    if isinstance(exc, ProblemError):
        return problem(exc.status_code, str(exc.detail), code=exc.problem_code, headers=exc.headers, **exc.extra)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = exception_handler(exc, context)
    if response is None:
        return None
    code = getattr(exc, "default_code", "error")
    extra = {}
    if isinstance(exc, exceptions.ValidationError):
        extra["errors"] = exc.detail
        detail = _flatten(exc.detail)
        code = "invalid"
    elif isinstance(exc, exceptions.ParseError):
        detail = f"The body is not valid JSON: {exc.detail}"
        code = "invalid"
        extra["code_detail"] = "malformed-json"
    else:
        detail = _flatten(exc.detail)
    headers = {k: v for k, v in response.items() if k in {"Retry-After", "WWW-Authenticate", "Allow"}}
    if isinstance(exc, exceptions.Throttled) and exc.wait:
        headers["Retry-After"] = str(int(exc.wait) + 1)
    return problem(response.status_code, detail, code=code, headers=headers, **extra)


def not_found_problem(request, exception=None):
    if request.path.startswith("/api/"):
        return problem_response(404, "No such resource.")
    return page_not_found(request, exception)


def server_error_problem(request):
    if request.path.startswith("/api/"):
        return problem_response(500, "Something went wrong on our side; it has been logged.")
    return server_error(request)


class StrictBooleanField(serializers.BooleanField):
    """A JSON true or false and nothing else: DRF's own also takes "yes", "on" and 1."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer and nothing else: DRF's own also takes "12" and 12.0."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)
