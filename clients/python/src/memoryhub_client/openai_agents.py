"""memoryhub as an OpenAI Agents SDK session (openai-agents 0.24, the ``agents.memory.Session`` protocol).

    from agents import Agent, Runner
    from memoryhub_client.openai_agents import MemoryHubSession

    session = MemoryHubSession("conversation-42", store="support", user_id="alice", spool="var/memoryhub.spool")
    result = await Runner.run(agent, "I'm allergic to latex", session=session)

The conversation history lives in a memoryhub session: every item the Runner saves is one message of it, so
memoryhub also extracts what the user says into long-term memory, on the server, in the background.

**Items and messages.** A message item keeps its role (``developer`` becomes ``system``) and its text; a
function call is an assistant message with a ``toolUse`` block, its output a ``tool`` message with a
``toolResult`` block, a reasoning item an assistant message with a ``reasoningContent`` block. The item
itself, exactly as given, is kept in the message's metadata (``{"openai_agents": {"item": ...}}``) and is
what ``get_items`` returns. An item memoryhub cannot keep whole (over the server's 16 KB metadata limit, or
with text PostgreSQL refuses) is kept shortened, with a warning: inline images and files become a text
note, the longest strings are cut.

**Pop and clear.** memoryhub's transcript is append-only (it has no API to delete one message), so
``pop_item`` appends a marker naming the popped message and ``clear_session`` a marker that hides every
earlier one; ``get_items`` honours both. Both markers have no text, so extraction ignores them. Memories
already extracted stay: long-term memory outlives the transcript. To delete the transcript itself, delete
the memoryhub session (``MemoryHub().sessions.delete(store, session_id)``).

**When memoryhub is down** the agent runs on (see ``memoryhub_client.resilience``): a read gets ``timeout``
seconds and is then skipped while the circuit breaker is open, and ``get_items`` answers with what this
process knows (the items as it last read them, with those it added or popped since, whichever session object
did it); writes go through an outbox that delivers them in order, on disk with ``spool=`` (surviving
restarts), each stored once however often it is delivered. What a person must fix (a wrong key, a key that
cannot write, a missing store, a URL that is not memoryhub, a session of another user) raises ``ValueError``
at the session object's first call.
"""

from __future__ import annotations

import collections
import copy
import logging
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from agents.items import TResponseInputItem
from agents.memory import SessionSettings
from agents.memory.session_settings import coerce_session_settings, resolve_session_limit

from memoryhub_client._openai_agents_items import (
    MAX_MESSAGE_CHARS,
    MAX_MESSAGES_PER_REQUEST,
    MAX_METADATA_BYTES,
    METADATA_KEY,
    PAGE_SIZE,
    Record,
    history_view,
    item_message,
    marker_message,
    plain,
    record_of,
    same_message,
    target_of,
)
from memoryhub_client.client import MemoryHub
from memoryhub_client.errors import MemoryHubError, NotFound
from memoryhub_client.resilience import (
    READ_TIMEOUT_SECONDS,
    REFUSED_RECHECK_SECONDS,
    Guard,
    describe_refusal,
)

logger = logging.getLogger("memoryhub_client.openai_agents")


class _Transcript:
    """What this process knows of one memoryhub session: its messages as last read, and the writes of this
    process not yet read back. Shared by the MemoryHubSessions of that session (one outbox: same server, key
    and spool), so one made per request still knows, while memoryhub is down, what an earlier one wrote."""

    def __init__(self, outbox: Any) -> None:
        self.outbox = outbox
        self.lock = threading.Lock()  # the state below
        self.reading = threading.Lock()  # one read at a time: it moves the resume point
        # Each message carries (run id, seq). The run id is this transcript's own, so its seqs can start at 0
        # without reading the session first (which an outage would forbid) and still never meet another
        # writer's: a message delivered twice is stored once, and no two messages are taken for one.
        self.run_id = uuid.uuid4().hex
        self.next_seq = 0
        # The messages as last read, and where to read on: the cursor of the last page, and that page's first
        # index (the page is read again, to see that it is still there, and what follows it).
        self.server: list[Record] = []
        self.resume_cursor: str | None = None
        self.resume_index = 0
        self.local: list[Record] = []  # this process's writes not yet read back, in the order written

    def view(self) -> list[tuple[tuple, dict]]:
        with self.lock:
            return history_view(self.server + self.local)


_transcripts: collections.OrderedDict[tuple, _Transcript] = collections.OrderedDict()
_transcripts_lock = threading.Lock()
#: Sessions whose transcripts a process keeps; the least recently used go first.
MAX_TRANSCRIPTS = 256


def _transcript_for(outbox: Any, store: str, session_id: str) -> _Transcript:
    key = (outbox, store, session_id)
    with _transcripts_lock:
        transcript = _transcripts.pop(key, None) or _Transcript(outbox)
        _transcripts[key] = transcript
        while len(_transcripts) > MAX_TRANSCRIPTS:
            _transcripts.popitem(last=False)
        return transcript


def _forget_in_child() -> None:
    """A forked child gets outboxes of its own (see resilience), so transcripts of its own too."""
    global _transcripts_lock
    _transcripts_lock = threading.Lock()
    _transcripts.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


class MemoryHubSession:
    """An OpenAI Agents SDK ``Session`` whose history is a memoryhub session's messages.

    Args:
        session_id: The memoryhub session (created by the first item added); at most 255 characters, no "/".
        store: The memoryhub store's name.
        user_id: Whose conversation it is: memories extracted from it are this user's.
        agent_id: Recorded on the session.
        client: A ``MemoryHub`` to use (its timeout then bounds the agent's wait: keep it short); default: one
            built from ``base_url`` / ``api_key`` or ``MEMORYHUB_URL`` / ``MEMORYHUB_API_KEY``.
        timeout: Seconds a read may take on the agent's path before the session answers from what it knows.
        spool: A file where items wait until memoryhub has them, surviving restarts (SQLite). Default: process
            memory only.
        session_settings: The SDK's settings (``limit``: how many of the latest items a run is given).
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        *,
        store: str,
        user_id: str,
        agent_id: str | None = None,
        client: MemoryHub | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = READ_TIMEOUT_SECONDS,
        spool: str | Path | None = None,
        session_settings: SessionSettings | dict[str, Any] | None = None,
    ) -> None:
        if not session_id or len(session_id) > 255 or "/" in session_id:
            raise ValueError("MemoryHubSession needs a session_id of 1 to 255 characters without '/'")
        if not store or not user_id:
            raise ValueError("MemoryHubSession needs a store name and a user_id")
        self.session_id = session_id
        self.store = store
        self.user_id = user_id
        self.agent_id = agent_id
        self.session_settings = (
            coerce_session_settings(session_settings) if session_settings is not None else SessionSettings()
        )
        self._guard = Guard(base_url=base_url, api_key=api_key, client=client, timeout=timeout, spool=spool)
        self._client = self._guard.client
        self._started = False
        self._checked = False
        self._refused_until = 0.0

    # --- the Session protocol ---------------------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The history, oldest first; with ``limit`` (or ``session_settings.limit``) only the latest items.

        While memoryhub is unavailable: the items as this process last read them, with its writes since.
        """
        await self._first_call()
        view = await self._read()
        limit = resolve_session_limit(limit, self.session_settings)
        if limit is not None and limit >= 0:  # a negative limit means all, as with SQLiteSession
            view = view[-limit:] if limit else []
        return [copy.deepcopy(item) for _, item in view]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append items. They are queued (on disk with a spool) before anything is awaited; while memoryhub is
        up this waits up to ``timeout`` seconds for their delivery, while it is down not at all."""
        ticket = self._queue([item_message(plain(item)) for item in items])
        await self._first_call()
        await self._delivered(ticket)

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the latest item (None if there is none): a marker hides it from then on."""
        await self._first_call()
        view = await self._read()
        if not view:
            return None
        key, item = view[-1]
        await self._delivered(self._queue([marker_message({"pop": target_of(key)})]))
        return copy.deepcopy(item)

    async def clear_session(self) -> None:
        """Hide every item so far: the history starts again empty. The transcript and the memories extracted
        from it stay in memoryhub."""
        ticket = self._queue([marker_message({"clear": True})])
        await self._first_call()
        await self._delivered(ticket)

    # --- beyond the protocol ----------------------------------------------------------------------------

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until memoryhub has every item queued so far (or ``timeout``); True if it has. Blocking."""
        return self._guard.flush(timeout)

    def close(self) -> None:
        self._guard.close()

    def __repr__(self) -> str:
        return f"MemoryHubSession({self.session_id!r}, store={self.store!r}, user_id={self.user_id!r})"

    @property
    def _transcript(self) -> _Transcript:
        # Looked up on each use, as the guard's outbox is: after a fork the outbox is a new one, and a
        # transcript's unread writes are those of its outbox.
        return _transcript_for(self._guard.outbox, self.store, self.session_id)

    # --- reading ----------------------------------------------------------------------------------------

    async def _read(self) -> list[tuple[tuple, dict]]:
        """The items as memoryhub has them, with this process's writes not yet delivered; while memoryhub is
        unavailable (or refuses), the items as this process last read them, with its writes since."""
        if time.monotonic() >= self._refused_until:
            try:
                view = await self._guard.read_async(self._fetch, default=None, what="session items")
            except (MemoryHubError, ValueError) as error:
                self._refuse(error)
            else:
                if view is not None:
                    return view
        return self._transcript.view()

    def _fetch(self) -> list[tuple[tuple, dict]]:
        """Read what is new in the transcript, then forget the writes it shows delivered."""
        transcript = self._transcript
        with transcript.reading:
            if not self._checked:
                self._check()
            with transcript.lock:
                written = list(transcript.local)
            # Before the read: a write no longer queued now is in what the read returns, or was refused.
            settled = {record.key for record in written if not transcript.outbox.is_pending(record.ticket)}
            records, cursor, index = self._read_on(transcript.server, transcript.resume_cursor,
                                                   transcript.resume_index)
            with transcript.lock:
                transcript.server, transcript.resume_cursor, transcript.resume_index = records, cursor, index
                on_server = {record.key for record in records}
                transcript.local = [record for record in transcript.local
                                    if record.key not in on_server and record.key not in settled]
                return history_view(transcript.server + transcript.local)

    def _read_on(self, records: list[Record], cursor: str | None,
                 index: int) -> tuple[list[Record], str | None, int]:
        """The messages read before `index`, then those from the page at `cursor` on; and the last page's
        cursor and first index."""
        page = self._page(cursor)
        if page is not None and index < len(records) and not (
                page.items and same_message(page.items[0], records[index])):
            # The session was deleted (and perhaps begun again) since the last read: read it from the start.
            cursor, index = None, 0
            page = self._page(None)
        records = records[:index]
        while page is not None:
            records.extend(record_of(message) for message in page.items)
            if not page.next_cursor:
                return records, cursor, index
            cursor, index = page.next_cursor, len(records)
            page = self._page(cursor)
        return [], None, 0  # no such session (yet, or any more)

    def _page(self, cursor: str | None) -> Any:
        try:
            return self._client.sessions.messages(self.store, self.session_id, cursor=cursor, page_size=PAGE_SIZE)
        except NotFound as error:
            if error.code == "session_not_found":
                return None
            raise

    # --- writing ----------------------------------------------------------------------------------------

    def _queue(self, messages: list[tuple[dict, Record]]) -> int | None:
        """Hand messages to the outbox, in order; the ticket of the last one (None if there are none)."""
        transcript, ticket = self._transcript, None
        with transcript.lock:
            for message, record in messages:
                message["seq"] = transcript.next_seq
                record.key = ("run", transcript.run_id, transcript.next_seq)
                transcript.next_seq += 1
            for start in range(0, len(messages), MAX_MESSAGES_PER_REQUEST):
                chunk = messages[start:start + MAX_MESSAGES_PER_REQUEST]
                payload = {"store": self.store, "session_id": self.session_id, "user_id": self.user_id,
                           "agent_id": self.agent_id or "", "run_id": transcript.run_id,
                           "messages": [message for message, _ in chunk]}
                ticket = transcript.outbox.submit("add_messages", payload)
                for _, record in chunk:
                    record.ticket = ticket
                    transcript.local.append(record)
        return ticket

    async def _delivered(self, ticket: int | None) -> bool:
        """Wait a moment, while memoryhub is up, for a write to be delivered (and so every one before it: the
        outbox delivers in order)."""
        if ticket is None or not self._guard.available or time.monotonic() < self._refused_until:
            return False
        return await self._guard.outbox.wait_async(ticket, self._guard.timeout)

    # --- set-up checks ----------------------------------------------------------------------------------

    async def _first_call(self) -> None:
        """On the session's first call, raise what a person must fix. If memoryhub is unavailable then, the
        check waits for the first read that reaches it, and a problem it finds is logged, not raised."""
        if self._started:
            return
        self._started = True
        try:
            await self._guard.read_async(self._check, default=None, what="session set-up check")
        except MemoryHubError as error:
            raise ValueError(describe_refusal(error, base_url=self._client.base_url, store=self.store)) from error

    def _check(self) -> None:
        """What a person must fix: the key, its scope, the store, the session's owner and status. Raises
        ValueError for a problem, the client's error for an outage or a refusal."""
        # The key first: its answer also tells a wrong URL (no such route) from a missing store.
        key = self._client.key_info()
        self._client.stores.get(self.store)
        if not key.can_write:
            raise ValueError(f"API key {key.name!r} has scopes {', '.join(key.scopes)}: a MemoryHubSession needs "
                             "'write' to save the conversation")
        try:
            session = self._client.sessions.get(self.store, self.session_id)
        except NotFound as error:
            if error.code != "session_not_found":
                raise
        else:
            if session.user_id != self.user_id:
                raise ValueError(f"memoryhub session {self.session_id!r} belongs to user {session.user_id!r}, not "
                                 f"{self.user_id!r}: its items would be refused; use another session_id")
            if session.status == "terminated":
                raise ValueError(f"memoryhub session {self.session_id!r} is terminated: it takes no more items; "
                                 "use another session_id")
        self._checked = True

    def _refuse(self, error: Exception) -> None:
        """A refusal met after the first call (a key revoked, a store deleted): log it once, and answer from
        what this process knows for a while rather than ask again on every call."""
        message = error if isinstance(error, ValueError) else describe_refusal(
            error, base_url=self._client.base_url, store=self.store)
        logger.error("%s; session %r answers from what this process knows for %.0f s", message, self.session_id,
                     REFUSED_RECHECK_SECONDS)
        self._refused_until = time.monotonic() + REFUSED_RECHECK_SECONDS


# --- records and views -------------------------------------------------------------------------------------


__all__ = ["MAX_MESSAGE_CHARS", "MAX_METADATA_BYTES", "METADATA_KEY", "MemoryHubSession"]
