"""What the LLM extractor talks to and how patiently: a plain value object, built from settings."""

import math
from dataclasses import dataclass, field

from django.core.exceptions import ImproperlyConfigured

PROVIDERS = ("openai", "anthropic")
DEFAULT_BASE_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
DEFAULT_MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5"}
TOKEN_LIMIT_PARAMETERS = ("auto", "max_tokens", "max_completion_tokens")
MIN_CONTEXT_BUDGET_TOKENS = 3000  # the instructions, examples and output schema alone take about 2,300
# The Django setting each field is read from (llm_config_from_settings); an error names the setting.
SETTING_NAMES = {
    "provider": "LLM_PROVIDER",
    "model": "LLM_MODEL",
    "base_url": "LLM_BASE_URL",
    "api_key": "LLM_API_KEY",
    "timeout_seconds": "LLM_TIMEOUT_SECONDS",
    "max_retries": "LLM_MAX_RETRIES",
    "max_tokens": "LLM_MAX_TOKENS",
    "temperature": "LLM_TEMPERATURE",
    "structured_output": "LLM_STRUCTURED_OUTPUT",
    "token_limit_parameter": "LLM_TOKEN_LIMIT_PARAMETER",
    "context_budget_tokens": "LLM_CONTEXT_BUDGET_TOKENS",
    "few_shot_examples": "LLM_FEW_SHOT_EXAMPLES",
}


class InvalidLLMConfig(ValueError):
    """A value the extractor cannot use; `field` names the LLMConfig field."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class LLMConfig:
    provider: str  # "openai" (any OpenAI-compatible chat completions server) | "anthropic"
    model: str
    base_url: str  # openai: ".../v1" (we POST {base}/chat/completions); anthropic: we POST {base}/v1/messages
    api_key: str = field(default="", repr=False)  # kept out of repr: configs end up in logs and tracebacks
    timeout_seconds: float = 60.0  # per HTTP attempt
    max_retries: int = 2  # retries after the first attempt, for transport errors, 408, 429 and 5xx
    max_tokens: int = 2048
    temperature: float | None = 0.0  # None: not sent (some reasoning models accept only their default)
    structured_output: bool = True  # openai only: json_schema (strict) instead of json_object
    backoff_seconds: float = 0.5  # first retry waits about this long (jittered), doubling each time
    max_retry_after_seconds: float = 30.0  # a server's Retry-After is honoured up to this
    # openai: how the output limit is named; auto picks by model name and learns from a 400 (providers.py)
    token_limit_parameter: str = "auto"
    context_budget_tokens: int = 8000  # estimated prompt tokens per request; longer batches go in windows
    few_shot_examples: bool = True  # the worked examples (llm/examples.json) after the instructions

    def __post_init__(self):
        if self.provider not in PROVIDERS:
            raise InvalidLLMConfig("provider", f"LLM provider must be one of {', '.join(PROVIDERS)}, "
                                               f"got {self.provider!r}")
        if not self.model:
            raise InvalidLLMConfig("model", "LLM model must not be empty")
        if not self.base_url.startswith(("http://", "https://")):
            raise InvalidLLMConfig("base_url", f"LLM base URL must start with http:// or https://, got {self.base_url!r}")
        if not (math.isfinite(self.timeout_seconds) and self.timeout_seconds > 0):
            raise InvalidLLMConfig("timeout_seconds", "LLM timeout must be a positive number of seconds, "
                                                      f"got {self.timeout_seconds}")
        if self.max_retries < 0:
            raise InvalidLLMConfig("max_retries", f"LLM max retries must be >= 0, got {self.max_retries}")
        if self.max_tokens < 1:
            raise InvalidLLMConfig("max_tokens", f"LLM max tokens must be >= 1, got {self.max_tokens}")
        if self.temperature is not None and not (0.0 <= self.temperature <= 2.0):
            raise InvalidLLMConfig("temperature", f"LLM temperature must be between 0 and 2, got {self.temperature}")
        if self.token_limit_parameter not in TOKEN_LIMIT_PARAMETERS:
            raise InvalidLLMConfig(
                "token_limit_parameter",
                f"LLM token limit parameter must be one of {', '.join(TOKEN_LIMIT_PARAMETERS)}, "
                f"got {self.token_limit_parameter!r}",
            )
        if self.context_budget_tokens < MIN_CONTEXT_BUDGET_TOKENS:
            raise InvalidLLMConfig(
                "context_budget_tokens",
                f"LLM context budget must be at least {MIN_CONTEXT_BUDGET_TOKENS} tokens, "
                f"got {self.context_budget_tokens}",
            )
        if self.backoff_seconds < 0 or self.max_retry_after_seconds < 0:
            raise InvalidLLMConfig("backoff_seconds", "LLM backoff and Retry-After cap must not be negative")


def llm_config_from_settings() -> LLMConfig:
    """The LLM_* settings as a config; an empty LLM_BASE_URL / LLM_MODEL means the provider's default.

    A value the extractor cannot use is ImproperlyConfigured naming the setting (settings.py only reads
    them: the extraction app's system check, apps/extraction/checks.py, reports it at start).
    """
    from django.conf import settings

    provider = settings.LLM_PROVIDER
    try:
        return LLMConfig(
            provider=provider,
            model=settings.LLM_MODEL or DEFAULT_MODELS.get(provider, ""),
            base_url=settings.LLM_BASE_URL or DEFAULT_BASE_URLS.get(provider, ""),
            api_key=settings.LLM_API_KEY or "",
            timeout_seconds=settings.LLM_TIMEOUT_SECONDS,
            max_retries=settings.LLM_MAX_RETRIES,
            max_tokens=settings.LLM_MAX_TOKENS,
            temperature=settings.LLM_TEMPERATURE,
            structured_output=settings.LLM_STRUCTURED_OUTPUT,
            token_limit_parameter=settings.LLM_TOKEN_LIMIT_PARAMETER,
            context_budget_tokens=settings.LLM_CONTEXT_BUDGET_TOKENS,
            few_shot_examples=settings.LLM_FEW_SHOT_EXAMPLES,
        )
    except InvalidLLMConfig as exc:
        setting = SETTING_NAMES.get(exc.field)
        raise ImproperlyConfigured(f"{setting}: {exc}" if setting else str(exc)) from exc
