from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from attempts import views_staff
from interviewprep import health, metrics_view

handler404 = "interviewprep.api.not_found_problem"
handler500 = "interviewprep.api.server_error_problem"

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    # Browsers ask for it on their own; pages name the SVG icon in their head.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("metrics", metrics_view.metrics, name="metrics"),
    path(
        "staff/attempts/<id:attempt_id>/cache-diff/",
        views_staff.attempt_cache_diff_page,
        name="staff-cache-diff",
    ),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script from this URL (?script) rather than
    # inline, so the page runs under the CSP's script-src 'self' with no nonce.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("api/v1/", include("attempts.urls")),
    path("api/v1/", include("evaluation.urls")),
    path("", include("attempts.web_urls")),
]
