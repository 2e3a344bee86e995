import logging
import time

from django.conf import settings
from django.core.signals import request_finished

from apps.core import metrics
from memoryhub.logging import bind_request, request_id_from, unbind_request

access_logger = logging.getLogger("memoryhub.access")

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def _route(request) -> str:
    """The URL pattern that matched, e.g. "/api/v1/stores/<identifier:store_name>/search": a bounded label."""
    match = getattr(request, "resolver_match", None)
    return "/" + match.route if match is not None else "<unmatched>"


class RequestObservabilityMiddleware:
    """First in MIDDLEWARE, so it times everything else: gives each request an id (the caller's X-Request-ID
    when sane, else a new one; echoed in the response) that every log line written during the request carries,
    counts and times the request by route, and writes one access-log line (memoryhub.access) with the route,
    status, duration and the API key's prefix."""

    def __init__(self, get_response):
        self.get_response = get_response
        request_finished.connect(unbind_request, dispatch_uid="memoryhub.logging.unbind_request")

    def __call__(self, request):
        started = time.perf_counter()
        request_id = request_id_from(request.META.get("HTTP_X_REQUEST_ID"))
        bind_request(request, request_id)
        response = self.get_response(request)
        seconds = time.perf_counter() - started
        response["X-Request-ID"] = request_id
        route = _route(request)
        method = request.method if request.method in _METHODS else "other"
        if settings.METRICS_ENABLED:
            try:
                metrics.HTTP_REQUESTS.labels(route=route, method=method,
                                             status=f"{response.status_code // 100}xx").inc()
                metrics.HTTP_REQUEST_DURATION.labels(route=route, method=method).observe(seconds)
            except Exception as exc:  # noqa: BLE001 - the answer is ready; a metric must not turn it into a 500
                metrics.recording_failed(exc)
        if access_logger.isEnabledFor(logging.INFO):
            duration_ms = round(seconds * 1000, 2)
            access_logger.info(
                "%s %s %s %.1f ms", request.method, request.path, response.status_code, duration_ms,
                extra={"method": request.method, "path": request.path, "route": route,
                       "status": response.status_code, "duration_ms": duration_ms},
            )
        return response

    def process_exception(self, request, exception):
        if settings.METRICS_ENABLED:
            try:
                metrics.HTTP_EXCEPTIONS.labels(route=_route(request), exception=type(exception).__name__).inc()
            except Exception as exc:  # noqa: BLE001
                metrics.recording_failed(exc)
        return None  # Django answers with its 500 (apps.core.errors.json_server_error) and logs the traceback
