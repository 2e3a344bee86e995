from django.test import Client


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
