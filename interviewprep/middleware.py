import logging
import re
import time
import uuid

from interviewprep.logging import request_id_var

logger = logging.getLogger("interviewprep.request")
_VALID_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class RequestIdMiddleware:
    """Give every request an id (the caller's X-Request-ID if sane), log one line per request."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        # META, not request.headers: that one builds a dict of every header on first use.
        incoming = request.META.get("HTTP_X_REQUEST_ID", "")
        request_id = incoming if _VALID_ID.match(incoming) else uuid.uuid4().hex
        request.request_id = request_id
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            response["X-Request-ID"] = request_id
            user = getattr(request, "user", None)
            logger.info(
                "request",
                extra={
                    "method": request.method,
                    "path": request.path,
                    "status": response.status_code,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                    "user_id": user.pk if user is not None and user.is_authenticated else None,
                },
            )
            return response
        finally:
            request_id_var.reset(token)
