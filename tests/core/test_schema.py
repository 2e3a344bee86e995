from django.test import Client

from apps.tenancy.api_base import ApiView


def test_openapi_schema_describes_every_endpoint_and_bearer_auth(db):
    response = Client().get("/api/v1/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    paths = schema["paths"]
    for path in (
        "/api/v1/stores",
        "/api/v1/stores/{store_name}",
        "/api/v1/stores/{store_name}/memories",
        "/api/v1/stores/{store_name}/memories/bulk",
        "/api/v1/stores/{store_name}/memories/{memory_id}",
        "/api/v1/stores/{store_name}/memories/{memory_id}/history",
        "/api/v1/stores/{store_name}/search",
        "/api/v1/stores/{store_name}/users/{user_id}",
    ):
        assert path in paths, path
    assert schema["components"]["securitySchemes"]["ApiKey"]["scheme"] == "bearer"


def test_browsable_docs_are_served_without_a_cdn(db):
    page = Client().get("/api/v1/docs")
    assert page.status_code == 200
    html = page.content.decode()
    assert "swagger-ui" in html and "cdn.jsdelivr" not in html


def test_healthz(db):
    assert Client().get("/healthz").json() == {"status": "ok"}


# --- The schema says what the API does --------------------------------------------------------------

METHODS = ("get", "post", "put", "patch", "delete")


def _schema():
    return Client().get("/api/v1/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()


def _operations(schema):
    for path, item in schema["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def _resolve(schema, node):
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _json_schema(schema, response):
    return _resolve(schema, response["content"]["application/json"]["schema"])


def test_every_operation_has_a_description_of_its_own(db):
    schema = _schema()
    operations = list(_operations(schema))
    assert len(operations) == 57
    views, pending = set(), [ApiView]
    while pending:
        views.add(view := pending.pop())
        pending.extend(view.__subclasses__())
    docstrings = {" ".join(view.__doc__.split()) for view in views if view.__doc__}
    descriptions = [operation.get("description", "") for _, _, operation in operations]
    for (path, method, _), description in zip(operations, descriptions, strict=True):
        assert len(description) >= 60, (method, path, description)
        assert " ".join(description.split()) not in docstrings, (method, path)
        assert "Idempotency-Key` on writes" not in description, (method, path)
    assert len(set(descriptions)) == len(descriptions)


def test_lists_are_documented_as_the_objects_they_return(db):
    schema = _schema()
    paginated = []
    for path, method, operation in _operations(schema):
        for code, response in operation["responses"].items():
            if "content" in response:
                assert _json_schema(schema, response).get("type") != "array", (method, path, code)
        if method == "get" and "cursor" in {parameter["name"] for parameter in operation.get("parameters", [])}:
            body = _json_schema(schema, operation["responses"]["200"])
            assert set(body["properties"]) == {"results", "next", "previous"}, (path, body)
            assert body["properties"]["results"]["type"] == "array"
            assert body["properties"]["next"]["nullable"] is True
            assert {"page_size"} <= {parameter["name"] for parameter in operation["parameters"]}
            paginated.append(path)
    assert len(paginated) == 9, paginated
    for path in ("/api/v1/stores", "/api/v1/stores/{store_name}/memories/{memory_id}/history"):
        body = _json_schema(schema, schema["paths"][path]["get"]["responses"]["200"])
        assert body["properties"]["results"]["type"] == "array", path


def test_status_codes_are_the_ones_returned(db):
    schema = _schema()
    erase = schema["paths"]["/api/v1/stores/{store_name}/users/{user_id}"]["delete"]["responses"]
    assert "204" not in erase
    assert set(_json_schema(schema, erase["200"])["properties"]) >= {"user_id", "memories", "sessions"}
    spawn = schema["paths"]["/api/v1/stores/{store_name}/sessions/{session_id}/spawn"]["post"]["responses"]
    assert {"200", "201"} <= set(spawn)
    ingest = schema["paths"]["/api/v1/stores/{store_name}/sessions/{session_id}/messages"]["post"]["responses"]
    assert "202" in ingest and "200" not in ingest and "201" not in ingest
    for path, method, operation in _operations(schema):
        for code, response in operation["responses"].items():
            if code.startswith("2"):
                assert "content" in response, (method, path, code)  # every success answers with JSON


def test_client_errors_are_documented_with_the_error_shape(db):
    schema = _schema()
    for path, method, operation in _operations(schema):
        responses = operation["responses"]
        expected = {"400", "401", "403"}
        if "{" in path:
            expected.add("404")
        # Idempotency-Key conflicts, and the state conflicts of writes; not for reads sent as POST, nor for the
        # user erase, which keeps no response (it would name the user) and so takes no Idempotency-Key.
        if method != "get" and not path.endswith(("/search", "/context", "/users/{user_id}")):
            expected.add("409")
        if "requestBody" in operation:
            expected.add("413")
        assert expected <= set(responses), (method, path, sorted(responses))
        for code in expected:
            error = _json_schema(schema, responses[code])
            assert error["required"] == ["error"], (method, path, code)
            inner = _resolve(schema, error["properties"]["error"])
            assert set(inner["required"]) == {"code", "message", "details"}


def test_an_invalid_cursor_is_documented_as_the_400_it_is_not_a_404(db):
    schema = _schema()
    lists = 0
    for path, method, operation in _operations(schema):
        if "{" not in path:
            assert "404" not in operation["responses"], (method, path)  # nothing to find, nothing to miss
        if "cursor" in {parameter["name"] for parameter in operation.get("parameters", [])}:
            lists += 1
            assert "`cursor`" in operation["responses"]["400"]["description"], (method, path)
            if "404" in operation["responses"]:
                assert "cursor" not in operation["responses"]["404"]["description"], (method, path)
    assert lists == 9
    jobs = schema["paths"]["/api/v1/jobs"]["get"]["responses"]
    assert "404" not in jobs and "invalid `cursor`" in jobs["400"]["description"]


def test_request_bodies_are_as_strict_as_the_server(db):
    schema = _schema()
    for path, method, operation in _operations(schema):
        if "requestBody" not in operation:
            continue
        body = _resolve(schema, operation["requestBody"]["content"]["application/json"]["schema"])
        assert body.get("additionalProperties") is False, (method, path)
    bulk = _resolve(schema, schema["paths"]["/api/v1/stores/{store_name}/memories/bulk"]["post"]["requestBody"]
                    ["content"]["application/json"]["schema"])
    assert _resolve(schema, bulk["properties"]["memories"]["items"])["additionalProperties"] is False
    for path in ("/api/v1/jobs/{job_id}/retry", "/api/v1/stores/{store_name}/sessions/{session_id}/flush"):
        assert "requestBody" not in schema["paths"][path]["post"], path
    writes = [operation for path, method, operation in _operations(schema)
              if method != "get" and not path.endswith(("/search", "/context", "/users/{user_id}"))]
    for operation in writes:
        assert "Idempotency-Key" in {p["name"] for p in operation.get("parameters", []) if p["in"] == "header"}
