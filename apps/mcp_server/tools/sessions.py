"""Tools over a session: the context block, working memory, checkpoints and restore. Each is the REST operation
of the same name in apps.conversations.api, calling the same services and selectors."""

from rest_framework import serializers

from apps.conversations import selectors, services
from apps.conversations.api.context import context_for
from apps.conversations.api.lifecycle import checkpoint_answer, restore_answer
from apps.conversations.api.working_state import KeysInOrder
from apps.conversations.serializers.context import ContextInput, ContextOutput
from apps.conversations.serializers.lifecycle import CheckpointCreateInput, CheckpointRestoreInput
from apps.conversations.serializers.working_state import (
    WorkingMemoryItemOutput,
    WorkingMemoryListQuery,
    WorkingMemoryPutInput,
)
from apps.conversations.services.working_state import MAX_KEY_LENGTH
from apps.core.errors import NotFoundError
from apps.core.fields import CleanCharField, IdentifierField
from apps.mcp_server.pagination import PageArguments, page_of
from apps.mcp_server.tools.base import StoreArguments, ToolCall, tool
from apps.memories.api import READ, WRITE

# --- Arguments --------------------------------------------------------------------------------------


def _key(**kwargs) -> CleanCharField:
    return CleanCharField(max_length=MAX_KEY_LENGTH, trim_whitespace=False, **kwargs)


class SessionArguments(StoreArguments):
    session_id = IdentifierField(help_text="The session (conversation) whose working state this is.")


class WorkingMemoryReadArguments(SessionArguments, PageArguments):
    key = _key(required=False, help_text="One key to read; absent: list the keys.")


class WorkingMemoryWriteArguments(SessionArguments):
    key = _key(help_text="The key to set.")
    user_id = IdentifierField(required=False, help_text="Starts the session if it does not exist yet: its user.")
    agent_id = IdentifierField(required=False, allow_blank=True, default="",
                               help_text="The agent of a session this call starts.")


class WorkingMemoryDeleteArguments(SessionArguments):
    key = _key(required=False, help_text="The key to delete.")
    all_keys = serializers.BooleanField(default=False, help_text="true: delete every key of the session.")

    def validate(self, attrs):
        if ("key" in attrs) == attrs["all_keys"]:
            raise serializers.ValidationError({"key": ["Send either a key or all_keys: true."]})
        return attrs


class RestoreArguments(SessionArguments):
    checkpoint_id = serializers.UUIDField(required=False, help_text="The checkpoint to restore; absent: the newest.")


def _session(call: ToolCall):
    return selectors.session_get(store=call.store, external_id=call.arguments["session_id"])


# --- Tools ------------------------------------------------------------------------------------------


@tool(
    throttle_scope="searches",
    scope=READ, body=ContextInput, read_only=True, idempotent=True,
    description="Get everything you should know before answering `query`, as one block to put in your prompt: "
                "the user's most relevant facts, preferences, episodes and procedures and, with session_id, that "
                "session's working state (task, working memory, recent scratchpad notes), never more than "
                "token_budget estimated tokens (default 2000). format is xml (default), markdown or json. Returns "
                "{context (the block), tokens_estimated, included, left_out}.",
)
def get_context(call: ToolCall) -> dict:
    return ContextOutput(context_for(call.store, call.body)).data


@tool(
    scope=READ, arguments=WorkingMemoryReadArguments, body=WorkingMemoryListQuery, read_only=True, idempotent=True,
    description="Read a session's working memory: the short-lived state of the task at hand (a plan, intermediate "
                "results, choices made), as keys holding JSON values. With `key`: that key's {key, value, version, "
                "expires_at}. Without: the live keys in key order, optionally only those starting with `prefix`, "
                "one page at a time: {results, next_cursor}. A missing or expired key is an error naming it.",
)
def get_working_memory(call: ToolCall) -> dict:
    session = _session(call)
    if "key" in call.arguments:
        return WorkingMemoryItemOutput(selectors.working_memory_get(session=session, key=call.arguments["key"])).data
    items = selectors.working_memory_list(session=session, prefix=call.body.get("prefix"))
    page, next_cursor = page_of(call.request, items, KeysInOrder,
                                cursor=call.arguments.get("cursor"), page_size=call.arguments.get("page_size"))
    return {"results": WorkingMemoryItemOutput(page, many=True).data, "next_cursor": next_cursor}


@tool(
    scope=WRITE, arguments=WorkingMemoryWriteArguments, body=WorkingMemoryPutInput,
    description="Set one key of a session's working memory to any JSON value, replacing what it held, optionally "
                "expiring after ttl_seconds. It is for the state of the task at hand; a fact worth remembering "
                "about the user goes to add_memory. With if_version the write happens only if the key is still at "
                "that version (0: it must not exist yet), so two agents cannot overwrite each other unseen. A "
                "session that does not exist yet is started when you pass user_id. Returns the item, with "
                "created true when the key is new.",
)
def set_working_memory(call: ToolCall) -> dict:
    try:
        session = _session(call)
    except NotFoundError:
        if "user_id" not in call.arguments:
            raise
        session = services.session_spawn(
            store=call.store, external_id=call.arguments["session_id"], user_id=call.arguments["user_id"],
            agent_id=call.arguments["agent_id"], actor=call.actor,
        ).session
    item, created = services.working_memory_put(
        session=session, key=call.arguments["key"], value=call.body["value"],
        ttl_seconds=call.body.get("ttl_seconds"), if_version=call.body.get("if_version"),
    )
    return {**WorkingMemoryItemOutput(item).data, "created": created}


@tool(
    scope=WRITE, arguments=WorkingMemoryDeleteArguments, destructive=True, idempotent=True,
    description="Delete one key of a session's working memory (`key`), or every key (all_keys: true), when the "
                "state is no longer needed. The session's task state, scratchpad and checkpoints stay. Returns "
                "{deleted: true, key} or, for all keys, {deleted: how many there were}.",
)
def delete_working_memory(call: ToolCall) -> dict:
    session = _session(call)
    if call.arguments["all_keys"]:
        return {"deleted": services.working_memory_clear(session=session)}
    services.working_memory_delete(session=session, key=call.arguments["key"])
    return {"deleted": True, "key": call.arguments["key"]}


@tool(
    scope=WRITE, arguments=SessionArguments, body=CheckpointCreateInput,
    description="Snapshot a session's working state (working memory, task state and scratchpad) to come back to "
                "with restore: before something risky, or at a milestone of a long task. It expires after "
                "ttl_seconds (default: the store's, 7 days; 0: never). Returns the checkpoint: its id, what it "
                "holds and when it expires.",
)
def checkpoint(call: ToolCall) -> dict:
    result = services.checkpoint_create(session=_session(call), description=call.body["description"],
                                        ttl_seconds=call.body.get("ttl_seconds"), actor=call.actor)
    return checkpoint_answer(result)


@tool(
    scope=WRITE, arguments=RestoreArguments, body=CheckpointRestoreInput, destructive=True, idempotent=True,
    description="Put a session's working state back as a checkpoint holds it (the newest unless checkpoint_id "
                "names one). By default the current working memory, task state and scratchpad are replaced by the "
                "snapshot's; with clear_current false the snapshot's keys are merged into the current ones. The "
                "checkpoint stays, to restore again. Returns what was cleared and restored, and the session.",
)
def restore(call: ToolCall) -> dict:
    session = _session(call)
    if "checkpoint_id" in call.arguments:
        chosen = selectors.checkpoint_get(session=session, checkpoint_id=call.arguments["checkpoint_id"])
    else:
        chosen = selectors.checkpoint_list(session=session).first()  # newest first, as the REST list
        if chosen is None:
            raise NotFoundError("This session has no checkpoint to restore.", code="checkpoint_not_found")
        chosen.session = session
    result = services.checkpoint_restore(checkpoint=chosen, clear_current=call.body["clear_current"],
                                         actor=call.actor)
    return restore_answer(result)
