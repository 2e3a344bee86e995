import subprocess
import sys
from io import StringIO

from django.core.management import call_command
from rest_framework.test import APIClient

from apps.memories.models import MemoryStore
from apps.tenancy.models import ApiKey, Tenant


def _env(path):
    return dict(line.removeprefix("export ").split("=", 1) for line in path.read_text().splitlines())


def test_seed_demo_creates_everything_once_and_reuses_it(db, tmp_path, monkeypatch):
    monkeypatch.delenv("MEMORYHUB_HOST", raising=False)
    monkeypatch.delenv("MEMORYHUB_PORT", raising=False)
    env_file = tmp_path / "demo.env"
    call_command("seed_demo", env_file=str(env_file), stdout=StringIO())
    first = _env(env_file)
    assert set(first) == {"MEMORYHUB_URL", "MEMORYHUB_API_KEY", "ADMIN_USERNAME", "ADMIN_PASSWORD"}
    assert first["MEMORYHUB_URL"] == "http://127.0.0.1:8000"

    call_command("seed_demo", env_file=str(env_file), stdout=StringIO())
    assert _env(env_file) == first
    # Sourced, it reaches the programs the shell starts (the client reads os.environ).
    shown = subprocess.run(["bash", "-c", f"source {env_file}; {sys.executable} -c "
                            "'import os; print(os.environ[\"MEMORYHUB_API_KEY\"])'"],
                           capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == first["MEMORYHUB_API_KEY"]
    assert Tenant.objects.filter(slug="demo").count() == 1
    assert ApiKey.objects.filter(tenant__slug="demo").count() == 1
    store = MemoryStore.objects.get(tenant__slug="demo", name="demo")
    assert store.embedding_provider == "local"

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {first['MEMORYHUB_API_KEY']}")
    assert [s["name"] for s in client.get("/api/v1/stores").json()["results"]] == ["demo"]
    assert client.login(username=first["ADMIN_USERNAME"], password=first["ADMIN_PASSWORD"])


def test_seed_demo_points_at_where_make_run_serves(db, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORYHUB_HOST", "0.0.0.0")  # every interface: reached on this machine at 127.0.0.1
    monkeypatch.setenv("MEMORYHUB_PORT", "8731")
    env_file = tmp_path / "demo.env"
    call_command("seed_demo", env_file=str(env_file), stdout=StringIO())
    assert _env(env_file)["MEMORYHUB_URL"] == "http://127.0.0.1:8731"


def test_create_api_key_command_prints_a_working_key(tenant_a):
    out, err = StringIO(), StringIO()
    call_command("create_api_key", tenant="acme", name="cli", scopes="read", stores="main", stdout=out, stderr=err)
    raw = out.getvalue().strip()
    assert raw.startswith("mh_") and "cannot be shown again" in err.getvalue()
    key = ApiKey.objects.get(name="cli")
    assert key.scopes == ["read"] and key.store_names == ["main"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert client.get("/api/v1/stores/main").status_code == 200
    assert client.post("/api/v1/stores/main/memories", {"user_id": "u", "content": "x"}, format="json").status_code == 403
