"""A TCP port in front of the test PostgreSQL that can be cut, to take the database away from a server process
without stopping it for everything else.

The embedded PostgreSQL listens on a Unix socket only; an external one (DATABASE_URL) on TCP. Either way a
process pointed at `proxy.database_url(name)` reaches it through here:

    with DatabaseProxy.for_test_database() as proxy:
        server.start(DATABASE_URL=proxy.database_url("test_x"))
        proxy.down()   # open connections are cut and new ones refused, as when PostgreSQL stops
        proxy.up()     # accepting and forwarding again
"""

from __future__ import annotations

import select
import socket
import threading
from pathlib import Path

from django.conf import settings


class DatabaseProxy:
    def __init__(self, *, unix_socket: str | None = None, tcp: tuple[str, int] | None = None, user: str = "postgres",
                 password: str = ""):
        assert (unix_socket is None) != (tcp is None), "one upstream: a Unix socket or a TCP address"
        self.unix_socket, self.tcp = unix_socket, tcp
        self.user, self.password = user, password
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self.port = self._listen(0)

    @classmethod
    def for_test_database(cls) -> DatabaseProxy:
        """In front of the server the tests use (settings.DATABASES["default"])."""
        database = settings.DATABASES["default"]
        host, port = database["HOST"], int(database["PORT"] or 5432)
        if host.startswith("/"):  # a socket directory: the embedded server
            return cls(unix_socket=str(Path(host) / f".s.PGSQL.{port}"), user=database["USER"])
        return cls(tcp=(host or "127.0.0.1", port), user=database["USER"], password=database.get("PASSWORD") or "")

    def database_url(self, database_name: str) -> str:
        credentials = f"{self.user}:{self.password}" if self.password else self.user
        return f"postgres://{credentials}@127.0.0.1:{self.port}/{database_name}"

    def down(self) -> None:
        """Stop listening (connection refused) and cut every open connection."""
        with self._lock:
            listener, self._listener = self._listener, None
            sockets, self._sockets = self._sockets, []
        if listener is not None:
            listener.close()
        for sock in sockets:
            _close(sock)

    def up(self) -> None:
        if self._listener is None:
            self._listen(self.port)

    def close(self) -> None:
        self.down()

    def __enter__(self) -> DatabaseProxy:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _listen(self, port: int) -> int:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return listener.getsockname()[1]

    def _upstream(self) -> socket.socket:
        if self.unix_socket:
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(self.unix_socket)
            return upstream
        return socket.create_connection(self.tcp)

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed: down()
            try:
                upstream = self._upstream()
            except OSError:
                _close(client)
                continue
            with self._lock:
                if self._listener is not listener:  # went down meanwhile
                    _close(client)
                    _close(upstream)
                    continue
                self._sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    @staticmethod
    def _pump(client: socket.socket, upstream: socket.socket) -> None:
        peers = {client: upstream, upstream: client}
        try:
            while True:
                readable, _, _ = select.select(list(peers), [], [], 0.5)
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    peers[sock].sendall(data)
        except (OSError, ValueError):
            return  # cut by down(), or closed by either side
        finally:
            _close(client)
            _close(upstream)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
