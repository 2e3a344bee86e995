"""Tools over long-term memories: the stores, adding (as written or by extraction), search, list, get, change,
delete, and erasing a user. Each is the REST operation of the same name in apps.memories.api and
apps.conversations.api, calling the same services and selectors and answering in the same shapes."""

import json

from rest_framework import serializers

from apps.conversations import services as conversation_services
from apps.conversations.api.sessions import ingest_answer
from apps.conversations.serializers.sessions import MessageInput, UserEraseOutput
from apps.core.fields import CleanCharField, IdentifierField, MetadataField
from apps.core.pagination import NewestFirstCursorPagination
from apps.mcp_server.pagination import PageArguments, page_of
from apps.mcp_server.tools.base import NoArguments, StoreArguments, ToolCall, tool
from apps.memories import selectors, services
from apps.memories.api import ADMIN, READ, WRITE, search_query_from
from apps.memories.search import memory_search
from apps.memories.serializers import (
    MemoryCreateInput,
    MemoryDeleteQuery,
    MemoryListQuery,
    MemoryOutput,
    MemoryPatchInput,
    MemoryWriteOutput,
    SearchInput,
    SearchOutput,
)

# --- Arguments --------------------------------------------------------------------------------------


class MemoryArguments(StoreArguments):
    memory_id = serializers.UUIDField(help_text="The memory's id, as search_memories or get_memories show it.")


# Given with infer=true, these would be silently dropped: extraction decides them.
STORED_AS_WRITTEN_ONLY = ("memory_type", "tags", "importance", "expires_at")


class AddMemoryArguments(StoreArguments, MemoryCreateInput):
    """MemoryCreateInput's fields (so a bad value is refused in the REST API's words), less those an agent
    has no business setting (status, source, provenance, validity), plus what extraction needs."""

    content = CleanCharField(required=False, help_text="The text to remember (or, with infer=true, one user message).")
    messages = MessageInput(
        many=True, required=False, allow_empty=False,
        help_text="With infer=true: conversation turns, each {role: user|assistant|system|tool, content}.",
    )
    infer = serializers.BooleanField(
        default=False,
        help_text="false: store `content` as one memory, as written. true: send the text or messages to the "
                  "session for background extraction of durable facts.",
    )
    status = source = provenance = valid_from = valid_to = confidence = None
    descriptions = {
        "session_id": "The conversation: required with infer=true (reuse one id for the whole conversation).",
        "metadata": "Your own keys and values: the memory's (infer=false) or the session's (infer=true).",
        "memory_type": "infer=false only: fact, preference, episode (what happened) or procedure (how to do it).",
        "tags": "infer=false only: short labels to filter on later.",
        "importance": "infer=false only: 0 to 1.",
        "expires_at": "infer=false only: when the memory stops being true or useful (ISO 8601); absent: never.",
    }

    def validate(self, attrs):
        attrs = super().validate(attrs)
        given = set(self.initial_data)
        if ("content" in given) == ("messages" in given):
            raise serializers.ValidationError({"content": ["Send either content or messages."]})
        if not attrs["infer"]:
            if "messages" in given:
                raise serializers.ValidationError({"messages": ["Messages are extracted: send them with infer=true."]})
            return attrs
        if not attrs["session_id"]:
            raise serializers.ValidationError({"session_id": ["Required with infer=true."]})
        for name in STORED_AS_WRITTEN_ONLY:
            if name in given:
                raise serializers.ValidationError({name: ["Only with infer=false; extraction decides it."]})
        return attrs


class SearchMemoriesInput(SearchInput):
    explain = None  # the ranking's evidence is for people tuning search, not for an agent
    descriptions = {
        "query": "What to look for, in plain words: a question or the topic at hand.",
        "limit": "How many results at most (default: the store's, usually 10).",
        "mode": "hybrid (default): meaning and keywords; vector: meaning only; keyword: words only.",
        "min_score": "Leave out results scoring below this.",
        "metadata": "Only memories whose metadata contains these keys and values.",
        "memory_types": "Only these types: fact, preference, episode, procedure.",
        "include_pending": "Also memories awaiting a reviewer's approval.",
        "created_after": "Only memories written at or after this time (ISO 8601).",
        "created_before": "Only memories written before this time (ISO 8601).",
    }


class MemoryListFilters(MemoryListQuery):
    """MemoryListQuery with `metadata` as a JSON object: a tool's arguments are JSON, not a query string."""

    metadata = MetadataField(required=False, help_text="Only memories with these metadata values (exact match).")

    def validate(self, attrs):
        # Compared as text, as the REST API's metadata.<key>=<value> parameters are; a number or true is written
        # as JSON writes it, which is how PostgreSQL's ->> writes the stored value.
        metadata = attrs.get("metadata") or {}
        attrs["metadata"] = {key: value if isinstance(value, str) else json.dumps(value)
                             for key, value in metadata.items()}
        return attrs


class MemoryListArguments(StoreArguments, PageArguments):
    pass


class SoftDeleteQuery(MemoryDeleteQuery):
    hard = None  # a hard delete (admin) removes the history too: not an agent's decision


class EraseArguments(StoreArguments):
    user_id = IdentifierField(help_text="The user to forget.")
    confirm = IdentifierField(help_text="The same value as user_id, to confirm the erasure.")

    def validate(self, attrs):
        if attrs["confirm"] != attrs["user_id"]:  # both NFC-normalised by IdentifierField
            raise serializers.ValidationError(
                {"confirm": ["Must equal user_id: erasing a user cannot be undone; confirm it by repeating the id."]}
            )
        return attrs


# --- Tools ------------------------------------------------------------------------------------------


@tool(
    scope=READ, arguments=NoArguments, read_only=True, idempotent=True,
    description="List the memory stores this API key may use, with their descriptions, and the key's scopes "
                "(read < write < admin). Every other tool takes one of these names as `store`: call this first "
                "when you do not know which store to use.",
)
def list_stores(call: ToolCall) -> dict:
    stores = selectors.store_list(api_key=call.api_key)
    return {
        "stores": [{"name": store.name, "description": store.description} for store in stores],
        "scopes": list(call.api_key.scopes),
    }


@tool(
    scope=WRITE, arguments=AddMemoryArguments,
    description="Remember something about a user, in one of two ways.\n"
                "- infer=false (default): store `content` as one memory, exactly as written. Use it for a clear, "
                "durable fact or preference, phrased to stand alone: \"Alice is allergic to peanuts\". Content the "
                "user already has is not stored twice: the answer then says duplicate=true and gives the existing "
                "memory. Returns {memory, duplicate}.\n"
                "- infer=true: send conversation turns (`messages`, or `content` as one user message) to the "
                "session `session_id`; memoryhub extracts the durable facts from them in the background, merging "
                "them with what it already knows (a changed fact replaces the old one). Returns at once with "
                "{accepted, duplicates, seqs, session, extraction_job}; the extracted memories reach "
                "search_memories once the job has run, usually within seconds.",
)
def add_memory(call: ToolCall) -> dict:
    data = call.arguments
    if data["infer"]:
        messages = data.get("messages") or [{"role": "user", "content": data["content"]}]
        result = conversation_services.messages_ingest(
            store=call.store,
            session_external_id=data["session_id"],
            user_id=data["user_id"],
            agent_id=data["agent_id"],
            metadata=data["metadata"],
            messages=[conversation_services.MessageInput(**message) for message in messages],
        )
        return ingest_answer(result)
    fields = {name: value for name, value in data.items() if name not in ("store", "infer")}
    result = services.memory_create(store=call.store, item=services.MemoryInput(**fields), actor=call.actor)
    return MemoryWriteOutput(result).data


@tool(
    throttle_scope="searches",
    scope=READ, body=SearchMemoriesInput, read_only=True, idempotent=True,
    description="Search what is remembered, best match first: by meaning and by keywords (mode hybrid, the "
                "default; or vector, keyword). Use it before answering anything that may depend on what you know "
                "about the user, and pass user_id to search that user's memories only. Narrow with agent_id, "
                "session_id, memory_types, tags and metadata (the memory's metadata must contain these values). "
                "Time: valid_at returns what held at that moment, values replaced since included; created_after "
                "and created_before filter on when a memory was written. Only active, unexpired memories are "
                "searched unless include_pending or include_superseded. Returns {mode, results}, each result a "
                "{memory, score} with the ranks behind the score; limit defaults to the store's (10).",
)
def search_memories(call: ToolCall) -> dict:
    search = search_query_from(call.store, call.body)
    return SearchOutput({"mode": search.mode, "results": memory_search(store=call.store, search=search)}).data


@tool(
    scope=READ, arguments=MemoryListArguments, body=MemoryListFilters, read_only=True, idempotent=True,
    description="List memories, newest first, one page at a time: all of a user's (user_id), or those matching "
                "agent_id, session_id, memory_type, status, tag, metadata (exact values) or when they were "
                "written (created_after, created_before). Deleted memories are left out unless status is "
                "\"deleted\", expired ones unless include_expired. Returns {results, next_cursor}: pass "
                "next_cursor back as `cursor` for the next page; null means this was the last. To find the "
                "memories that bear on a question, use search_memories instead.",
)
def get_memories(call: ToolCall) -> dict:
    store = call.store
    memories = selectors.memory_list(store=store, filters=selectors.MemoryFilters(**call.body))
    page, next_cursor = page_of(call.request, memories, NewestFirstCursorPagination,
                                cursor=call.arguments.get("cursor"), page_size=call.arguments.get("page_size"))
    for memory in page:
        memory.store = store
    return {"results": MemoryOutput(page, many=True).data, "next_cursor": next_cursor}


@tool(
    scope=READ, arguments=MemoryArguments, read_only=True, idempotent=True,
    description="Get one memory by its id, whatever its status (active, pending_review, rejected, superseded or "
                "deleted), with its metadata, tags, provenance (where it came from) and validity.",
)
def get_memory(call: ToolCall) -> dict:
    return MemoryOutput(selectors.memory_get(store=call.store, memory_id=call.arguments["memory_id"])).data


@tool(
    scope=WRITE, arguments=MemoryArguments, body=MemoryPatchInput, idempotent=True,
    description="Change a memory: its content, memory_type, metadata, tags, importance, confidence, status, "
                "agent_id, session_id, valid_to or expires_at; send only what changes. Say why in `reason`: every "
                "change is kept in the memory's history. Correct a fact that has changed here rather than adding "
                "a second one; status \"active\" restores a deleted memory. Returns the memory as changed.",
)
def update_memory(call: ToolCall) -> dict:
    memory = selectors.memory_get(store=call.store, memory_id=call.arguments["memory_id"])
    changes = dict(call.body)
    reason = changes.pop("reason", "")
    return MemoryOutput(services.memory_update(memory=memory, changes=changes, actor=call.actor, reason=reason)).data


@tool(
    scope=WRITE, arguments=MemoryArguments, body=SoftDeleteQuery, destructive=True, idempotent=True,
    description="Delete one memory that is wrong or no longer wanted. It leaves search and lists at once, but "
                "stays restorable (update_memory with status \"active\") and the deletion, with `reason`, is kept "
                "in its history. Returns {deleted, id, memory}.",
)
def delete_memory(call: ToolCall) -> dict:
    memory = selectors.memory_get(store=call.store, memory_id=call.arguments["memory_id"])
    memory = services.memory_delete(memory=memory, actor=call.actor, reason=call.body["reason"])
    return {"deleted": True, "hard": False, "id": str(memory.pk), "memory": MemoryOutput(memory).data}


@tool(
    scope=ADMIN, arguments=EraseArguments, destructive=True, idempotent=True,
    description="Forget a user for good: erase every memory and its history, and every session with its "
                "messages, working memory, checkpoints and extraction jobs, that the store holds about user_id. "
                "This cannot be undone. Use it only when the user asks to be forgotten, and confirm by setting "
                "`confirm` to the same value as user_id; anything else is refused. Needs an API key with the admin "
                "scope. Returns the counts of what was erased.",
)
def delete_all_memories(call: ToolCall) -> dict:
    user_id = call.arguments["user_id"]
    counts = conversation_services.user_erase(store=call.store, user_id=user_id)
    return UserEraseOutput({"user_id": user_id, **counts}).data
