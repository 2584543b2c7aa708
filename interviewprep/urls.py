from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from interviewprep.async_views import hashes_passwords
from interviewprep.staff_check import staff_check

# The apps' views are reached only through include() by name, so this module imports no app and
# the project's package depends on none of them.

handler404 = "interviewprep.api.not_found_problem"
handler500 = "interviewprep.api.server_error_problem"

urlpatterns = [
    path("", include("evaluation.site_urls")),
    # Browsers ask for it on their own; pages name the SVG icon in their head.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    # Admin's own log-in hashes a password too: on the hashing thread, as the candidates' do (a
    # function of its own, since the admin site's bound method cannot carry the mark).
    path("admin/login/", hashes_passwords(lambda request: admin.site.login(request))),
    path("admin/", admin.site.urls),
    # For the proxy's auth_request in front of Flower (deploy/nginx/interviewprep.conf).
    path("staff/check/", staff_check, name="staff-check"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script from this URL (?script) rather than
    # inline, so the page runs under the CSP's script-src 'self' with no nonce.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("api/v1/", include("attempts.urls")),
    path("api/v1/", include("evaluation.urls")),
    path("", include("attempts.web_urls")),
]
