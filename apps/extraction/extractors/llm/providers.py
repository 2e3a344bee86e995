"""The two wire protocols: each sends the prompts and returns the model's decoded JSON answer.

A request a server refuses with a 400 naming a parameter it does not support (OpenAI's reasoning models
refuse `max_tokens` and any `temperature` but their default; some local servers refuse `json_schema`)
is changed and sent once more; the change is kept for the provider's lifetime, which is the process's
(extractors are built once per process).
"""

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from apps.extraction.extractors.base import ExtractionError
from apps.extraction.extractors.llm.config import LLMConfig
from apps.extraction.extractors.llm.errors import MalformedAnswer, PromptTooLong, TruncatedAnswer
from apps.extraction.extractors.llm.schema import MEMORIES_SCHEMA, TOOL_NAME
from apps.extraction.extractors.llm.transport import LLMHTTPClient, RequestRefused

logger = logging.getLogger(__name__)

ANTHROPIC_VERSION = "2023-06-01"
# Some models wrap their JSON in a Markdown fence, with or without words around it.
_CODE_FENCE = re.compile(r"```[a-zA-Z]*[ \t]*\n(?P<body>.*?)\n?[ \t]*```", re.DOTALL)
_MAX_JSON_STARTS = 20  # "{" positions tried when the answer has words around its JSON
# OpenAI models that accept only max_completion_tokens (and only their default temperature).
_REASONING_MODEL = re.compile(r"^(?:o\d|gpt-5)", re.IGNORECASE)
# How servers say that a request parameter is not supported (OpenAI, Azure, vLLM, LiteLLM, Anthropic).
_UNSUPPORTED = re.compile(r"unsupported|not supported|unrecognized|unknown|not permitted|not allowed|extra input|"
                          r"does not support|only the default", re.IGNORECASE)
_UNSUPPORTED_CODES = {"unsupported_parameter", "unsupported_value"}
# How servers say that the prompt does not fit the model's context (OpenAI, vLLM, Anthropic, LiteLLM).
_CONTEXT_OVERFLOW = re.compile(r"context_length_exceeded|maximum context length|context window|prompt is too long|"
                               r"too many (?:input )?tokens", re.IGNORECASE)


def decode_json_answer(text: str) -> object:
    """The JSON value a model wrote: the whole text, a fenced block in it, or the first object in it that
    has a "memories" key (words before or after it are dropped). MalformedAnswer when there is none."""
    try:
        return json.loads(text)
    except ValueError as exc:
        problem = exc
    for fenced in _CODE_FENCE.finditer(text):
        try:
            return json.loads(fenced.group("body"))
        except ValueError:
            pass
    decoder = json.JSONDecoder()
    start = text.find("{")
    for _ in range(_MAX_JSON_STARTS):
        if start < 0:
            break
        try:
            value, _end = decoder.raw_decode(text, start)
        except ValueError:
            pass
        else:
            if isinstance(value, dict) and "memories" in value:
                return value
        start = text.find("{", start + 1)
    # The model's text is not repeated here: it may carry the user's personal details.
    raise MalformedAnswer(f"answered content that is not JSON ({problem})")


class Provider:
    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None]):
        self.config = config
        self.label = f"LLM ({config.provider}, {config.model})"
        self._http = LLMHTTPClient(config=config, headers=self.headers(), label=self.label, sleep=sleep)
        self.send_temperature = config.temperature is not None

    def headers(self) -> dict[str, str]:
        raise NotImplementedError

    def request_body(self, *, system: str, user: str) -> dict:
        raise NotImplementedError

    def answer_from(self, body: object) -> object:
        """The model's decoded answer in a response body (not yet validated)."""
        raise NotImplementedError

    def complete(self, *, system: str, user: str) -> object:
        """The model's answer to the prompts, decoded from JSON (not yet validated)."""
        while True:
            try:
                body = self._http.post_json(self.path, self.request_body(system=system, user=user))
            except RequestRefused as exc:
                if exc.status_code in (400, 413, 422) and _CONTEXT_OVERFLOW.search(exc.body):
                    raise self._error("refused the prompt as too long for the model", PromptTooLong) from exc
                change = self._adapt_to(exc) if exc.status_code in (400, 422) else None
                if change is None:
                    raise
                logger.warning("%s refused a request parameter; %s from now on", self.label, change)
                continue
            return self.answer_from(body)

    def _adapt_to(self, refused: RequestRefused) -> str | None:
        """Change the request so that the parameter the server named is gone; what changed, or None."""
        if self.send_temperature and _Complaint.of(refused.body).refuses("temperature"):
            self.send_temperature = False
            return "leaving out temperature"
        return None

    def close(self) -> None:
        self._http.close()

    def _error(self, problem: str, kind: type[ExtractionError] = ExtractionError) -> ExtractionError:
        return kind(f"{self.label} {problem}")


class OpenAIChatProvider(Provider):
    """POST {base}/chat/completions: OpenAI, Ollama, vLLM, LM Studio, llama.cpp server..."""

    path = "chat/completions"

    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None]):
        super().__init__(config, sleep=sleep)
        self.structured_output = config.structured_output
        self.token_limit_parameter = config.token_limit_parameter
        self._token_limit_learned = config.token_limit_parameter != "auto"  # a chosen name is kept as it is
        if config.token_limit_parameter == "auto":
            model = config.model.rsplit("/", 1)[-1]  # "openai/o3-mini" behind a router
            self.token_limit_parameter = "max_completion_tokens" if _REASONING_MODEL.match(model) else "max_tokens"

    def headers(self) -> dict[str, str]:
        # Local servers need no key; sending an empty bearer token would confuse some proxies.
        return {"Authorization": f"Bearer {self.config.api_key}"} if self.config.api_key else {}

    def request_body(self, *, system: str, user: str) -> dict:
        if self.structured_output:
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
            self.token_limit_parameter: self.config.max_tokens,
        }
        if self.send_temperature:
            body["temperature"] = self.config.temperature
        return body

    def _adapt_to(self, refused: RequestRefused) -> str | None:
        complaint = _Complaint.of(refused.body)
        if not self._token_limit_learned and complaint.refuses(self.token_limit_parameter):
            self._token_limit_learned = True
            other = {"max_tokens": "max_completion_tokens", "max_completion_tokens": "max_tokens"}
            self.token_limit_parameter = other[self.token_limit_parameter]
            return f"sending {self.token_limit_parameter}"
        if self.structured_output and (complaint.refuses("response_format") or complaint.refuses("json_schema")):
            self.structured_output = False
            return "asking for json_object instead of a json_schema"
        return super()._adapt_to(refused)

    def answer_from(self, body: object) -> object:
        try:
            choice = body["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise self._error("sent a response without choices[0].message") from exc
        if not isinstance(message, dict):
            raise self._error("sent a response without choices[0].message")
        if message.get("refusal"):
            raise self._error("refused to answer (message.refusal is set)")
        if choice.get("finish_reason") == "content_filter":
            raise self._error("answer was withheld by the server's content filter")
        if choice.get("finish_reason") == "length":
            raise self._error(
                f"answer was cut off at {self.token_limit_parameter}={self.config.max_tokens}; raise LLM_MAX_TOKENS",
                TruncatedAnswer,
            )
        content = message.get("content")
        if not isinstance(content, str) or not content.strip():
            raise self._error("sent an empty message content", MalformedAnswer)
        try:
            return decode_json_answer(content)
        except MalformedAnswer as exc:
            raise self._error(str(exc), MalformedAnswer) from exc


class AnthropicMessagesProvider(Provider):
    """POST {base}/v1/messages, with the answer forced into a record_memories tool call."""

    path = "v1/messages"

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
        if self.send_temperature:
            body["temperature"] = self.config.temperature
        return body

    def answer_from(self, body: object) -> object:
        if not isinstance(body, dict) or not isinstance(body.get("content"), list):
            raise self._error("sent a response without a content list")
        if body.get("stop_reason") == "max_tokens":
            raise self._error(
                f"answer was cut off at max_tokens={self.config.max_tokens}; raise LLM_MAX_TOKENS", TruncatedAnswer
            )
        if body.get("stop_reason") == "refusal":
            raise self._error("refused to answer (stop_reason 'refusal')")
        for block in body["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == TOOL_NAME:
                return block.get("input")
        raise self._error(
            f"answered without calling the {TOOL_NAME} tool (stop_reason={body.get('stop_reason')!r})", MalformedAnswer
        )


@dataclass(frozen=True)
class _Complaint:
    """What a 4xx body says, lower-cased: the parameter it names (OpenAI), its code and its message."""

    param: str
    code: str
    message: str

    @classmethod
    def of(cls, body: str) -> "_Complaint":
        try:
            decoded = json.loads(body)
        except ValueError:
            return cls("", "", body.lower())
        error = decoded.get("error", decoded) if isinstance(decoded, dict) else {}
        if not isinstance(error, dict):
            return cls("", "", str(error).lower())
        message = error.get("message") or error.get("detail") or decoded.get("detail") or ""
        param, code = (error.get(key) for key in ("param", "code"))
        return cls(_lower(param), _lower(code), _lower(str(message)))

    def refuses(self, parameter: str) -> bool:
        """The server does not take `parameter` (or anything but its default value): not merely a bad value,
        such as a max_tokens above the model's limit, which the other name would not cure."""
        named = (self.param == parameter or self.param.startswith(parameter + ".")) if self.param else (
            parameter in self.message)
        return named and (self.code in _UNSUPPORTED_CODES or bool(_UNSUPPORTED.search(self.message)))


def _lower(value: object) -> str:
    return value.lower() if isinstance(value, str) else ""


PROVIDER_CLASSES: dict[str, type[Provider]] = {
    "openai": OpenAIChatProvider,
    "anthropic": AnthropicMessagesProvider,
}
