"""The two wire protocols: each sends the prompts and returns the model's decoded JSON answer."""

import json
import re
from collections.abc import Callable

from apps.extraction.extractors.base import ExtractionError
from apps.extraction.extractors.llm.config import LLMConfig
from apps.extraction.extractors.llm.schema import MEMORIES_SCHEMA, TOOL_NAME
from apps.extraction.extractors.llm.transport import LLMHTTPClient

ANTHROPIC_VERSION = "2023-06-01"
# Some local models wrap JSON-mode answers in a Markdown fence; the JSON inside is the answer.
_CODE_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(?P<body>.*?)\n?\s*```\s*$", re.DOTALL)


class Provider:
    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None]):
        self.config = config
        self.label = f"LLM ({config.provider}, {config.model})"
        self._http = LLMHTTPClient(config=config, headers=self.headers(), label=self.label, sleep=sleep)

    def headers(self) -> dict[str, str]:
        raise NotImplementedError

    def complete(self, *, system: str, user: str) -> object:
        """The model's answer to the prompts, decoded from JSON (not yet validated)."""
        raise NotImplementedError

    def close(self) -> None:
        self._http.close()

    def _error(self, problem: str) -> ExtractionError:
        return ExtractionError(f"{self.label} {problem}")


class OpenAIChatProvider(Provider):
    """POST {base}/chat/completions: OpenAI, Ollama, vLLM, LM Studio, llama.cpp server..."""

    def headers(self) -> dict[str, str]:
        # Local servers need no key; sending an empty bearer token would confuse some proxies.
        return {"Authorization": f"Bearer {self.config.api_key}"} if self.config.api_key else {}

    def request_body(self, *, system: str, user: str) -> dict:
        if self.config.structured_output:
            response_format = {
                "type": "json_schema",
                "json_schema": {"name": TOOL_NAME, "schema": MEMORIES_SCHEMA, "strict": True},
            }
        else:
            response_format = {"type": "json_object"}
        body = {
            "model": self.config.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "response_format": response_format,
            # max_tokens rather than max_completion_tokens: every compatible server understands it.
            "max_tokens": self.config.max_tokens,
        }
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        return body

    def complete(self, *, system: str, user: str) -> object:
        body = self._http.post_json("chat/completions", self.request_body(system=system, user=user))
        try:
            choice = body["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise self._error("sent a response without choices[0].message") from exc
        if not isinstance(message, dict):
            raise self._error("sent a response without choices[0].message")
        if message.get("refusal"):
            raise self._error("refused to answer (message.refusal is set)")
        if choice.get("finish_reason") == "length":
            raise self._error(f"answer was cut off at max_tokens={self.config.max_tokens}; raise LLM_MAX_TOKENS")
        content = message.get("content")
        if not isinstance(content, str) or not content.strip():
            raise self._error("sent an empty message content")
        fenced = _CODE_FENCE.match(content)
        try:
            return json.loads(fenced.group("body") if fenced else content)
        except ValueError as exc:
            # The model's text is not repeated here: it may carry the user's personal details.
            raise self._error(f"answered content that is not JSON ({exc})") from exc


class AnthropicMessagesProvider(Provider):
    """POST {base}/v1/messages, with the answer forced into a record_memories tool call."""

    def headers(self) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if self.config.api_key:
            headers["x-api-key"] = self.config.api_key
        return headers

    def request_body(self, *, system: str, user: str) -> dict:
        body = {
            "model": self.config.model,
            "max_tokens": self.config.max_tokens,
            "system": system,
            "messages": [{"role": "user", "content": user}],
            "tools": [
                {
                    "name": TOOL_NAME,
                    "description": "Record the memories extracted from the conversation.",
                    "input_schema": MEMORIES_SCHEMA,
                }
            ],
            "tool_choice": {"type": "tool", "name": TOOL_NAME},
        }
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        return body

    def complete(self, *, system: str, user: str) -> object:
        body = self._http.post_json("v1/messages", self.request_body(system=system, user=user))
        if not isinstance(body, dict) or not isinstance(body.get("content"), list):
            raise self._error("sent a response without a content list")
        if body.get("stop_reason") == "max_tokens":
            raise self._error(f"answer was cut off at max_tokens={self.config.max_tokens}; raise LLM_MAX_TOKENS")
        for block in body["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == TOOL_NAME:
                return block.get("input")
        raise self._error(f"answered without calling the {TOOL_NAME} tool (stop_reason={body.get('stop_reason')!r})")


PROVIDER_CLASSES: dict[str, type[Provider]] = {
    "openai": OpenAIChatProvider,
    "anthropic": AnthropicMessagesProvider,
}
