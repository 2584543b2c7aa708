"""The operator's endpoints at the site's root: /healthz and /metrics."""

from django.urls import path

from evaluation import health, metrics_view

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("metrics", metrics_view.metrics, name="metrics"),
]
