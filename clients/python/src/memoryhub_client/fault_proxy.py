"""A TCP proxy in front of memoryhub that fails the ways a network and a server fail: to try an agent
against an outage (the client's own tests and bench/agent_outage.py use it).

    with FaultyProxy("http://127.0.0.1:8000") as proxy:
        store = MemoryHubStore(store="demo", user_id="alice", base_url=proxy.url)
        proxy.mode = "hang"         # accept, read the request, never answer
        ...
        proxy.mode = "forward"

Modes: "forward"; "refuse" (nothing listens on the port: connection refused); "hang"; "error" (a load
balancer's HTML 503 to every request); "drop" (the request reaches the server, its answer is lost: the
connection closes instead). A mode applies to new requests on open (kept-alive) connections too.
"""

from __future__ import annotations

import select
import socket
import threading
from urllib.parse import urlsplit

ERROR_ANSWER = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/html\r\nContent-Length: 52\r\nConnection: close\r\n\r\n"
    b"<html><title>503 Service Unavailable</title></html>\n"
)
MODES = ("forward", "refuse", "hang", "error", "drop")


class FaultyProxy:
    def __init__(self, target_url: str):
        target = urlsplit(target_url)
        self.target = (target.hostname or "127.0.0.1", target.port or 80)
        self._mode = "forward"
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._connections: list[socket.socket] = []
        self._closed = False
        self.requests = 0  # request chunks seen from clients, whatever the mode
        self.port = self._listen(0)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        with self._lock:
            previous, self._mode = self._mode, mode
        if mode == "refuse":
            self._stop_listening()
            self._close_connections()
        elif previous == "refuse":
            self._listen(self.port)

    def close(self) -> None:
        self._closed = True
        self._stop_listening()
        self._close_connections()

    def __enter__(self) -> FaultyProxy:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- internals ----------------------------------------------------------------------------------------

    def _listen(self, port: int) -> int:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return listener.getsockname()[1]

    def _stop_listening(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()

    def _close_connections(self) -> None:
        with self._lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            try:
                connection.close()
            except OSError:
                pass

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            with self._lock:
                self._connections.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        drop_answer = False
        try:
            while not self._closed:
                readable, _, _ = select.select([client] + ([upstream] if upstream else []), [], [], 0.2)
                if client in readable:
                    chunk = client.recv(65536)
                    if not chunk:
                        return
                    self.requests += 1
                    mode = self._mode
                    if mode == "hang":
                        continue  # swallowed; the client waits for an answer that never comes
                    if mode == "error":
                        client.sendall(ERROR_ANSWER)
                        return
                    if upstream is None:
                        upstream = socket.create_connection(self.target)
                        with self._lock:
                            self._connections.append(upstream)
                    drop_answer = mode == "drop"
                    upstream.sendall(chunk)
                if upstream is not None and upstream in readable:
                    answer = upstream.recv(65536)
                    if not answer:
                        return
                    if drop_answer:
                        return  # the server acted; the client sees the connection close
                    client.sendall(answer)
        except (OSError, ValueError):  # ValueError: close() from another thread left select() a socket of fd -1
            return
        finally:
            for sock in (client, upstream):
                if sock is not None:
                    try:
                        sock.close()
                    except OSError:
                        pass
