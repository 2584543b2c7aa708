"""What every API view shares: problem details for errors (RFC 9457) and pagination."""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.views import exception_handler

from interviewprep.errors import DomainError

logger = logging.getLogger(__name__)

PROBLEM_CONTENT_TYPE = "application/problem+json"

_TITLES = {
    400: "Bad request",
    401: "Authentication required",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    406: "Not acceptable",
    409: "Conflict",
    413: "Content too large",
    415: "Unsupported media type",
    422: "Unprocessable content",
    429: "Too many requests",
    500: "Internal server error",
    503: "Service unavailable",
}


class Pagination(PageNumberPagination):
    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 200

    def get_page_size(self, request) -> int:
        # A malformed page_size is the client's mistake (400), not a silent fall back to 20.
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
            raise exceptions.ValidationError({self.page_size_query_param: "A positive integer is required."})
        return min(int(raw), self.max_page_size)

    def get_schema_operation_parameters(self, view) -> list[dict]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"]["minimum"] = 1
                parameter["description"] = f"Results per page, at most {self.max_page_size} (more are capped)."
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
    body = {
        "type": f"https://interviewprep.dev/problems/{code}",
        "title": _TITLES.get(status_code, "Error"),
        "status": status_code,
        "detail": detail,
        **extra,
    }
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
        code = "malformed-json"
    else:
        detail = _flatten(exc.detail)
    headers = {k: v for k, v in response.items() if k in {"Retry-After", "WWW-Authenticate", "Allow"}}
    if isinstance(exc, exceptions.Throttled) and exc.wait:
        headers["Retry-After"] = str(int(exc.wait) + 1)
    return problem(response.status_code, detail, code=code, headers=headers, **extra)


def not_found_problem(request, exception=None):
    from django.http import JsonResponse

    if request.path.startswith("/api/"):
        return JsonResponse(
            {"type": "about:blank", "title": "Not found", "status": 404, "detail": "No such resource."},
            status=status.HTTP_404_NOT_FOUND,
            content_type=PROBLEM_CONTENT_TYPE,
        )
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


def server_error_problem(request):
    from django.http import JsonResponse

    if request.path.startswith("/api/"):
        return JsonResponse(
            {
                "type": "about:blank",
                "title": "Internal server error",
                "status": 500,
                "detail": "Something went wrong on our side; it has been logged.",
            },
            status=500,
            content_type=PROBLEM_CONTENT_TYPE,
        )
    from django.views.defaults import server_error

    return server_error(request)
