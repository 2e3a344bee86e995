from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from apps.core.errors import json_not_found
from apps.core.health import healthz, readyz
from apps.core.metrics_api import MetricsView

api_v1 = [
    path("", include("apps.memories.urls")),
    path("", include("apps.conversations.urls")),
    path("", include("apps.extraction.urls")),
    path("", include("apps.portability.urls")),
    path("schema", SpectacularAPIView.as_view(permission_classes=[], authentication_classes=[]), name="schema"),
    path(
        "docs",
        SpectacularSwaggerView.as_view(url_name="schema", permission_classes=[], authentication_classes=[]),
        name="docs",
    ),
    path(
        "redoc",
        SpectacularRedocView.as_view(url_name="schema", permission_classes=[], authentication_classes=[]),
        name="redoc",
    ),
    # Last: an unknown API path is a JSON 404 in development too (handler404 applies only when DEBUG is off).
    # Not ".": a path may hold a newline (%0A), which "." does not match.
    re_path(r"^[\s\S]*$", json_not_found, name="api-not-found"),
]

urlpatterns = [
    path("healthz", healthz, name="healthz"),  # the process answers (apps/core/health.py)
    path("readyz", readyz, name="readyz"),  # it can work: database, migrations, a worker, the queue's lag
    path("", include("apps.mcp_server.urls")),  # /mcp: the Model Context Protocol endpoint
    path("metrics", MetricsView.as_view(), name="metrics"),  # Prometheus (apps/core/metrics.py)
    path("admin/", admin.site.urls),
    path("review/", include("apps.review.urls")),
    path("api/v1/", include(api_v1)),
]

handler404 = "apps.core.errors.json_not_found"
handler500 = "apps.core.health.server_error"
