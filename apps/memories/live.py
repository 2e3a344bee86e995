"""Sending to the channel layer from synchronous code (services, after commit) without making the caller wait.

A write request must not pay for a round trip to the channel layer (2–3 ms with PostgreSQL's layer), and
the layer's async connections belong to one event loop. So each process has one loop that sends: the ASGI
server's loop in a web process (bound by the ASGI handler: the websocket consumers live there), or a
daemon thread's own loop elsewhere (a django-q2 worker, a management command, a test). Messages queue in
that loop and are sent one at a time, in the order they were given.
"""

import asyncio
import atexit
import logging
import os
import threading

from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)

# How long a process that exits waits for the messages it has queued.
EXIT_FLUSH_SECONDS = 2.0


class _Sender:
    """Sends queued messages in order from `loop`."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self.queue: asyncio.Queue | None = None
        self.pending = 0
        self.idle = threading.Event()
        self.idle.set()
        self._count_lock = threading.Lock()

    def submit(self, group: str, message: dict) -> None:
        with self._count_lock:
            self.pending += 1
            self.idle.clear()
        self.loop.call_soon_threadsafe(self._put, group, message)

    def _put(self, group: str, message: dict) -> None:
        if self.queue is None:
            self.queue = asyncio.Queue()
            self.loop.create_task(self._drain())
        self.queue.put_nowait((group, message))

    async def _drain(self) -> None:
        layer = get_channel_layer()
        while True:
            group, message = await self.queue.get()
            try:
                await layer.group_send(group, message)
            except Exception:
                logger.exception("Could not send a live event to %s", group)
            finally:
                with self._count_lock:
                    self.pending -= 1
                    if not self.pending:
                        self.idle.set()


_lock = threading.Lock()
_bound_loop: asyncio.AbstractEventLoop | None = None
_senders: dict[asyncio.AbstractEventLoop, _Sender] = {}
_own_loop: asyncio.AbstractEventLoop | None = None
# A forked child (a q2 worker) has copies of its parent's loops but not the threads that run them.
_pid = os.getpid()


def bind_event_loop(loop: asyncio.AbstractEventLoop | None) -> None:
    """Send from `loop` (the ASGI server's) while it runs; None: from this process's own loop again."""
    global _bound_loop
    _bound_loop = loop


def _own_event_loop() -> asyncio.AbstractEventLoop:
    global _own_loop
    if _own_loop is None:
        _own_loop = asyncio.new_event_loop()
        threading.Thread(target=_own_loop.run_forever, name="memoryhub-live-events", daemon=True).start()
    return _own_loop


def _forget_parent_loops() -> None:
    global _pid, _own_loop, _bound_loop
    if _pid != os.getpid():
        _pid, _own_loop, _bound_loop = os.getpid(), None, None
        _senders.clear()


def _sender() -> _Sender:
    with _lock:
        _forget_parent_loops()
        loop = _bound_loop if _bound_loop is not None and _bound_loop.is_running() else _own_event_loop()
        if loop not in _senders:
            _senders[loop] = _Sender(loop)
        return _senders[loop]


def group_send(group: str, message: dict) -> None:
    """Queue `message` for the channel-layer group `group`; returns at once."""
    _sender().submit(group, message)


def wait_until_sent(timeout: float = EXIT_FLUSH_SECONDS) -> bool:
    """Wait for the messages queued so far in this process to be sent (tests, process exit)."""
    with _lock:
        _forget_parent_loops()
        senders = [sender for sender in _senders.values() if sender.loop.is_running()]
    return all(sender.idle.wait(timeout) for sender in senders)


def after_worker_task(sender, **kwargs) -> None:
    """django-q2's post_execute_in_worker: the task's events are sent before the worker takes the next one."""
    wait_until_sent()


atexit.register(wait_until_sent)
