"""A fake webhook receiver: a real HTTP server on 127.0.0.1, in a thread, that records every request it gets
(headers and the raw body, as signatures are computed over the bytes) and answers each with the next scripted
`Reply`, or `default` (200) once the script is used up. Only the standard library is used.

    with WebhookReceiver() as receiver:
        receiver.fail(2)  # two 500s, then 200s
        ...  # a webhook pointed at receiver.url
        first, second, third = receiver.wait_for(3)
"""

import hashlib
import hmac
import json
import time
from dataclasses import dataclass, field

from tests.fakes.base import JsonHandler, ScriptedServer

PATH = "/hooks/memoryhub"


@dataclass(frozen=True)
class Reply:
    """What the receiver does with one request."""

    status_code: int = 200
    body: str = '{"received": true}'
    headers: tuple[tuple[str, str], ...] = ()
    delay_seconds: float = 0.0

    @classmethod
    def ok(cls) -> "Reply":
        return cls()

    @classmethod
    def status(cls, status_code: int, body: str = '{"error": "the receiver is down"}') -> "Reply":
        return cls(status_code=status_code, body=body)

    @classmethod
    def redirect(cls, location: str) -> "Reply":
        return cls(status_code=302, body="", headers=(("Location", location),))

    @classmethod
    def slow(cls, seconds: float) -> "Reply":
        """Wait `seconds` (beyond the sender's timeout, usually), then accept."""
        return cls(delay_seconds=seconds)


@dataclass(frozen=True)
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes
    received_at: float  # time.time()

    @property
    def json(self):
        return json.loads(self.body)

    def verified(self, secret: str, *, tolerance_seconds: int = 300):
        """The body, checked as a receiver checks it (the spec, written independently of memoryhub's code): the
        Memoryhub-Signature's v1 is the HMAC-SHA256 of "<t>.<raw body>", and t is recent (not a replay)."""
        fields = dict(item.split("=", 1) for item in self.headers["memoryhub-signature"].split(","))
        timestamp = int(fields["t"])
        expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + self.body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(expected, fields["v1"]), "the signature does not verify"
        assert abs(time.time() - timestamp) <= tolerance_seconds, "signed too long ago: a replay"
        return self.json


@dataclass
class WebhookReceiver(ScriptedServer):
    default: Reply = field(default_factory=Reply.ok)

    thread_name = "fake-webhook-receiver"

    def handler_class(self):
        return _handler_for(self)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{PATH}"

    def fail(self, times: int, status_code: int = 500) -> None:
        """Answer the next `times` requests with `status_code`."""
        self.script(*[Reply.status(status_code)] * times)

    def wait_for(self, count: int, timeout: float = 10.0) -> list[ReceivedRequest]:
        """The first `count` requests, once they have arrived; AssertionError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while len(self.requests) < count:
            assert time.monotonic() < deadline, f"{len(self.requests)} of {count} webhook requests after {timeout}s"
            time.sleep(0.02)
        return self.requests[:count]


def _handler_for(server: WebhookReceiver):
    class Handler(JsonHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            request = ReceivedRequest(
                method="POST",
                path=self.path,
                headers={name.lower(): value for name, value in self.headers.items()},
                body=self.rfile.read(length) if length else b"",
                received_at=time.time(),
            )
            reply = server._next_reply(request)
            if reply.delay_seconds and server._stopping.wait(reply.delay_seconds):
                return
            self._send(reply.status_code, reply.body, dict(reply.headers))

    return Handler
