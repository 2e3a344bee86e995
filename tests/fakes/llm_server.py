"""A fake LLM server speaking OpenAI chat completions and Anthropic Messages, on 127.0.0.1, in a thread.

POST /v1/chat/completions answers in the OpenAI shape, POST /v1/messages in the Anthropic shape. Each
request takes the next scripted `Reply` (or, once the script is used up, what `responder` makes of the
request, or `default`), and every request is recorded, so tests can check what the client sent and how
often. Like a real model it can refuse request parameters (`rejects`, answered with OpenAI's 400 bodies)
and prompts longer than its context (`context_limit_chars`). Only the standard library is used.

    with FakeLLMServer() as server:
        server.script(Reply.rate_limited(retry_after="0"), Reply.memories({...}))
        ...  # OpenAI clients use server.openai_base_url, Anthropic clients server.anthropic_base_url
        assert len(server.requests) == 2
"""

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.fakes.base import JsonHandler, ScriptedServer

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"
TOOL_NAME = "record_memories"


@dataclass(frozen=True)
class Reply:
    """What the server does with one request."""

    kind: str = "answer"  # answer | text | truncated | refusal | empty | status | slow | raw
    answer: object = None  # the model's structured answer (OpenAI: JSON content; Anthropic: tool input)
    text: str = ""  # OpenAI: message content verbatim; Anthropic: a text block instead of a tool call
    status_code: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: str = ""
    delay_seconds: float = 0.0
    then: "Reply | None" = None

    @classmethod
    def memories(cls, *items: dict, preamble: str = "") -> "Reply":
        """A well-formed answer holding these memory items; Anthropic puts `preamble` in a text block first."""
        return cls("answer", answer={"memories": list(items)}, text=preamble)

    @classmethod
    def answer_with(cls, answer: object) -> "Reply":
        """The model answers exactly this JSON value (whether or not it fits the schema)."""
        return cls("answer", answer=answer)

    @classmethod
    def text_only(cls, text: str) -> "Reply":
        """OpenAI: message content is this text verbatim. Anthropic: a text block and no tool call."""
        return cls("text", text=text)

    @classmethod
    def fenced(cls, answer: object, *, before: str = "", after: str = "") -> "Reply":
        """The JSON answer in a Markdown ```json fence, with optional words around it (OpenAI content)."""
        return cls.text_only(f"{before}```json\n{json.dumps(answer, indent=2)}\n```{after}")

    @classmethod
    def with_commentary(cls, answer: object, commentary: str) -> "Reply":
        """The JSON answer followed by the model's remarks on it (OpenAI content)."""
        return cls.text_only(json.dumps(answer) + commentary)

    @classmethod
    def empty(cls) -> "Reply":
        """OpenAI: empty message content. Anthropic: an empty content list (stop_reason end_turn)."""
        return cls("empty")

    @classmethod
    def unsupported_parameter(cls, parameter: str, instead: str | None = None) -> "Reply":
        """OpenAI's 400 for a parameter a model does not take (max_tokens on o1, o3, gpt-5...)."""
        message = f"Unsupported parameter: '{parameter}' is not supported with this model."
        if instead:
            message += f" Use '{instead}' instead."
        error = {"message": message, "type": "invalid_request_error", "param": parameter,
                 "code": "unsupported_parameter"}
        return cls.status(400, body=json.dumps({"error": error}))

    @classmethod
    def unsupported_value(cls, parameter: str, value: object) -> "Reply":
        """OpenAI's 400 for a value a model does not take (temperature 0 on o1, o3, gpt-5...)."""
        message = (f"Unsupported value: '{parameter}' does not support {value} with this model. "
                   "Only the default (1) value is supported.")
        error = {"message": message, "type": "invalid_request_error", "param": parameter, "code": "unsupported_value"}
        return cls.status(400, body=json.dumps({"error": error}))

    @classmethod
    def context_overflow(cls) -> "Reply":
        """OpenAI's 400 for a prompt longer than the model's context."""
        error = {"message": "This model's maximum context length is 8192 tokens. However, your messages resulted in "
                            "9001 tokens. Please reduce the length of the messages.",
                 "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}
        return cls.status(400, body=json.dumps({"error": error}))

    @classmethod
    def truncated(cls) -> "Reply":
        """The model ran out of tokens mid-answer (finish_reason "length" / stop_reason "max_tokens")."""
        return cls("truncated")

    @classmethod
    def refusal(cls) -> "Reply":
        """OpenAI structured-output refusal: content null, refusal set."""
        return cls("refusal")

    @classmethod
    def status(cls, status_code: int, *, body: str = "", **headers: str) -> "Reply":
        """An error status; headers as keywords, underscores for dashes (retry_after="7")."""
        pairs = tuple((name.replace("_", "-"), value) for name, value in headers.items())
        return cls("status", status_code=status_code, headers=pairs, body=body)

    @classmethod
    def rate_limited(cls, retry_after: str | None = "0", **headers: str) -> "Reply":
        if retry_after is not None:
            headers["retry_after"] = retry_after
        return cls.status(429, body='{"error": {"message": "Rate limit reached"}}', **headers)

    @classmethod
    def server_error(cls, status_code: int = 500) -> "Reply":
        return cls.status(status_code, body='{"error": {"message": "The server had an error"}}')

    @classmethod
    def slow(cls, seconds: float, then: "Reply | None" = None) -> "Reply":
        """Wait `seconds` (usually beyond the client's timeout), then answer like `then` (empty memories)."""
        return cls("slow", delay_seconds=seconds, then=then or cls.memories())

    @classmethod
    def raw(cls, body: str) -> "Reply":
        """HTTP 200 with exactly this body, whatever the protocol."""
        return cls("raw", body=body)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict | None
    client_port: int  # the same port on two requests means a reused (keep-alive) connection

    @property
    def user_prompt(self) -> str:
        messages = (self.body or {}).get("messages", [])
        return next(message["content"] for message in messages if message["role"] == "user")

    @property
    def conversation(self) -> list[dict]:
        """The messages to extract from, as the prompt shows them (not those shown for context)."""
        section = self.user_prompt.split("Conversation (oldest first):\n", 1)[1].split("\n\n", 1)[0]
        return [json.loads(line) for line in section.splitlines()]

    @property
    def prompt_text(self) -> str:
        """Everything the model is shown: the system prompt and all message contents, joined."""
        body = self.body or {}
        parts = [body["system"]] if isinstance(body.get("system"), str) else []
        parts += [message["content"] for message in body.get("messages", []) if isinstance(message["content"], str)]
        return "\n".join(parts)


@dataclass
class FakeLLMServer(ScriptedServer):
    default: Reply = field(default_factory=Reply.memories)
    # Once the script is used up: the reply to a request, made from it (a "model" that reads the prompt).
    responder: Callable[[RecordedRequest], Reply] | None = None
    # Request parameters answered with OpenAI's 400 whenever they are sent, as a reasoning model does:
    # "max_tokens" (unsupported parameter), "temperature" (unsupported value), "max_completion_tokens".
    rejects: tuple[str, ...] = ()
    context_limit_chars: int | None = None  # a longer prompt is answered with context_length_exceeded

    thread_name = "fake-llm"

    def handler_class(self):
        return _handler_for(self)

    @property
    def openai_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # --- serving ------------------------------------------------------------------------------------

    def _reply_to(self, request: RecordedRequest) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        for parameter in self.rejects:
            if parameter in body:
                with self._lock:
                    self._requests.append(request)
                if parameter == "temperature":
                    return Reply.unsupported_value("temperature", body["temperature"])
                instead = {"max_tokens": "max_completion_tokens"}.get(parameter)
                return Reply.unsupported_parameter(parameter, instead)
        if self.context_limit_chars is not None and len(request.prompt_text) > self.context_limit_chars:
            with self._lock:
                self._requests.append(request)
            return Reply.context_overflow()
        with self._lock:
            scripted = bool(self._script)
        if scripted or self.responder is None:
            return self._next_reply(request)
        with self._lock:
            self._requests.append(request)
        return self.responder(request)


def openai_body(reply: Reply, model: str) -> dict:
    message: dict = {"role": "assistant", "content": None, "refusal": None}
    finish_reason = "stop"
    if reply.kind == "answer":
        message["content"] = json.dumps(reply.answer)
    elif reply.kind == "text":
        message["content"] = reply.text
    elif reply.kind == "truncated":
        message["content"] = '{"memories": [{"content": "Alice works'
        finish_reason = "length"
    elif reply.kind == "refusal":
        message["refusal"] = "I can't help with that."
    elif reply.kind == "empty":
        message["content"] = ""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def anthropic_body(reply: Reply, model: str) -> dict:
    content: list[dict] = []
    stop_reason = "tool_use"
    if reply.kind == "answer":
        content = [{"type": "text", "text": reply.text}] if reply.text else []
        content.append({"type": "tool_use", "id": "toolu_fake", "name": TOOL_NAME, "input": reply.answer})
    elif reply.kind == "text":
        content = [{"type": "text", "text": reply.text}]
        stop_reason = "end_turn"
    elif reply.kind == "truncated":
        content = [{"type": "tool_use", "id": "toolu_fake", "name": TOOL_NAME, "input": {}}]
        stop_reason = "max_tokens"
    elif reply.kind == "empty":
        stop_reason = "end_turn"
    else:
        content = [{"type": "text", "text": "I can't help with that."}]
        stop_reason = "refusal"
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _handler_for(server: FakeLLMServer):
    class Handler(JsonHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.read_json()
            request = RecordedRequest(
                method="POST",
                path=self.path,
                headers={name.lower(): value for name, value in self.headers.items()},
                body=body,
                client_port=self.client_address[1],
            )
            reply = server._reply_to(request)
            path = self.path.rstrip("/")
            if path not in (OPENAI_PATH, ANTHROPIC_PATH):
                self._send(404, '{"error": {"message": "Unknown path"}}')
                return
            if reply.kind == "status":
                self._send(reply.status_code, reply.body, dict(reply.headers))
                return
            if reply.kind == "slow":
                if server._stopping.wait(reply.delay_seconds):
                    return
                reply = reply.then
            if reply.kind == "raw":
                self._send(200, reply.body)
                return
            model = (body or {}).get("model", "") if isinstance(body, dict) else ""
            answer = openai_body(reply, model) if path == OPENAI_PATH else anthropic_body(reply, model)
            self._send(200, json.dumps(answer))


    return Handler
