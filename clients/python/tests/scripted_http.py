"""A scripted HTTP server on 127.0.0.1, run in a thread, standing in for memoryhub in the client's unit tests.

Tests queue replies with `script()`; once they run out, `default` answers. `requests` records what arrived.
(The server repository's tests/fakes/base.py is the model; the client's tests do not import server code.)
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

API_KEY = "mh_test_key"


@dataclass
class Reply:
    status: int = 200
    body: Any = field(default_factory=dict)  # sent as JSON unless `text` is given
    headers: dict[str, str] = field(default_factory=dict)
    text: str | None = None  # a non-JSON body, sent as is
    content_type: str = "application/json"
    delay: float = 0.0  # seconds before answering (to make the client time out)
    drop: bool = False  # close the connection without answering

    @classmethod
    def error(cls, status: int, code: str = "some_error", message: str = "Something went wrong.",
              details: Any = None, **kwargs: Any) -> Reply:
        return cls(status, {"error": {"code": code, "message": message, "details": details or {}}}, **kwargs)

    @classmethod
    def page(cls, results: list, next_url: str | None = None) -> Reply:
        return cls(200, {"next": next_url, "previous": None, "results": results})


@dataclass
class Recorded:
    method: str
    raw_path: str  # as sent, percent-encoding included, without the query
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names
    body: Any  # parsed JSON, or None
    raw_headers: Any = None  # the email.message.Message of the request, for repeated headers

    @property
    def path(self) -> str:
        return unquote(self.raw_path)

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None


class ScriptedServer:
    def __init__(self, default: Reply | None = None):
        self.default = default or Reply()
        self._script: deque[Reply] = deque()
        self._requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> ScriptedServer:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="scripted-memoryhub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join(timeout=5)
            self._httpd = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    def _next_reply(self, recorded: Recorded) -> Reply:
        with self._lock:
            self._requests.append(recorded)
            return self._script.popleft() if self._script else self.default

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, like a real server

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode(errors="replace")
                parts = urlsplit(self.path)
                recorded = Recorded(
                    method=self.command,
                    raw_path=parts.path,
                    query=parse_qs(parts.query, keep_blank_values=True),
                    headers={name.lower(): value for name, value in self.headers.items()},
                    body=body,
                    raw_headers=self.headers,
                )
                reply = server._next_reply(recorded)
                if reply.delay:
                    server._stopping.wait(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    return
                payload = (reply.text if reply.text is not None else json.dumps(reply.body)).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

            def log_message(self, format, *args):
                pass

        return Handler
