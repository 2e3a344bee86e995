from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from apps.conversations import selectors
from apps.conversations.context import context_assemble
from apps.conversations.serializers.context import ContextInput, ContextOutput
from apps.core.api import validated
from apps.memories.api import READ, StoreScopedView


class ContextApi(StoreScopedView):
    required_scopes = {"POST": READ}

    @extend_schema(request=ContextInput, responses=ContextOutput,
                   summary="Assemble a ready-to-inject memory block for a query, within a token budget")
    def post(self, request, store_name):
        store = self.get_store()
        data = validated(ContextInput, request.data)
        session = None
        if data["session_id"] is not None:
            session = selectors.session_get(store=store, external_id=data["session_id"])
        assembled = context_assemble(
            store=store,
            query=data["query"],
            user_id=data["user_id"],
            session=session,
            token_budget=data["token_budget"],
            kinds=data["kinds"],
            fmt=data["format"],
            shares=data["shares"],
        )
        return Response(ContextOutput(assembled).data)
