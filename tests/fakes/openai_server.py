"""A fake OpenAI-compatible embeddings server: a real HTTP server on 127.0.0.1, in a thread.

Each request to POST /v1/embeddings takes the next scripted `Reply` (or `default` once the script
is used up), and every request is recorded, so tests can check what the client sent and how often.
Only the standard library is used.

    with FakeOpenAIServer(dimension=256) as server:
        server.script(Reply.status(429, retry_after="0"), Reply.ok())
        ...  # point EMBEDDING_OPENAI_BASE_URL at server.base_url
        assert len(server.requests) == 2
"""

import json
import math
import re
import zlib
from dataclasses import dataclass, field

from tests.fakes.base import JsonHandler, ScriptedServer

_WORD = re.compile(r"\w+")


def fake_vector(text: str, dimension: int) -> list[float]:
    """A deterministic unit bag-of-words vector: texts sharing words are close, others nearly orthogonal."""
    vector = [0.0] * dimension
    for word in _WORD.findall(text.lower()):
        vector[zlib.crc32(word.encode("utf-8")) % dimension] += 1.0
    norm = math.sqrt(sum(value * value for value in vector))
    if norm == 0.0:
        vector[0] = 1.0
        return vector
    return [value / norm for value in vector]


@dataclass(frozen=True)
class Reply:
    """What the server does with one request."""

    kind: str = "ok"  # ok | status | slow | raw | wrong_dimension | short
    status_code: int = 200
    retry_after: str | None = None
    delay_seconds: float = 0.0
    dimension: int | None = None
    shuffle: bool = False
    body: str = ""

    @classmethod
    def ok(cls, *, shuffle: bool = False) -> "Reply":
        """A normal answer; `shuffle` reverses the order of the `data` items (each keeps its index)."""
        return cls("ok", shuffle=shuffle)

    @classmethod
    def status(cls, status_code: int, *, retry_after: str | None = None, body: str = "") -> "Reply":
        return cls("status", status_code=status_code, retry_after=retry_after, body=body)

    @classmethod
    def rate_limited(cls, retry_after: str = "0") -> "Reply":
        return cls.status(429, retry_after=retry_after, body='{"error": {"message": "Rate limit reached"}}')

    @classmethod
    def server_error(cls) -> "Reply":
        return cls.status(500, body='{"error": {"message": "The server had an error"}}')

    @classmethod
    def slow(cls, seconds: float) -> "Reply":
        """Wait `seconds` before a normal answer (longer than the client's timeout, usually)."""
        return cls("slow", delay_seconds=seconds)

    @classmethod
    def malformed(cls) -> "Reply":
        """HTTP 200 whose body is not JSON."""
        return cls.raw('{"data": [{"index": 0, "embedding": [0.1, 0.2')

    @classmethod
    def raw(cls, body: str) -> "Reply":
        """HTTP 200 with exactly this body, whatever was asked."""
        return cls("raw", body=body)

    @classmethod
    def wrong_dimension(cls, dimension: int) -> "Reply":
        """A normal-looking answer with vectors of `dimension` floats."""
        return cls("wrong_dimension", dimension=dimension)

    @classmethod
    def short(cls) -> "Reply":
        """A normal-looking answer missing the last vector."""
        return cls("short")


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict | None

    @property
    def inputs(self) -> list[str]:
        return list((self.body or {}).get("input") or [])


@dataclass
class FakeOpenAIServer(ScriptedServer):
    dimension: int = 256
    default: Reply = field(default_factory=Reply.ok)

    thread_name = "fake-openai"

    def handler_class(self):
        return _handler_for(self)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # --- serving ------------------------------------------------------------------------------------

    def _embeddings_body(self, request: RecordedRequest, reply: Reply) -> dict:
        dimension = reply.dimension if reply.kind == "wrong_dimension" else self.dimension
        inputs = request.inputs
        if reply.kind == "short":
            inputs = inputs[:-1]
        data = [
            {"object": "embedding", "index": index, "embedding": fake_vector(text, dimension)}
            for index, text in enumerate(inputs)
        ]
        if reply.shuffle:
            data.reverse()
        model = (request.body or {}).get("model", "")
        return {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": 0, "total_tokens": 0}}


def _handler_for(server: FakeOpenAIServer):
    class Handler(JsonHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.read_json()
            request = RecordedRequest(
                method="POST",
                path=self.path,
                headers={name.lower(): value for name, value in self.headers.items()},
                body=body,
            )
            reply = server._next_reply(request)
            if self.path.rstrip("/") != "/v1/embeddings":
                self._send(404, '{"error": {"message": "Unknown path"}}')
                return
            if reply.kind == "status":
                extra = {"Retry-After": reply.retry_after} if reply.retry_after is not None else {}
                self._send(reply.status_code, reply.body, extra)
                return
            if reply.kind == "slow" and server._stopping.wait(reply.delay_seconds):
                return
            if reply.kind == "raw":
                self._send(200, reply.body)
                return
            self._send(200, json.dumps(server._embeddings_body(request, reply)))


    return Handler
