"""The OpenAPI schema (drf-spectacular), built from what each view declares so that it says what the API does.

Views declare per method their scope, body serializer, query serializer and pagination (see ApiView); the
schema reads the same declarations the request checks use: the documented body is the accepted body
(unknown fields are refused, so `additionalProperties: false`), the documented parameters are the accepted
ones, paginated lists are documented as the `{results, next, previous}` objects they answer with, and
every operation lists the client errors it can answer with, in the one error shape.
"""

import uritemplate
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers

IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    {"type": "string", "minLength": 1, "maxLength": 255},
    OpenApiParameter.HEADER,
    description="Makes a retry safe: the first request with a key runs, a retry with the same key and request "
                "gets the stored answer (with `Idempotent-Replayed: true`) and writes nothing; the same key with "
                "another request is a 409. Scoped to the API key, kept 24 hours.",
)
IDEMPOTENT_REPLAYED = OpenApiParameter(
    "Idempotent-Replayed",
    {"type": "string", "enum": ["true"]},
    OpenApiParameter.HEADER,
    response=[200, 201, 202, 400, 404, 409, 413, 415],  # what a request answers after its key is claimed
    description="Present on the stored answer to a request repeated with the same Idempotency-Key.",
)
RETRY_AFTER = OpenApiParameter(
    "Retry-After",
    {"type": "integer", "minimum": 1},
    OpenApiParameter.HEADER,
    response=[429],
    description="Seconds until the request would be allowed again.",
)

ERRORS = {
    "400": "Invalid request: a malformed, missing, out-of-range or unknown field or query parameter "
           "(`details` names it), or malformed JSON.",
    "401": "No API key, or an invalid or revoked one.",
    "403": "The API key lacks the scope this operation needs, or may not do this.",
    "404": "The store or object does not exist, or belongs to another tenant or to a store the key may not use.",
    "409": "A conflict with the current state (`code` and `details` say which), or an Idempotency-Key reused "
           "for another request or still in progress.",
    "413": "The request, a batch in it or a value in it is larger than allowed (`message` names the limit).",
    "415": "The request body is not JSON (`Content-Type: application/json`).",
    "429": "Too many requests of this kind with this API key this minute, or without a valid API key from this "
           "address (`details`: `scope`, `limit`, `retry_after`); the `Retry-After` header says when to retry.",
}


class ErrorDetailOutput(serializers.Serializer):
    code = serializers.CharField(help_text="Machine-readable, e.g. validation_error, not_found, store_exists.")
    message = serializers.CharField(help_text="One line for people, naming the field when there is one.")
    details = serializers.DictField(help_text="More about the error, e.g. the messages per field; may be empty.")


class ErrorOutput(serializers.Serializer):
    error = ErrorDetailOutput()


class ApiSchema(AutoSchema):
    """drf-spectacular's AutoSchema reading ApiView's per-method declarations."""

    def _declared(self, name: str):
        return getattr(self.view, name, {}).get("GET" if self.method == "HEAD" else self.method)

    def get_description(self) -> str:
        return ""  # only the description written for the operation (extend_schema), never a docstring

    def get_request_serializer(self):
        if not hasattr(self.view, "body_serializers"):
            return super().get_request_serializer()
        return self._declared("body_serializers")

    def get_override_parameters(self):
        parameters = list(super().get_override_parameters())
        query = self._declared("query_serializers")
        if query is not None:
            parameters.append(query)
        accepts_key = getattr(self.view, "accepts_idempotency_key", None)
        if accepts_key is not None and accepts_key(self.method):
            parameters += [IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED]
        if hasattr(self.view, "throttle_scope"):  # ApiView: rate-limited
            parameters.append(RETRY_AFTER)
        return parameters

    def _get_paginator(self):
        paginator = self._declared("paginators")
        return paginator() if paginator is not None else None

    def _map_serializer(self, serializer, direction, bypass_extensions=False):
        schema = super()._map_serializer(serializer, direction, bypass_extensions)
        if direction == "request":
            schema["additionalProperties"] = False  # ApiView refuses fields a serializer does not declare
        return schema

    def _get_response_bodies(self, direction="response"):
        serializer = self.get_response_serializers()
        if self.method == "DELETE" and serializer is not None and not isinstance(serializer, dict):
            # spectacular documents a bare DELETE response as 204; memoryhub's deletes answer 200 with a body
            responses = {"200": self._get_response_for_code(serializer, "200", direction=direction)}
        else:
            responses = super()._get_response_bodies(direction)
        codes = ["400", "401", "403", "429"]
        has_path_parameters, paginated = bool(uritemplate.variables(self.path)), self._get_paginator() is not None
        if has_path_parameters:
            codes.append("404")
        accepts_key = getattr(self.view, "accepts_idempotency_key", None)
        if accepts_key is not None and accepts_key(self.method):
            codes.append("409")
        if self.method in ("POST", "PUT", "PATCH") and self.get_request_serializer() is not None:
            codes += ["413", "415"]
        for code in codes:
            description = ERRORS[code]
            if code == "400" and paginated:  # ApiCursorPagination: a cursor it did not write is a validation error
                description = f"{description} Also an invalid `cursor`."
            if code not in responses:
                responses[code] = self._get_response_for_code(
                    OpenApiResponse(ErrorOutput, description=description), code, direction=direction
                )
        return responses


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "apps.tenancy.authentication.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API key: `Authorization: Bearer mh_...`. Scopes: read < write < admin.",
        }
