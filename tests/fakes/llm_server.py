"""A fake LLM server speaking OpenAI chat completions and Anthropic Messages, on 127.0.0.1, in a thread.

POST /v1/chat/completions answers in the OpenAI shape, POST /v1/messages in the Anthropic shape. Each
request takes the next scripted `Reply` (or `default` once the script is used up), and every request
is recorded, so tests can check what the client sent and how often. Only the standard library is used.

    with FakeLLMServer() as server:
        server.script(Reply.rate_limited(retry_after="0"), Reply.memories({...}))
        ...  # OpenAI clients use server.openai_base_url, Anthropic clients server.anthropic_base_url
        assert len(server.requests) == 2
"""

import json
from dataclasses import dataclass, field

from tests.fakes.base import JsonHandler, ScriptedServer

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"
TOOL_NAME = "record_memories"


@dataclass(frozen=True)
class Reply:
    """What the server does with one request."""

    kind: str = "answer"  # answer | text | truncated | refusal | status | slow | raw
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
    def prompt_text(self) -> str:
        """Everything the model is shown: the system prompt and all message contents, joined."""
        body = self.body or {}
        parts = [body["system"]] if isinstance(body.get("system"), str) else []
        parts += [message["content"] for message in body.get("messages", []) if isinstance(message["content"], str)]
        return "\n".join(parts)


@dataclass
class FakeLLMServer(ScriptedServer):
    default: Reply = field(default_factory=Reply.memories)

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
            reply = server._next_reply(request)
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
