"""Configuration: arguments, environment variables, URLs and headers."""

import pytest
from scripted_http import API_KEY, Reply

from memoryhub_client import ConfigurationError, MemoryHub, MemoryHubError, __version__


@pytest.fixture
def clean_env(monkeypatch):
    monkeypatch.delenv("MEMORYHUB_URL", raising=False)
    monkeypatch.delenv("MEMORYHUB_API_KEY", raising=False)
    return monkeypatch


def test_url_and_key_come_from_the_environment(server, clean_env):
    clean_env.setenv("MEMORYHUB_URL", server.url)
    clean_env.setenv("MEMORYHUB_API_KEY", "mh_from_env")
    server.script(Reply(body={"results": []}))

    with MemoryHub() as hub:
        assert hub.stores.list() == []

    [request] = server.requests
    assert (request.method, request.raw_path) == ("GET", "/api/v1/stores")
    assert request.headers["authorization"] == "Bearer mh_from_env"


def test_arguments_win_over_the_environment(server, clean_env):
    clean_env.setenv("MEMORYHUB_URL", "http://127.0.0.1:9")
    clean_env.setenv("MEMORYHUB_API_KEY", "mh_from_env")
    server.script(Reply(body={"results": []}))

    with MemoryHub(server.url, "mh_argument") as hub:
        hub.stores.list()

    assert server.requests[0].headers["authorization"] == "Bearer mh_argument"


@pytest.mark.parametrize(("url", "key", "missing"), [
    (None, "mh_key", "MEMORYHUB_URL"),
    ("", "mh_key", "MEMORYHUB_URL"),
    ("http://127.0.0.1:8000", None, "MEMORYHUB_API_KEY"),
    ("http://127.0.0.1:8000", "  ", "MEMORYHUB_API_KEY"),
])
def test_a_missing_url_or_key_names_the_environment_variable(clean_env, url, key, missing):
    with pytest.raises(ConfigurationError, match=missing) as caught:
        MemoryHub(url, key)
    assert isinstance(caught.value, MemoryHubError)


@pytest.mark.parametrize("options", [
    {"base_url": "127.0.0.1:8000"},
    {"base_url": "ftp://example.com"},
    {"timeout": 0},
    {"max_retries": -1},
    {"backoff_seconds": -0.1},
])
def test_invalid_settings_are_refused(options):
    settings = {"base_url": "http://127.0.0.1:8000", "api_key": API_KEY, **options}
    with pytest.raises(ConfigurationError):
        MemoryHub(**settings)


@pytest.mark.parametrize(("suffix", "expected_prefix"), [
    ("", "/api/v1/"),
    ("/", "/api/v1/"),
    ("/api/v1", "/api/v1/"),
    ("/api/v1/", "/api/v1/"),
    ("/memoryhub", "/memoryhub/api/v1/"),  # behind a proxy, under a path
])
def test_base_url_may_be_the_root_or_the_api_url(server, make_hub, suffix, expected_prefix):
    hub = make_hub(base_url=server.url + suffix)
    server.script(Reply(body={"id": "s", "name": "main"}))

    hub.stores.get("main")

    assert server.requests[0].raw_path == f"{expected_prefix}stores/main"
    assert hub.base_url == f"{server.url}{expected_prefix}"


def test_every_request_identifies_the_client_and_asks_for_json(server, make_hub):
    hub = make_hub(headers={"X-Trace": "abc", "authorization": "Bearer not-this-one"})
    server.script(Reply(body={"results": []}))

    hub.stores.list()

    headers = server.requests[0].headers
    assert headers["user-agent"] == f"memoryhub-client/{__version__}"
    assert headers["accept"] == "application/json"
    assert headers["x-trace"] == "abc"
    assert headers["authorization"] == f"Bearer {API_KEY}"  # extra headers cannot replace the key
    assert len(server.requests[0].raw_headers.get_all("authorization")) == 1


def test_close_and_the_context_manager_close_the_http_client(server):
    hub = MemoryHub(server.url, API_KEY)
    with hub as entered:
        assert entered is hub
        assert not hub._transport._client.is_closed
    assert hub._transport._client.is_closed

    other = MemoryHub(server.url, API_KEY)
    other.close()
    assert other._transport._client.is_closed


def test_the_package_imports_no_agent_framework():
    import subprocess
    import sys

    optional = ["memoryhub_client.strands", "strands", "memoryhub_client.langgraph", "langgraph",
                "memoryhub_client.openai_agents", "agents"]
    code = f"import sys, memoryhub_client; print(*[name in sys.modules for name in {optional!r}])"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.split() == ["False"] * len(optional)
