"""GET /metrics: the Prometheus text of apps/core/metrics.py, for a scraper holding the metrics token or, on a
server without one, for an admin-scope API key."""

import hmac

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from prometheus_client import CONTENT_TYPE_LATEST
from rest_framework import authentication, exceptions
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.permissions import BasePermission
from rest_framework.renderers import JSONRenderer
from rest_framework.views import APIView

from apps.core import metrics
from apps.core.permissions import HasApiKey

METRICS_TOKEN = object()  # request.auth of a scraper that sent the metrics token
TOKEN_REQUIRED = "Send 'Authorization: Bearer <metrics token>' (MEMORYHUB_METRICS_TOKEN)."


class MetricsTokenAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer <MEMORYHUB_METRICS_TOKEN>`, compared in constant time."""

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, credential = header.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            credential.strip().encode("utf-8"), settings.METRICS_TOKEN.encode("utf-8")
        ):
            raise exceptions.AuthenticationFailed("Invalid metrics token.")
        return None, METRICS_TOKEN

    def authenticate_header(self, request):
        return 'Bearer realm="memoryhub"'


class HoldsMetricsToken(BasePermission):
    def has_permission(self, request, view):
        if request.auth is not METRICS_TOKEN:
            raise exceptions.NotAuthenticated(TOKEN_REQUIRED)
        return True


class FirstRenderer(BaseContentNegotiation):
    """Errors in JSON whatever the scraper accepts (Prometheus asks for text formats only)."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None


class MetricsView(APIView):
    """With MEMORYHUB_METRICS_TOKEN set, only that token opens it: tenants' admin keys do not, as the series
    add up the whole machine. Without one, an admin-scope API key does."""

    required_scopes = {"GET": "admin"}
    renderer_classes = [JSONRenderer]
    content_negotiation_class = FirstRenderer

    def get_authenticators(self):
        if settings.METRICS_TOKEN:
            return [MetricsTokenAuthentication()]
        return super().get_authenticators()  # the API keys

    def get_permissions(self):
        return [HoldsMetricsToken()] if settings.METRICS_TOKEN else [HasApiKey()]

    @extend_schema(exclude=True)
    def get(self, request):
        if not metrics.enabled():
            raise exceptions.NotFound("Metrics are disabled on this server (METRICS_ENABLED=false).")
        return HttpResponse(metrics.exposition(), content_type=CONTENT_TYPE_LATEST)
