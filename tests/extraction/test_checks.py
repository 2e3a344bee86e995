"""The extraction settings' system check: settings.py only reads the values, the check refuses bad ones."""

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from apps.extraction.checks import extraction_settings_check

GOOD = {"LLM_PROVIDER": "openai", "LLM_BASE_URL": "", "LLM_API_KEY": "", "LLM_MODEL": "", "LLM_TIMEOUT_SECONDS": 60.0,
        "LLM_MAX_RETRIES": 2, "LLM_MAX_TOKENS": 2048, "LLM_TEMPERATURE": 0.0, "LLM_TOKEN_LIMIT_PARAMETER": "auto",
        "LLM_CONTEXT_BUDGET_TOKENS": 8000, "EXTRACTION_DEFAULT_EXTRACTOR": "auto"}


@pytest.fixture
def extraction_settings(settings):
    for name, value in GOOD.items():
        setattr(settings, name, value)
    return settings


def test_the_default_settings_pass(extraction_settings):
    assert extraction_settings_check() == []
    call_command("check")


@pytest.mark.parametrize(
    ("changes", "error_id", "message"),
    [
        ({"LLM_PROVIDER": "gemini"}, "extraction.E001", "LLM_PROVIDER: LLM provider must be one of openai, anthropic"),
        ({"LLM_TOKEN_LIMIT_PARAMETER": "max_output_tokens"}, "extraction.E001",
         "LLM_TOKEN_LIMIT_PARAMETER: LLM token limit parameter must be one of auto, max_tokens, max_completion_tokens"),
        ({"LLM_CONTEXT_BUDGET_TOKENS": 2000}, "extraction.E001",
         "LLM_CONTEXT_BUDGET_TOKENS: LLM context budget must be at least 3000 tokens, got 2000"),
        ({"LLM_TIMEOUT_SECONDS": 0.0}, "extraction.E001", "LLM_TIMEOUT_SECONDS: LLM timeout must be a positive"),
        ({"LLM_MAX_TOKENS": 0}, "extraction.E001", "LLM_MAX_TOKENS: LLM max tokens must be >= 1"),
        ({"EXTRACTION_DEFAULT_EXTRACTOR": "magic"}, "extraction.E002",
         "EXTRACTION_DEFAULT_EXTRACTOR must be one of auto, rules, llm, got 'magic'"),
        ({"EXTRACTION_DEFAULT_EXTRACTOR": "llm"}, "extraction.E003",
         "EXTRACTION_DEFAULT_EXTRACTOR=llm: the llm extractor needs a model and none is configured: set LLM_API_KEY"),
    ],
)
def test_a_bad_value_is_an_error_naming_the_setting(extraction_settings, changes, error_id, message):
    for name, value in changes.items():
        setattr(extraction_settings, name, value)

    (error,) = extraction_settings_check()

    assert error.id == error_id and error.msg.startswith(message)
    with pytest.raises(SystemCheckError, match=error_id):
        call_command("check")


@pytest.mark.parametrize("configured", [{"LLM_API_KEY": "sk-live"}, {"LLM_BASE_URL": "http://127.0.0.1:9/v1"}])
def test_llm_by_default_passes_once_a_model_is_configured(extraction_settings, configured):
    extraction_settings.EXTRACTION_DEFAULT_EXTRACTOR = "llm"
    for name, value in configured.items():
        setattr(extraction_settings, name, value)

    assert extraction_settings_check() == []
