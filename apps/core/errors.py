"""One error shape for the whole API: {"error": {"code", "message", "details"}}."""

import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DataError
from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

logger = logging.getLogger(__name__)


class ApplicationError(Exception):
    """A business-rule failure raised by services and selectors; the API turns it into a 4xx."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "invalid_request"

    def __init__(self, message: str, *, code: str | None = None, details=None, status_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.details = details or {}
        if status_code is not None:
            self.status_code = status_code


class NotFoundError(ApplicationError):
    status_code = status.HTTP_404_NOT_FOUND
    default_code = "not_found"


class ConflictError(ApplicationError):
    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"


class PayloadTooLargeError(ApplicationError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"


class UpstreamError(ApplicationError):
    """An outside service memoryhub depends on (an embedding API) failed."""

    status_code = status.HTTP_502_BAD_GATEWAY
    default_code = "upstream_error"


def error_body(code: str, message: str, details=None) -> dict:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _first_message(detail) -> str:
    """A readable one-line summary of a nested DRF error detail, naming the field."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            inner = _first_message(value)
            return inner if key == "non_field_errors" else f"{key}: {inner}"
    if isinstance(detail, list) and detail:
        for index, item in enumerate(detail):
            if item:
                inner = _first_message(item)
                return f"[{index}] {inner}" if isinstance(item, dict) else inner
    return str(detail)


def _validation_response(detail) -> Response:
    if not isinstance(detail, dict):  # ValidationError("...") of the request as a whole: details stay an object
        detail = {"non_field_errors": detail if isinstance(detail, list) else [detail]}
    return Response(
        error_body("validation_error", _first_message(detail) or "Invalid input.", detail),
        status=status.HTTP_400_BAD_REQUEST,
    )


_DRF_CODES = {
    exceptions.ParseError: "malformed_request",
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "authentication_failed",
    exceptions.PermissionDenied: "permission_denied",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "rate_limited",
}


def api_exception_handler(exc, context):
    if isinstance(exc, ApplicationError):
        return Response(error_body(exc.code, exc.message, exc.details), status=exc.status_code)
    if isinstance(exc, RequestDataTooBig):
        return Response(
            error_body("payload_too_large", "Request body exceeds the maximum allowed size."),
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        return _validation_response(detail)
    if isinstance(exc, DataError):
        logger.warning("Database rejected client data: %s", exc)
        return Response(
            error_body("invalid_data", "The database rejected a value in the request."),
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, exceptions.ValidationError):
        return _validation_response(exc.detail)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)

    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    code = next((c for cls, c in _DRF_CODES.items() if isinstance(exc, cls)), "error")
    message = exc.detail if isinstance(exc.detail, str) else _first_message(exc.detail)
    # A DRF exception of ours may say more (apps.tenancy.throttling.RateLimited: the scope and limit).
    response.data = error_body(code, str(message), getattr(exc, "details", None))
    return response


@csrf_exempt  # also the catch-all of /api/v1/: an unknown path is a 404 for every method, not a CSRF 403
def json_not_found(request, exception=None):
    return JsonResponse(error_body("not_found", f"No route for {request.path}."), status=404)


def json_server_error(request):
    return JsonResponse(error_body("server_error", "Internal server error."), status=500)
