"""Keeping an agent up while memoryhub is not: a circuit breaker for reads and an outbox for writes.

The framework adapters (Strands, LangGraph, OpenAI Agents) sit on an agent's path, where a memory service
must never be the reason the agent is slow or down. They share three rules, implemented here:

- **Reads fail fast and open.** A read gets a short timeout and no retry; when it fails for a reason that
  passes (refused connection, timeout, 5xx, 429) the adapter answers as if memory were empty, and the
  process-wide `CircuitBreaker` of that server skips every read for a while (5 s, doubling to 60 s), so
  only the first call of an outage pays for it.
- **Writes are never lost to an outage and never wait for one.** A write goes to an `Outbox`: a queue,
  in memory or in a durable local spool (SQLite), delivered in order by a background thread that retries
  with the breaker's pace and replays the spool after a restart. Every write it carries is idempotent on
  the server (messages by run id and sequence number, memories by content), so a replay stores nothing
  twice. While the breaker is closed, the adapter waits a moment for its write to be delivered, so a
  healthy server has it before the agent's turn ends.
- **What a person must fix fails loudly; nothing else does.** A wrong key (401), a missing scope (403), a
  missing store (404) or a URL that is not memoryhub raise at set-up; met later by the outbox they stop
  delivery for that store (with one error logged, checked again every few minutes) instead of being
  retried on every write.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryhub_client._transport import api_key_or_env, root_url
from memoryhub_client.client import MemoryHub
from memoryhub_client.errors import (
    APIError,
    AuthenticationFailed,
    ConnectionFailed,
    MemoryHubError,
    NotFound,
    PermissionDenied,
    RateLimited,
    ServerError,
)

logger = logging.getLogger("memoryhub_client.resilience")

#: Reads on an agent's path: the whole request, and the connection within it.
READ_TIMEOUT_SECONDS = 1.0
CONNECT_TIMEOUT_SECONDS = 0.5
#: The outbox's requests run in the background and may take longer.
DELIVERY_TIMEOUT_SECONDS = 10.0
#: After a failure the breaker skips calls this long, doubling after each failed probe.
FIRST_COOLDOWN_SECONDS = 5.0
MAX_COOLDOWN_SECONDS = 60.0
#: A store refused for a reason a person must fix is tried again this often.
REFUSED_RECHECK_SECONDS = 300.0
#: Writes held in memory when there is no spool; the oldest go first when it overflows.
MEMORY_QUEUE_CAPACITY = 10_000
#: At interpreter exit the outbox gets this long to deliver what it holds.
EXIT_FLUSH_SECONDS = 2.0


def is_transient(error: BaseException) -> bool:
    """An outage that passes by itself: the request may succeed later unchanged."""
    return isinstance(error, ConnectionFailed | ServerError | RateLimited)


def needs_a_person(error: BaseException) -> bool:
    """A refusal that repeats until someone changes a key, a scope, a store or a URL. (Another object missing, a
    memory or a session, concerns one write only.)"""
    if is_transient(error):
        return False
    if isinstance(error, NotFound):
        return error.code == "store_not_found" or wrong_url(error)
    return isinstance(error, AuthenticationFailed | PermissionDenied) or wrong_url(error)


def is_memoryhub_answer(error: BaseException) -> bool:
    """Whether an error answer came from memoryhub (its `{"error": {"code": ...}}` body) rather than from some
    other web server at the configured URL. Errors that are not answers (no connection) count as memoryhub's."""
    if not isinstance(error, APIError):
        return True
    return isinstance(error.body, dict) and isinstance(error.body.get("error"), dict)


def wrong_url(error: BaseException) -> bool:
    """The configured URL does not lead to memoryhub's API: another web server answered, or memoryhub said it
    has no such route (its missing objects have codes of their own, such as `store_not_found`)."""
    if not is_memoryhub_answer(error):
        return True
    return isinstance(error, NotFound) and error.code == "not_found"


def describe_refusal(error: BaseException, *, base_url: str, store: str) -> str:
    """A sentence telling a person what to fix."""
    if wrong_url(error):
        return (f"{base_url} is not memoryhub's API (it answered {error}): set MEMORYHUB_URL to the server's root "
                "URL, e.g. http://127.0.0.1:8000")
    if isinstance(error, AuthenticationFailed):
        return f"memoryhub at {base_url} refused the API key ({error}): check MEMORYHUB_API_KEY"
    if isinstance(error, PermissionDenied):
        return f"the API key may not use memoryhub store {store!r} ({error})"
    if isinstance(error, NotFound):
        return f"memoryhub store {store!r} does not exist at {base_url}, or this API key cannot see it ({error})"
    return str(error)


class CircuitBreaker:
    """Whether memoryhub is worth calling right now, shared by everything in the process that calls it.

    Closed, calls go through. After a transient failure it opens: calls are skipped until the cooldown has
    passed; then one probe (the outbox's next delivery, or a cheap request) decides: success closes it, failure
    opens it again for twice as long (up to `max_cooldown`).
    """

    def __init__(self, name: str, *, cooldown: float | None = None, max_cooldown: float | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.name = name
        self.first_cooldown = cooldown if cooldown is not None else FIRST_COOLDOWN_SECONDS
        self.max_cooldown = max_cooldown if max_cooldown is not None else MAX_COOLDOWN_SECONDS
        cooldown = self.first_cooldown
        self._clock = clock
        self._lock = threading.Lock()
        self._open_until: float | None = None
        self._cooldown = cooldown
        self.failures = 0
        self.last_error: BaseException | None = None

    @property
    def is_open(self) -> bool:
        return self._open_until is not None

    def allows_calls(self) -> bool:
        """Calls on an agent's path go through only while closed: probing is the outbox's job."""
        return self._open_until is None

    def probe_due(self) -> bool:
        with self._lock:
            return self._open_until is None or self._clock() >= self._open_until

    def seconds_until_probe(self) -> float:
        with self._lock:
            return 0.0 if self._open_until is None else max(0.0, self._open_until - self._clock())

    def record_success(self) -> None:
        with self._lock:
            was_open = self._open_until is not None
            self._open_until = None
            self._cooldown = self.first_cooldown
            self.failures = 0
            self.last_error = None
        if was_open:
            logger.warning("memoryhub at %s is reachable again; memory is back on", self.name)

    def record_failure(self, error: BaseException) -> None:
        with self._lock:
            was_open = self._open_until is not None
            if was_open:
                self._cooldown = min(self.max_cooldown, self._cooldown * 2)
            self._open_until = self._clock() + self._cooldown
            self.failures += 1
            self.last_error = error
            cooldown = self._cooldown
        if not was_open:
            logger.warning("memoryhub at %s is unavailable (%s); agents run without memory and keep what they "
                           "would save until it is back (next try in %.0f s)", self.name, error, cooldown)


_breakers: dict[str, CircuitBreaker] = {}
_breakers_lock = threading.Lock()


def breaker_for(base_url: str) -> CircuitBreaker:
    """The process's breaker for one memoryhub server (by its API URL)."""
    with _breakers_lock:
        breaker = _breakers.get(base_url)
        if breaker is None:
            breaker = _breakers[base_url] = CircuitBreaker(base_url)
        return breaker


# --- deliveries --------------------------------------------------------------------------------------------

Delivery = Callable[[MemoryHub, dict[str, Any]], Any]
_deliveries: dict[str, Delivery] = {}


def register_delivery(operation: str, deliver: Delivery) -> None:
    """Teach outboxes an operation: `deliver(client, payload)` must be idempotent on the server, since a
    write may be delivered again after an answer was lost or the process restarted."""
    _deliveries[operation] = deliver


def _add_messages(client: MemoryHub, payload: dict[str, Any]) -> Any:
    return client.sessions.add_messages(
        payload["store"], payload["session_id"], user_id=payload["user_id"], agent_id=payload.get("agent_id") or "",
        run_id=payload["run_id"], messages=payload["messages"], metadata=payload.get("metadata"),
    )


def _add_memory(client: MemoryHub, payload: dict[str, Any]) -> Any:
    # The server keeps one memory per user and content: delivering it again answers `duplicate`.
    return client.memories.add(payload["store"], **payload["memory"])


register_delivery("add_messages", _add_messages)
register_delivery("add_memory", _add_memory)


# --- queues ------------------------------------------------------------------------------------------------

@dataclass
class Entry:
    id: int
    operation: str
    payload: dict[str, Any]

    @property
    def store(self) -> str:
        return str(self.payload.get("store", ""))


class _MemoryQueue:
    """Writes kept in process memory: lost if the process ends before memoryhub is back."""

    durable = False

    def __init__(self, capacity: int = MEMORY_QUEUE_CAPACITY):
        self._entries: collections.OrderedDict[int, Entry] = collections.OrderedDict()
        self._next_id = 1
        self._capacity = capacity
        self.dropped = 0

    def put(self, operation: str, payload: dict[str, Any]) -> int:
        entry_id = self._next_id
        self._next_id += 1
        self._entries[entry_id] = Entry(entry_id, operation, payload)
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                logger.error("memoryhub outbox is full (%d writes): dropped the oldest (%d so far); pass spool= "
                             "to keep writes on disk", self._capacity, self.dropped)
        return entry_id

    def oldest(self, limit: int) -> list[Entry]:
        return list(self._entries.values())[:limit]

    def remove(self, entry_id: int) -> None:
        self._entries.pop(entry_id, None)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, entry_id: int) -> bool:
        return entry_id in self._entries


class _SpoolQueue:
    """Writes kept in a SQLite file until delivered: they survive the process and are replayed by the next one.

    Every write is committed before `put` returns. Several processes may share a file: an entry two of them
    deliver is stored once by the server, and is deleted by whichever finishes first.
    """

    durable = True

    def __init__(self, path: str | Path):
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, operation TEXT NOT NULL, "
                "payload TEXT NOT NULL, created_at REAL NOT NULL)"
            )
        self.dropped = 0

    def put(self, operation: str, payload: dict[str, Any]) -> int:
        data = json.dumps(payload, ensure_ascii=False)
        with self._lock:
            cursor = self._db.execute("INSERT INTO outbox (operation, payload, created_at) VALUES (?, ?, ?)",
                                      (operation, data, time.time()))
            return int(cursor.lastrowid)

    def oldest(self, limit: int) -> list[Entry]:
        with self._lock:
            rows = self._db.execute("SELECT id, operation, payload FROM outbox ORDER BY id LIMIT ?", (limit,)).fetchall()
        return [Entry(row[0], row[1], json.loads(row[2])) for row in rows]

    def remove(self, entry_id: int) -> None:
        with self._lock:
            self._db.execute("DELETE FROM outbox WHERE id = ?", (entry_id,))

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM outbox").fetchone()[0])

    def __contains__(self, entry_id: int) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM outbox WHERE id = ?", (entry_id,)).fetchone() is not None

    def close(self) -> None:
        with self._lock:
            self._db.close()


# --- the outbox --------------------------------------------------------------------------------------------

class Outbox:
    """Delivers writes to one memoryhub server, in order, from a background thread.

    Use `shared_outbox()`: one outbox (and one thread) per server, API key and spool in a process, however
    many agents are built.
    """

    def __init__(self, client: MemoryHub, breaker: CircuitBreaker, *, spool: str | Path | None = None):
        self.client = client
        self.breaker = breaker
        self._queue: _MemoryQueue | _SpoolQueue = _SpoolQueue(spool) if spool is not None else _MemoryQueue()
        self._condition = threading.Condition()
        # Stores whose writes were refused for a reason a person must fix: store -> when to try again.
        self._refused: dict[str, float] = {}
        # Async writers waiting for their write: ticket -> callbacks taking whether it was delivered.
        self._waiters: dict[int, list[Callable[[bool], None]]] = collections.defaultdict(list)
        self._stopped = False
        self._undeliverable: set[str] = set()
        self.delivered = 0
        self._thread = threading.Thread(target=self._run, name=f"memoryhub-outbox {breaker.name}", daemon=True)
        self._thread.start()

    @property
    def durable(self) -> bool:
        return self._queue.durable

    def submit(self, operation: str, payload: dict[str, Any]) -> int:
        """Queue a write (stored on disk before this returns when there is a spool); returns its ticket."""
        if operation not in _deliveries:
            raise ValueError(f"the outbox cannot deliver {operation!r}")
        with self._condition:
            entry_id = self._queue.put(operation, payload)
            self._condition.notify_all()
        return entry_id

    def nudge(self) -> None:
        """Look at the breaker again now (an agent's call just opened it: the outbox is the one that probes)."""
        with self._condition:
            self._condition.notify_all()

    def pending(self) -> int:
        with self._condition:
            return len(self._queue)

    def is_pending(self, ticket: int) -> bool:
        with self._condition:
            return ticket in self._queue

    def wait(self, ticket: int, timeout: float) -> bool:
        """Wait up to `timeout` seconds for one write to be delivered (or given up), but no longer once a delivery
        has failed: True if it is no longer queued."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while ticket in self._queue:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self.breaker.allows_calls():
                    return False
                self._condition.wait(remaining)
            return True

    async def wait_async(self, ticket: int, timeout: float) -> bool:
        """`wait` for an event loop, without a thread: the outbox wakes the loop when the write is delivered."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[bool] = loop.create_future()

        def wake(delivered: bool) -> None:
            if not done.done():
                done.set_result(delivered)

        def wake_from_thread(delivered: bool) -> None:
            try:
                loop.call_soon_threadsafe(wake, delivered)
            except RuntimeError:  # the loop has closed; nobody is waiting any more
                pass

        with self._condition:
            if ticket not in self._queue:
                return True
            if not self.breaker.allows_calls():
                return False
            self._waiters[ticket].append(wake_from_thread)
        try:
            return await asyncio.wait_for(done, timeout)
        except TimeoutError:
            return False
        finally:
            with self._condition:
                callbacks = self._waiters.get(ticket)
                if callbacks and wake_from_thread in callbacks:
                    callbacks.remove(wake_from_thread)
                    if not callbacks:
                        del self._waiters[ticket]

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait up to `timeout` seconds until every queued write is delivered; True if none is left."""
        deadline = time.monotonic() + timeout
        with self._condition:
            self._condition.notify_all()
            while len(self._queue):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._condition.wait(min(remaining, 0.5))
            return True

    def close(self, timeout: float = EXIT_FLUSH_SECONDS) -> None:
        """Deliver what can be delivered within `timeout`, then stop; a spool keeps the rest for the next run."""
        if self._stopped:
            return
        delivered = self.flush(timeout)
        with self._condition:
            self._stopped = True
            self._condition.notify_all()
        self._thread.join(timeout=1.0)
        if not delivered:
            left = self.pending()
            if self.durable:
                logger.warning("%d write(s) for memoryhub at %s stay in the spool %s; they are sent when a process "
                               "uses it again", left, self.breaker.name, self._queue.path)
            else:
                logger.error("%d write(s) for memoryhub at %s were never delivered and are lost; pass spool= to "
                             "keep them on disk across restarts", left, self.breaker.name)

    # --- the delivery thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._condition:
                if self._stopped:
                    return
                if not self.breaker.probe_due():
                    self._condition.wait(max(0.05, self.breaker.seconds_until_probe()))
                    continue
                entry = self._next_entry()
                if entry is None and not self.breaker.is_open:
                    self._condition.wait(self._idle_wait())
                    continue
            if entry is None:
                # Nothing to deliver, but agents that only read wait for someone to find memoryhub back.
                self._probe()
            else:
                self._deliver(entry)

    def _next_entry(self) -> Entry | None:
        now = time.monotonic()
        for entry in self._queue.oldest(200):
            if entry.operation not in _deliveries:
                self._warn_undeliverable(entry.operation)
                continue
            retry_at = self._refused.get(entry.store) or self._refused.get("*")
            if retry_at is None or now >= retry_at:
                return entry
        return None

    def _warn_undeliverable(self, operation: str) -> None:
        """A spool written by a process that knew an operation this one does not (an adapter not imported):
        its writes are kept for a process that can deliver them."""
        if operation not in self._undeliverable:
            self._undeliverable.add(operation)
            logger.warning("the memoryhub spool holds %r writes this process cannot deliver (is the adapter that "
                           "wrote them imported?); they are kept", operation)

    def _idle_wait(self) -> float:
        if self._refused:
            return max(0.05, min(self._refused.values()) - time.monotonic())
        return 30.0

    def _probe(self) -> None:
        try:
            self.client.key_info()
        except MemoryHubError as error:
            if is_transient(error):
                self.breaker.record_failure(error)
                return
        self.breaker.record_success()  # it answered: up, whatever it thinks of the key

    def _deliver(self, entry: Entry) -> None:
        try:
            _deliveries[entry.operation](self.client, entry.payload)
        except MemoryHubError as error:
            if is_transient(error):
                self.breaker.record_failure(error)
                self._wake_writers(delivered=False)
                return
            if needs_a_person(error):
                self._refuse(entry, error)
                return
            # Refused for good (invalid content, a terminated session): delivering it again would be refused
            # again, and would hold up every write queued behind it.
            logger.error("memoryhub refused a %s write for store %r and it is dropped: %s", entry.operation,
                         entry.store, error)
            self._done(entry)
        except Exception:  # noqa: BLE001 - a bad entry must not stop the thread that delivers all others
            logger.exception("memoryhub outbox could not deliver a %s write; it is dropped", entry.operation)
            self._done(entry)
        else:
            self.breaker.record_success()
            self.delivered += 1
            self._refused.pop(entry.store, None)
            self._refused.pop("*", None)
            self._done(entry)

    def _refuse(self, entry: Entry, error: MemoryHubError) -> None:
        key = "*" if isinstance(error, AuthenticationFailed) or wrong_url(error) else entry.store
        if key not in self._refused:
            logger.error("%s; writes for it are kept and tried again every %.0f s",
                         describe_refusal(error, base_url=self.breaker.name, store=entry.store),
                         REFUSED_RECHECK_SECONDS)
        self._refused[key] = time.monotonic() + REFUSED_RECHECK_SECONDS
        # The server answered: it is up, whatever it thinks of this write.
        self.breaker.record_success()

    def _done(self, entry: Entry) -> None:
        with self._condition:
            self._queue.remove(entry.id)
            callbacks = self._waiters.pop(entry.id, [])
            self._condition.notify_all()
        for wake in callbacks:
            wake(True)

    def _wake_writers(self, *, delivered: bool) -> None:
        """After a failed delivery no writer should go on waiting: the breaker is open, the agent moves on."""
        with self._condition:
            callbacks = [wake for waiting in self._waiters.values() for wake in waiting]
            self._waiters.clear()
            self._condition.notify_all()
        for wake in callbacks:
            wake(delivered)


_outboxes: dict[tuple[str, str, str], Outbox] = {}
_outboxes_lock = threading.Lock()


def _forget_in_child() -> None:
    """A forked child has none of its parent's threads: its outboxes would never deliver. It starts afresh (what
    the parent had queued stays the parent's to deliver)."""
    global _outboxes_lock, _breakers_lock
    _outboxes_lock, _breakers_lock = threading.Lock(), threading.Lock()
    _outboxes.clear()
    _breakers.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def shared_outbox(base_url: str | None = None, api_key: str | None = None, *, spool: str | Path | None = None,
                  client: MemoryHub | None = None) -> Outbox:
    """The process's outbox for one server, API key and spool (created on first use, closed at exit)."""
    spool_key = str(Path(spool).expanduser().resolve()) if spool is not None else ""
    if client is not None:
        # The caller's own client (its transport, its settings) delivers: one outbox per client object.
        url, identity = client.base_url, f"client:{id(client)}"
    else:
        url, identity = root_url(base_url), f"key:{api_key_or_env(api_key)}"
    with _outboxes_lock:
        outbox = _outboxes.get((url, identity, spool_key))
        if outbox is None:
            delivery_client = client or MemoryHub(
                base_url=url, api_key=identity.removeprefix("key:"), timeout=DELIVERY_TIMEOUT_SECONDS,
                connect_timeout=CONNECT_TIMEOUT_SECONDS * 4, max_retries=0,
            )
            outbox = Outbox(delivery_client, breaker_for(url), spool=spool)
            _outboxes[(url, identity, spool_key)] = outbox
        return outbox


@atexit.register
def close_outboxes(timeout: float = EXIT_FLUSH_SECONDS) -> None:
    """Deliver what the process's outboxes hold (within `timeout` each) and stop them; runs at exit."""
    with _outboxes_lock:
        outboxes = list(_outboxes.values())
        _outboxes.clear()
    for outbox in outboxes:
        try:
            outbox.close(timeout)
        except Exception:  # noqa: BLE001 - exiting anyway
            logger.exception("memoryhub outbox failed to close")


def reset(timeout: float = EXIT_FLUSH_SECONDS) -> None:
    """Close every outbox and forget every breaker: a fresh start, as in a new process (for tests)."""
    close_outboxes(timeout)
    with _breakers_lock:
        _breakers.clear()


class Guard:
    """Reads and writes for an adapter, following the rules above: one per adapter instance.

    Args:
        base_url, api_key: the server (default: MEMORYHUB_URL, MEMORYHUB_API_KEY).
        client: a `MemoryHub` to use instead; its timeout then bounds the agent's wait, so keep it short.
        timeout: the read budget on the agent's path, in seconds.
        spool: a file where writes wait until delivered, surviving restarts (default: in memory only).
    """

    def __init__(self, *, base_url: str | None = None, api_key: str | None = None, client: MemoryHub | None = None,
                 timeout: float = READ_TIMEOUT_SECONDS, spool: str | Path | None = None):
        self.timeout = timeout
        self.owns_client = client is None
        self.client = client or MemoryHub(base_url=base_url, api_key=api_key, timeout=timeout,
                                          connect_timeout=min(timeout, CONNECT_TIMEOUT_SECONDS), max_retries=0)
        self._outbox_args = (base_url, api_key, spool, None if self.owns_client else client)
        self.outbox  # noqa: B018 - started now, so that a spool left by an earlier run is replayed at once

    # Looked up on each use rather than kept: after a fork the child gets outboxes (and threads) of its own.
    @property
    def breaker(self) -> CircuitBreaker:
        return breaker_for(self.client.base_url)

    @property
    def outbox(self) -> Outbox:
        base_url, api_key, spool, client = self._outbox_args
        return shared_outbox(base_url, api_key, spool=spool, client=client)

    @property
    def available(self) -> bool:
        return self.breaker.allows_calls()

    def read(self, call: Callable[[], Any], *, default: Any, what: str) -> Any:
        """`call()`, or `default` when memoryhub is down (or was, moments ago). What a person must fix raises."""
        if not self.breaker.allows_calls():
            logger.debug("memoryhub unavailable; %s skipped", what)
            return default
        try:
            result = call()
        except MemoryHubError as error:
            if is_transient(error):
                self.record_failure(error)
                return default
            raise
        self.breaker.record_success()
        return result

    async def read_async(self, call: Callable[[], Any], *, default: Any, what: str) -> Any:
        """`read` from an event loop (the call runs in a worker thread)."""
        if not self.breaker.allows_calls():
            logger.debug("memoryhub unavailable; %s skipped", what)
            return default
        return await asyncio.to_thread(self.read, call, default=default, what=what)

    def record_failure(self, error: BaseException) -> None:
        """An outage met on the agent's path: open the breaker, and have the outbox probe for the way back."""
        self.breaker.record_failure(error)
        self.outbox.nudge()

    def write(self, operation: str, payload: dict[str, Any]) -> bool:
        """Queue a write and, while memoryhub is up, wait for it up to the read budget. True when delivered."""
        ticket = self.outbox.submit(operation, payload)
        if not self.breaker.allows_calls():
            return False
        return self.outbox.wait(ticket, self.timeout)

    async def write_async(self, operation: str, payload: dict[str, Any]) -> bool:
        """`write` from an event loop. The write is queued before the first await, so a loop that ends (or a task
        that is cancelled) while it waits loses nothing: the outbox delivers it anyway."""
        ticket = self.outbox.submit(operation, payload)
        if not self.breaker.allows_calls():
            return False
        try:
            return await self.outbox.wait_async(ticket, self.timeout)
        except asyncio.CancelledError:
            # The write is safe in the outbox. Ending normally rather than cancelled matters to callers that
            # chain their saves (Strands awaits the previous save before the next): a cancelled save would
            # cancel every later one.
            return False

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every write queued so far is delivered (or `timeout`); True if none is left."""
        return self.outbox.flush(timeout)

    def close(self) -> None:
        if self.owns_client:
            self.client.close()


__all__ = [
    "CircuitBreaker",
    "Guard",
    "Outbox",
    "breaker_for",
    "close_outboxes",
    "describe_refusal",
    "is_memoryhub_answer",
    "is_transient",
    "needs_a_person",
    "register_delivery",
    "reset",
    "shared_outbox",
    "wrong_url",
]
