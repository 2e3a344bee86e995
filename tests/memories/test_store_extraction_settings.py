"""A store's extraction_config: the auto extractor and the fallback to rules, against the server defaults."""

import pytest

from apps.memories.store_settings import extraction_settings_for, resolve_extractor

STORE_URL = "/api/v1/stores/main"


def _patch(client, **config):
    return client.patch(STORE_URL, {"extraction_config": config}, format="json")


def test_auto_is_the_default_and_means_rules_without_a_model(tenant_a):
    store = tenant_a.client("read").get(STORE_URL).json()

    assert store["extraction_settings"]["extractor"] == "auto"
    assert store["extraction_settings"]["fallback_to_rules"] is False
    assert store["extractor_status"] == {"ready": True, "problem": None, "extractor": "rules"}


@pytest.mark.parametrize("configured", [{"LLM_API_KEY": "sk-live"}, {"LLM_BASE_URL": "http://127.0.0.1:9/v1"}])
def test_auto_means_llm_once_a_model_is_configured(tenant_a, settings, configured):
    for name, value in configured.items():
        setattr(settings, name, value)

    store = tenant_a.client("read").get(STORE_URL).json()

    assert store["extractor_status"] == {"ready": True, "problem": None, "extractor": "llm"}
    assert resolve_extractor("auto") == "llm" and resolve_extractor("rules") == "rules"


def test_a_store_can_choose_auto_and_the_fallback(tenant_a):
    client = tenant_a.client("admin")
    assert _patch(client, extractor="rules").status_code == 200

    chosen = _patch(client, extractor="auto", fallback_to_rules=True)

    assert chosen.status_code == 200, chosen.content
    assert chosen.json()["extraction_config"] == {"extractor": "auto", "fallback_to_rules": True}
    assert chosen.json()["extraction_settings"]["fallback_to_rules"] is True


@pytest.mark.parametrize("bad", [{"fallback_to_rules": "yes"}, {"fallback_to_rules": 1}, {"extractor": "AUTO"}])
def test_bad_values_are_refused(tenant_a, bad):
    response = _patch(tenant_a.client("admin"), **bad)

    assert response.status_code == 400
    assert "extraction_config" in response.json()["error"]["message"]


def test_the_server_defaults_apply_to_stores_that_chose_nothing(tenant_a, settings, configure_store):
    settings.EXTRACTION_DEFAULT_EXTRACTOR = "rules"
    settings.EXTRACTION_FALLBACK_TO_RULES = True
    configure_store(tenant_a.store, extraction_config={"every_n_turns": 2})

    effective = extraction_settings_for(tenant_a.store)

    assert (effective.extractor, effective.fallback_to_rules, effective.every_n_turns) == ("rules", True, 2)
