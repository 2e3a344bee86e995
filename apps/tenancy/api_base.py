"""The base of every API view: API-key scopes per method, the inputs each method reads (anything else is
refused), the acting key, `Idempotency-Key` on writes, and the tenant's limits: requests per minute per kind of
request (apps.tenancy.throttling), the size of a request body."""

import hashlib

from django.conf import settings
from rest_framework import exceptions, serializers
from rest_framework.exceptions import APIException
from rest_framework.permissions import SAFE_METHODS
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from apps.core.actors import Actor
from apps.core.api import QuerySerializer, refuse_body, refuse_unknown_fields, refuse_unknown_parameters, validated
from apps.core.fields import find_unstorable_text
from apps.core.identifiers import normalise_identifier
from apps.core.pagination import ApiCursorPagination
from apps.tenancy import services as tenancy_services
from apps.tenancy.limits import refuse_oversized_body, tenant_limits
from apps.tenancy.throttling import ApiKeyRateThrottle, FailedAuthenticationThrottle

IDEMPOTENCY_HEADER = "Idempotency-Key"
# PUT and DELETE too: repeated, they end in the same state, but a retry after a lost answer would see a
# different answer (a compare-and-set PUT: 409; a DELETE: 404) for a write that succeeded.
IDEMPOTENT_METHODS = ("POST", "PATCH", "PUT", "DELETE")
MAX_IDEMPOTENCY_KEY_LENGTH = 255
MAX_ID_LENGTH = 255  # IdempotencyRecord.user_ids and session_ids, like every id column


SUBJECT_KEYS = {"user_id": "user_ids", "session_id": "session_ids"}


def _subjects_in(*values) -> dict[str, set[str]]:
    """The user and session ids at any depth of JSON values, NFC-normalised as stored ids are, in one walk.
    Client metadata is not looked into (its "user_id" is the client's, not one of memoryhub's ids), and
    strings no id column could hold (too long, NUL...) are left out: the request sending them was refused."""
    found: dict[str, set[str]] = {name: set() for name in SUBJECT_KEYS.values()}
    pending = list(values)
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            for key, inner in node.items():
                if key in SUBJECT_KEYS:
                    if isinstance(inner, str) and inner and find_unstorable_text(inner) is None:
                        identifier = normalise_identifier(inner)
                        if len(identifier) <= MAX_ID_LENGTH:
                            found[SUBJECT_KEYS[key]].add(identifier)
                elif key != "metadata":
                    pending.append(inner)
        elif isinstance(node, list | tuple):
            pending.extend(node)
    return found


class _Replay(Exception):
    def __init__(self, response: Response):
        super().__init__("idempotent replay")
        self.response = response


class ApiView(APIView):
    """Base for API views. Each view declares per method its scope and what it reads besides the path:
    the serializer of its JSON body, the serializer of its query parameters, its pagination. A field or
    parameter it does not declare is a 400 naming it, before the handler runs: a misspelt filter must
    never be ignored (a search for "userid" would answer with every user's memories). The view knows
    who is acting and honours `Idempotency-Key` on writes (a retry with the same key and request gets
    the first response). Each request counts against its key's rate for its kind: reads and writes by
    method, unless the view names another kind for a method in `throttle_scopes` (searches, flushes)."""

    required_scopes: dict[str, str] = {}
    throttle_scopes: dict[str, str] = {}
    throttle_classes = [ApiKeyRateThrottle]
    body_serializers: dict[str, type[serializers.Serializer]] = {}
    query_serializers: dict[str, type[QuerySerializer]] = {}
    paginators: dict[str, type[ApiCursorPagination]] = {}
    # False for a write whose response must not outlive it (erasing a user answers with the user's id);
    # such a write is naturally idempotent, and a retry runs it again.
    keeps_idempotent_responses = True
    _idempotency_record = None

    @property
    def actor(self) -> Actor:
        return Actor.for_api_key(self.request.auth)

    def accepts_idempotency_key(self, method: str) -> bool:
        # Not a read sent as POST (search, context): nothing to do twice, nothing worth storing.
        return (self.keeps_idempotent_responses and method in IDEMPOTENT_METHODS
                and self.required_scopes.get(method) != "read")

    def body(self, **kwargs) -> dict:
        """The request body, validated by the method's declared serializer."""
        return validated(self.body_serializers[self.request.method], self.request.data, **kwargs)

    def query(self) -> dict:
        """The query parameters, validated by the method's declared serializer."""
        return validated(self.query_serializers[self._declared_method()], self.request.query_params)

    def paginated_response(self, queryset, render) -> Response:
        """One page of `queryset` by the method's declared pagination; `render(page)` gives its items."""
        paginator = self.paginators[self._declared_method()]()
        page = paginator.paginate_queryset(queryset, self.request, view=self)
        return paginator.get_paginated_response(render(page))

    def throttle_scope(self, request) -> str:
        method = self._declared_method()
        return self.throttle_scopes.get(method) or ("reads" if method in SAFE_METHODS else "writes")

    def initial(self, request, *args, **kwargs):
        try:
            super().initial(request, *args, **kwargs)  # authentication, permissions, then throttles
        except (exceptions.NotAuthenticated, exceptions.AuthenticationFailed):
            # DRF throttles only what passed authentication: failures are counted per address here.
            throttle = FailedAuthenticationThrottle()
            if not throttle.allow_request(request, self):
                raise throttle.refusal() from None
            raise
        self._refuse_oversized_body(request)
        # The claim hashes the raw body, which must come before DRF parses it from the stream; a request
        # refused next is answered, and kept for its retries, like any other 400.
        self._claim_idempotency_key(request)
        self._refuse_undeclared_input(request)

    def check_throttles(self, request):
        # DRF's own raises a bare Throttled; this one names the kind of request and its limit.
        for throttle in self.get_throttles():
            if not throttle.allow_request(request, self):
                raise throttle.refusal()

    def _refuse_oversized_body(self, request) -> None:
        if tenant_limits(request.auth.tenant).max_request_bytes >= settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
            return  # Django refuses a larger body on its own (RequestDataTooBig)
        refuse_oversized_body(request.auth.tenant, len(request._request.body))

    def _declared_method(self) -> str:
        return "GET" if self.request.method == "HEAD" else self.request.method

    def _refuse_undeclared_input(self, request) -> None:
        method = self._declared_method()
        if not hasattr(self, method.lower()):
            return  # no such handler: DRF answers 405
        # `format` is DRF's own (content negotiation): read, never ignored.
        params = [name for name in request.query_params if name != api_settings.URL_FORMAT_OVERRIDE]
        if params:  # most requests send none: no serializer to build for them
            query, paginator = self.query_serializers.get(method), self.paginators.get(method)
            refuse_unknown_parameters(
                params,
                known=[*(query().fields if query else ()), *(paginator.query_parameters() if paginator else ())],
                prefixes=getattr(query, "parameter_prefixes", ()),
            )
        body = self.body_serializers.get(method)
        if body is None:
            refuse_body(request.data)
        else:
            refuse_unknown_fields(body, request.data)

    def _claim_idempotency_key(self, request) -> None:
        key = request.headers.get(IDEMPOTENCY_HEADER)
        if key is None or request.auth is None or not self.accepts_idempotency_key(request.method):
            return
        key = key.strip()
        if not key or len(key) > MAX_IDEMPOTENCY_KEY_LENGTH or not key.isprintable():
            raise serializers.ValidationError(
                {IDEMPOTENCY_HEADER: [f"Must be 1 to {MAX_IDEMPOTENCY_KEY_LENGTH} printable characters."]}
            )
        digest = hashlib.sha256()
        for part in (request.method.encode(), request.get_full_path().encode(), request._request.body):
            digest.update(part + b"\n")
        claim = tenancy_services.idempotency_claim(api_key=request.auth, key=key, request_hash=digest.hexdigest())
        if claim.record is None:
            raise _Replay(Response(claim.replay_body, status=claim.replay_status,
                                   headers={"Idempotent-Replayed": "true"}))
        self._idempotency_record = claim.record

    def handle_exception(self, exc):
        if isinstance(exc, _Replay):
            return exc.response
        try:
            response = super().handle_exception(exc)
            if isinstance(exc, tenancy_services.IdempotencyInProgress):
                response["Retry-After"] = str(exc.retry_after_seconds)  # when the first request's lease ends
            return response
        except Exception:
            self._forget_idempotency_claim()  # a crash: let a retry run the request again
            raise

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        record, self._idempotency_record = self._idempotency_record, None
        if record is not None:
            body = getattr(response, "data", None)
            subjects = self.idempotency_subjects(request, body) if response.status_code < 500 else {}
            tenancy_services.idempotency_complete(record=record, status_code=response.status_code, body=body,
                                                  **subjects)
        return response

    def idempotency_subjects(self, request, body) -> dict[str, set[str]]:
        """The user ids and session ids a kept response concerns, so erasing a user forgets it: those named
        in the request, in the response, and the session in the URL (a working-memory value, a checkpoint
        or an error about someone else's session does not name its user, but its session is in the path)."""
        try:
            sent = request.data
        except APIException:  # a body that could not be parsed: the response is that error
            sent = None
        subjects = _subjects_in(sent, body)
        if isinstance(self.kwargs.get("session_id"), str):
            subjects["session_ids"].add(self.kwargs["session_id"])
        return subjects

    def _forget_idempotency_claim(self) -> None:
        record, self._idempotency_record = self._idempotency_record, None
        if record is not None:
            tenancy_services.idempotency_complete(record=record, status_code=500, body=None)
