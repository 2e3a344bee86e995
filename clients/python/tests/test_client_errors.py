"""Error answers become exceptions that carry the server's error body."""

import pytest
from scripted_http import Reply

from memoryhub_client import (
    APIError,
    AuthenticationFailed,
    Conflict,
    MemoryHubError,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    ServerError,
    ValidationFailed,
)


@pytest.mark.parametrize(("status", "expected"), [
    (400, ValidationFailed),
    (401, AuthenticationFailed),
    (403, PermissionDenied),
    (404, NotFound),
    (405, APIError),
    (409, Conflict),
    (413, PayloadTooLarge),
    (415, APIError),
    (429, RateLimited),
    (500, ServerError),
    (501, ServerError),
    (502, ServerError),
    (503, ServerError),
])
def test_each_status_maps_to_its_exception_class(server, make_hub, status, expected):
    hub = make_hub(max_retries=0)
    server.script(Reply.error(status, "the_code", "The message."))

    with pytest.raises(APIError) as caught:
        hub.stores.get("main")

    assert type(caught.value) is expected
    assert isinstance(caught.value, MemoryHubError)
    assert caught.value.status_code == status


def test_payload_too_large_is_a_validation_failure():
    assert issubclass(PayloadTooLarge, ValidationFailed)


def test_the_exception_carries_the_error_body_and_headers(server, hub):
    details = {"limit": ["Ensure this value is less than or equal to 100."]}
    server.script(Reply.error(400, "validation_error", "limit: Ensure this value is less than or equal to 100.",
                              details, headers={"X-Request-Id": "req-42"}))

    with pytest.raises(ValidationFailed) as caught:
        hub.search("main", "tea", limit=1000)

    error = caught.value
    assert error.code == "validation_error"
    assert error.message == "limit: Ensure this value is less than or equal to 100."
    assert error.details == details
    assert error.body == {"error": {"code": "validation_error", "message": error.message, "details": details}}
    assert error.headers["x-request-id"] == "req-42"
    assert error.method == "POST" and error.url.endswith("/api/v1/stores/main/search")
    assert str(error) == "HTTP 400 validation_error: limit: Ensure this value is less than or equal to 100."


def test_a_conflict_keeps_its_details(server, hub):
    server.script(Reply.error(409, "invalid_transition", "Session is paused.", {"status": "paused"}))

    with pytest.raises(Conflict) as caught:
        hub.lifecycle.pause("main", "chat-1")

    assert caught.value.details == {"status": "paused"}
    assert "409" in str(caught.value) and "invalid_transition" in str(caught.value)


def test_a_body_that_is_not_json_is_tolerated(server, make_hub):
    hub = make_hub(max_retries=0)
    server.script(Reply(502, text="upstream connect error or disconnect/reset before headers",
                        content_type="text/plain"))

    with pytest.raises(ServerError) as caught:
        hub.stores.list()

    error = caught.value
    assert (error.status_code, error.code, error.details) == (502, "http_502", {})
    assert error.body == error.message == "upstream connect error or disconnect/reset before headers"
    assert str(error) == "HTTP 502 http_502: upstream connect error or disconnect/reset before headers"


def test_an_html_error_page_is_summed_up_by_its_title(server, make_hub):
    hub = make_hub(max_retries=0)
    html = "<html><head><title>Page not found at\n /api/v1/x</title></head><body>" + "<p>trace</p>" * 500
    server.script(Reply(404, text=html, content_type="text/html; charset=utf-8"), Reply(503, text="<html></html>",
                                                                                       content_type="text/html"))

    with pytest.raises(NotFound) as not_found:
        hub.stores.list()
    with pytest.raises(ServerError) as untitled:
        hub.stores.list()

    assert not_found.value.message == "Page not found at /api/v1/x" and not_found.value.body == html
    assert untitled.value.message == "Service Unavailable"


def test_a_json_body_of_another_shape_is_tolerated(server, hub):
    server.script(Reply(404, {"detail": "Not found."}))

    with pytest.raises(NotFound) as caught:
        hub.stores.get("gone")

    assert caught.value.code == "http_404"
    assert caught.value.message == "Not Found"  # the reason phrase, for want of a message
    assert caught.value.body == {"detail": "Not found."}


def test_an_empty_error_body_is_tolerated(server, hub):
    server.script(Reply(403, text=""))

    with pytest.raises(PermissionDenied) as caught:
        hub.stores.delete("main")

    assert (caught.value.code, caught.value.message, caught.value.body) == ("http_403", "Forbidden", None)


def test_a_success_that_is_not_json_is_an_error(server, hub):
    server.script(Reply(200, text="<html>a login page</html>", content_type="text/html"))

    with pytest.raises(APIError) as caught:
        hub.stores.list()

    assert caught.value.code == "invalid_response"
    assert "text/html" in caught.value.message


def test_every_error_class_is_exported_from_the_errors_module_and_the_package():
    import memoryhub_client
    from memoryhub_client import errors

    for name in ("MemoryHubError", "ConfigurationError", "ConnectionFailed", "APIError", "ValidationFailed",
                 "PayloadTooLarge", "AuthenticationFailed", "PermissionDenied", "NotFound", "Conflict",
                 "RateLimited", "ServerError"):
        assert getattr(memoryhub_client, name) is getattr(errors, name)
        assert issubclass(getattr(errors, name), errors.MemoryHubError)
