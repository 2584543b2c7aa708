"""GET /staff/check/: whether the request's session is a staff user's, for a proxy's
`auth_request` in front of a tool with no login of its own (Flower: deploy/nginx/).

Django's login and staff flag decide, so there is no second list of users or password. 204 for
an active staff user, 401 without a login (the proxy sends the browser to log in), 403 for
anyone else. Nothing is rendered: the proxy reads only the status."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET


@never_cache
@require_GET
def staff_check(request: HttpRequest) -> HttpResponse:
    user = request.user
    if not user.is_authenticated:
        return HttpResponse(status=401)
    if not (user.is_active and user.is_staff):
        return HttpResponse(status=403)
    return HttpResponse(status=204)
