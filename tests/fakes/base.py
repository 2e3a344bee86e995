"""A scripted HTTP server on 127.0.0.1, run in a thread: the shared half of the fake outside services.

Subclasses (dataclasses with a `default` reply) provide `handler_class()`; tests queue replies with
`script()` and read what arrived from `requests`.
"""

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedServer:
    thread_name = "fake-server"

    def __post_init__(self):
        self._script: deque = deque()
        self._requests: list = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def handler_class(self):
        raise NotImplementedError

    # --- control ------------------------------------------------------------------------------------

    def start(self):
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self.handler_class())  # port 0: a free port
        self._httpd.daemon_threads = True
        # A short poll interval keeps shutdown() (which waits for the next poll) fast.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name=self.thread_name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in a slow reply
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join(timeout=5)
            self._httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    def script(self, *replies) -> None:
        """Queue replies for the next requests, in order; `default` answers once they run out."""
        with self._lock:
            self._script.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self._requests.clear()

    @property
    def requests(self) -> list:
        with self._lock:
            return list(self._requests)

    # --- serving ------------------------------------------------------------------------------------

    def _next_reply(self, request):
        with self._lock:
            self._requests.append(request)
            return self._script.popleft() if self._script else self.default


class JsonHandler(BaseHTTPRequestHandler):
    """Request handler plumbing of the fakes: read a JSON body, send a JSON reply, stay quiet."""

    def read_json(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return None

    def _send(self, status_code: int, text: str, extra_headers: dict | None = None) -> None:
        payload = text.encode("utf-8")
        try:
            self.send_response(status_code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (extra_headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test); nothing to tell it

    def log_message(self, format, *args):
        pass
