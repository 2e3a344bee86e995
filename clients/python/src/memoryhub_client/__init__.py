"""Python client of memoryhub, the self-hosted memory service for AI agents.

    from memoryhub_client import MemoryHub

    with MemoryHub() as hub:  # MEMORYHUB_URL, MEMORYHUB_API_KEY
        hub.memories.add("support", user_id="alice", content="Alice is allergic to peanuts")
        hits = hub.search("support", "What can't she eat?", user_id="alice")

The Strands Agents memory store lives in `memoryhub_client.strands` (install the `strands` extra); it is
not imported here, so the client itself needs nothing but httpx.
"""

from memoryhub_client._version import __version__
from memoryhub_client.async_client import AsyncMemoryHub
from memoryhub_client.client import MemoryHub
from memoryhub_client.errors import (
    APIError,
    AuthenticationFailed,
    ConfigurationError,
    Conflict,
    ConnectionFailed,
    InvalidRequest,
    MemoryHubError,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    ServerError,
    ValidationFailed,
)
from memoryhub_client.models import (
    ApiKeyInfo,
    Checkpoint,
    ContextEntry,
    ContextResult,
    FlushResult,
    IngestResult,
    Job,
    LifecycleResult,
    Memory,
    MemoryChange,
    MemoryWriteResult,
    Message,
    Page,
    Revision,
    ScratchpadAppendResult,
    ScratchpadEntry,
    SearchHit,
    Session,
    SessionEvent,
    Store,
    TaskState,
    Webhook,
    WebhookDelivery,
    WorkingMemoryItem,
)

__all__ = [
    "ApiKeyInfo",
    "APIError",
    "AsyncMemoryHub",
    "AuthenticationFailed",
    "Checkpoint",
    "ConfigurationError",
    "Conflict",
    "ConnectionFailed",
    "InvalidRequest",
    "ContextEntry",
    "ContextResult",
    "FlushResult",
    "IngestResult",
    "Job",
    "LifecycleResult",
    "Memory",
    "MemoryChange",
    "MemoryHub",
    "MemoryHubError",
    "MemoryWriteResult",
    "Message",
    "NotFound",
    "Page",
    "PayloadTooLarge",
    "PermissionDenied",
    "RateLimited",
    "Revision",
    "ScratchpadAppendResult",
    "ScratchpadEntry",
    "SearchHit",
    "ServerError",
    "Session",
    "SessionEvent",
    "Store",
    "TaskState",
    "ValidationFailed",
    "Webhook",
    "WebhookDelivery",
    "WorkingMemoryItem",
    "__version__",
]
