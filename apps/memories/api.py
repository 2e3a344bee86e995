from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response

from apps.core.api import query_bool, validated
from apps.core.errors import ApplicationError, PayloadTooLargeError
from apps.core.pagination import NewestFirstCursorPagination
from apps.memories import selectors, services
from apps.memories.serializers import (
    MemoryBulkInput,
    MemoryBulkOutput,
    MemoryCreateInput,
    MemoryListQuery,
    MemoryOutput,
    MemoryPatchInput,
    MemoryWriteOutput,
    RevisionOutput,
    SearchInput,
    SearchOutput,
    StoreCreateInput,
    StoreOutput,
    StoreUpdateInput,
    UserEraseOutput,
)
from apps.tenancy.api_base import ApiView

READ, WRITE, ADMIN = "read", "write", "admin"


class StoreScopedView(ApiView):
    def get_store(self):
        return selectors.store_get(api_key=self.request.auth, name=self.kwargs["store_name"])


# --- Stores -----------------------------------------------------------------------------------------


class StoreListCreateApi(ApiView):
    required_scopes = {"GET": READ, "POST": ADMIN}

    @extend_schema(responses=StoreOutput(many=True), summary="List memory stores")
    def get(self, request):
        stores = selectors.store_list(api_key=request.auth)
        return Response({"results": StoreOutput(stores, many=True).data})

    @extend_schema(request=StoreCreateInput, responses={201: StoreOutput}, summary="Create a memory store")
    def post(self, request):
        if request.auth.store_names:
            raise ApplicationError(
                "API keys limited to named stores cannot create stores.", code="permission_denied", status_code=403
            )
        data = validated(StoreCreateInput, request.data)
        store = services.store_create(tenant=request.auth.tenant, **data)
        return Response(StoreOutput(store).data, status=status.HTTP_201_CREATED)


class StoreDetailApi(StoreScopedView):
    required_scopes = {"GET": READ, "PATCH": ADMIN, "DELETE": ADMIN}

    @extend_schema(responses=StoreOutput, summary="Get a memory store")
    def get(self, request, store_name):
        return Response(StoreOutput(self.get_store()).data)

    @extend_schema(request=StoreUpdateInput, responses=StoreOutput, summary="Update a memory store")
    def patch(self, request, store_name):
        store = self.get_store()
        changes = validated(StoreUpdateInput, request.data, partial=True)
        store = services.store_update(store=store, changes=dict(changes))
        return Response(StoreOutput(store).data)

    @extend_schema(responses={200: None}, summary="Delete a memory store and all its memories")
    def delete(self, request, store_name):
        deleted = services.store_delete(store=self.get_store())
        return Response({"deleted": True, "store": store_name, **deleted})


# --- Memories ---------------------------------------------------------------------------------------


def _memory_input(data: dict) -> services.MemoryInput:
    return services.MemoryInput(**data)


class MemoryListCreateApi(StoreScopedView):
    required_scopes = {"GET": READ, "POST": WRITE}

    @extend_schema(
        parameters=[
            MemoryListQuery,
            OpenApiParameter("metadata.<key>", str, description="Filter on a metadata value, e.g. metadata.plan=pro"),
            OpenApiParameter("cursor", str),
            OpenApiParameter("page_size", int),
        ],
        responses=MemoryOutput(many=True),
        summary="List memories",
    )
    def get(self, request, store_name):
        store = self.get_store()
        query = validated(MemoryListQuery, request.query_params)
        metadata = {
            key.removeprefix("metadata."): value
            for key, value in request.query_params.items()
            if key.startswith("metadata.") and len(key) > len("metadata.")
        }
        memories = selectors.memory_list(store=store, filters=selectors.MemoryFilters(**query, metadata=metadata))
        paginator = NewestFirstCursorPagination()
        page = paginator.paginate_queryset(memories, request, view=self)
        for memory in page:
            memory.store = store
        return paginator.get_paginated_response(MemoryOutput(page, many=True).data)

    @extend_schema(
        request=MemoryCreateInput,
        responses={201: MemoryWriteOutput, 200: MemoryWriteOutput},
        summary="Add a memory (returns the existing one, duplicate=true, for known content)",
    )
    def post(self, request, store_name):
        store = self.get_store()
        data = validated(MemoryCreateInput, request.data)
        result = services.memory_create(store=store, item=_memory_input(data), actor=self.actor)
        return Response(
            MemoryWriteOutput(result).data, status=status.HTTP_200_OK if result.duplicate else status.HTTP_201_CREATED
        )


class MemoryBulkCreateApi(StoreScopedView):
    required_scopes = {"POST": WRITE}

    @extend_schema(request=MemoryBulkInput, responses={201: MemoryBulkOutput}, summary="Add up to 500 memories at once")
    def post(self, request, store_name):
        store = self.get_store()
        items = request.data.get("memories") if isinstance(request.data, dict) else None
        if isinstance(items, list) and len(items) > settings.MEMORYHUB_MAX_BULK:
            raise PayloadTooLargeError(
                f"{len(items)} memories in one request; the limit is {settings.MEMORYHUB_MAX_BULK}.",
                code="batch_too_large",
            )
        data = validated(MemoryBulkInput, request.data)
        results = services.memory_bulk_create(
            store=store, items=[_memory_input(item) for item in data["memories"]], actor=self.actor
        )
        duplicates = sum(1 for result in results if result.duplicate)
        body = {"created": len(results) - duplicates, "duplicates": duplicates, "results": results}
        return Response(MemoryBulkOutput(body).data, status=status.HTTP_201_CREATED)


class MemoryDetailApi(StoreScopedView):
    required_scopes = {"GET": READ, "PATCH": WRITE, "DELETE": WRITE}

    def get_memory(self):
        return selectors.memory_get(store=self.get_store(), memory_id=self.kwargs["memory_id"])

    @extend_schema(responses=MemoryOutput, summary="Get a memory")
    def get(self, request, store_name, memory_id):
        return Response(MemoryOutput(self.get_memory()).data)

    @extend_schema(request=MemoryPatchInput, responses=MemoryOutput, summary="Change a memory")
    def patch(self, request, store_name, memory_id):
        memory = self.get_memory()
        changes = dict(validated(MemoryPatchInput, request.data))
        reason = changes.pop("reason", "")
        memory = services.memory_update(memory=memory, changes=changes, actor=self.actor, reason=reason)
        return Response(MemoryOutput(memory).data)

    @extend_schema(
        parameters=[OpenApiParameter("hard", bool, description="Remove the memory and its history for good")],
        responses={200: None},
        summary="Delete a memory (soft by default)",
    )
    def delete(self, request, store_name, memory_id):
        hard = query_bool(request, "hard")
        if hard and not request.auth.has_scope(ADMIN):
            raise ApplicationError(
                "Hard delete needs the 'admin' scope.", code="permission_denied", status_code=403
            )
        memory = self.get_memory()
        if hard:
            services.memory_hard_delete(memory=memory)
            return Response({"deleted": True, "hard": True, "id": str(memory_id)})
        reason = request.query_params.get("reason", "")
        memory = services.memory_delete(memory=memory, actor=self.actor, reason=reason)
        return Response({"deleted": True, "hard": False, "id": str(memory_id), "memory": MemoryOutput(memory).data})


class MemoryHistoryApi(StoreScopedView):
    required_scopes = {"GET": READ}

    @extend_schema(responses=RevisionOutput(many=True), summary="A memory's history, oldest first")
    def get(self, request, store_name, memory_id):
        memory = selectors.memory_get(store=self.get_store(), memory_id=memory_id)
        revisions = selectors.memory_history(memory=memory)
        return Response({"results": RevisionOutput(revisions, many=True).data})


class SearchApi(StoreScopedView):
    required_scopes = {"POST": READ}

    @extend_schema(request=SearchInput, responses=SearchOutput, summary="Search memories (hybrid, vector or keyword)")
    def post(self, request, store_name):
        store = self.get_store()
        data = validated(SearchInput, request.data)
        defaults = store.search_defaults
        search = selectors.SearchQuery(
            query=data["query"],
            mode=data.get("mode") or defaults.get("mode", "hybrid"),
            limit=data.get("limit") or defaults.get("limit", 10),
            min_score=data["min_score"] if data.get("min_score") is not None else defaults.get("min_score"),
            user_id=data.get("user_id"),
            agent_id=data.get("agent_id"),
            session_id=data.get("session_id"),
            memory_types=tuple(data.get("memory_types") or ()),
            metadata=data.get("metadata") or None,
            tags=tuple(data.get("tags") or ()),
            include_pending=data["include_pending"],
        )
        hits = selectors.memory_search(store=store, search=search)
        return Response(SearchOutput({"mode": search.mode, "results": hits}).data)


class UserEraseApi(StoreScopedView):
    required_scopes = {"DELETE": ADMIN}
    # A kept response would name the erased user for a day. Repeated, an erase ends in the same state
    # (and answers with zero counts), so a retry needs no stored answer.
    keeps_idempotent_responses = False

    @extend_schema(responses=UserEraseOutput, summary="Forget a user: delete every memory and revision")
    def delete(self, request, store_name, user_id):
        counts = services.user_erase(store=self.get_store(), user_id=user_id)
        return Response(UserEraseOutput({"user_id": user_id, **counts}).data)
