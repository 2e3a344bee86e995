from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from apps.conversations import selectors
from apps.conversations.context import AssembledContext, context_assemble
from apps.conversations.serializers.context import ContextInput, ContextOutput
from apps.memories.api import READ, StoreScopedView


def context_for(store, data: dict) -> AssembledContext:
    """The context a validated ContextInput asks for (the MCP tool get_context asks through here too)."""
    session = None
    if data["session_id"] is not None:
        session = selectors.session_get(store=store, external_id=data["session_id"])
    return context_assemble(
        store=store,
        query=data["query"],
        user_id=data["user_id"],
        session=session,
        token_budget=data["token_budget"],
        kinds=data["kinds"],
        fmt=data["format"],
        shares=data["shares"],
    )


class ContextApi(StoreScopedView):
    required_scopes = {"POST": READ}
    throttle_scopes = {"POST": "searches"}
    body_serializers = {"POST": ContextInput}

    @extend_schema(
        responses=ContextOutput,
        summary="Assemble a ready-to-inject memory block for a query, within a token budget",
        description="Everything an agent should know before answering, as one block to put in the prompt (XML, "
                    "Markdown or JSON) that never exceeds `token_budget` estimated tokens: the user's facts, "
                    "episodes and procedures ranked against `query`, and with `session_id` the session's working "
                    "state. The answer lists what was included and what was left out. A read: the read scope is "
                    "enough.",
    )
    def post(self, request, store_name):
        return Response(ContextOutput(context_for(self.get_store(), self.body())).data)
