from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response

from apps.core.errors import ApplicationError, PayloadTooLargeError
from apps.core.pagination import NewestFirstCursorPagination
from apps.memories import selectors, services
from apps.memories.search import SearchQuery, memory_search_explained, search_explanation
from apps.memories.serializers import (
    MemoryBulkInput,
    MemoryBulkOutput,
    MemoryCreateInput,
    MemoryDeleteOutput,
    MemoryDeleteQuery,
    MemoryListQuery,
    MemoryOutput,
    MemoryPatchInput,
    MemoryWriteOutput,
    RevisionListOutput,
    SearchInput,
    SearchOutput,
    StoreCreateInput,
    StoreDeleteOutput,
    StoreListOutput,
    StoreOutput,
    StoreUpdateInput,
)
from apps.memories.store_settings import search_settings_for
from apps.tenancy.api_base import ApiView

READ, WRITE, ADMIN = "read", "write", "admin"


class StoreScopedView(ApiView):
    def get_store(self):
        return selectors.store_get(api_key=self.request.auth, name=self.kwargs["store_name"])


# --- Stores -----------------------------------------------------------------------------------------


class StoreListCreateApi(ApiView):
    required_scopes = {"GET": READ, "POST": ADMIN}
    body_serializers = {"POST": StoreCreateInput}

    @extend_schema(
        responses=StoreListOutput,
        operation_id="stores_list",
        summary="List memory stores",
        description="The memory stores of the key's tenant that the key may use (all of them unless the key is "
                    "limited to named stores), with their settings and the limits in effect.",
    )
    def get(self, request):
        stores = selectors.store_list(api_key=request.auth)
        return Response(StoreListOutput({"results": stores}).data)

    @extend_schema(
        responses={201: StoreOutput},
        summary="Create a memory store",
        description="Create a store of memories. Its embedder (`hash`, `local` or `openai`) and dimension are "
                    "fixed at creation; the review policy, search defaults, content limit, extraction and "
                    "working-memory settings can be changed later. Needs the admin scope and a key that is not "
                    "limited to named stores; a name already taken is a 409.",
    )
    def post(self, request):
        if request.auth.store_names:
            raise ApplicationError(
                "API keys limited to named stores cannot create stores.", code="permission_denied", status_code=403
            )
        store = services.store_create(tenant=request.auth.tenant, **self.body())
        return Response(StoreOutput(store).data, status=status.HTTP_201_CREATED)


class StoreDetailApi(StoreScopedView):
    required_scopes = {"GET": READ, "PATCH": ADMIN, "DELETE": ADMIN}
    body_serializers = {"PATCH": StoreUpdateInput}

    @extend_schema(
        responses=StoreOutput,
        summary="Get a memory store",
        description="One store with its settings: `extraction_settings` and `working_memory_limits` show the "
                    "values in effect (the store's overrides over the server defaults).",
    )
    def get(self, request, store_name):
        return Response(StoreOutput(self.get_store()).data)

    @extend_schema(
        responses=StoreOutput,
        summary="Update a memory store",
        description="Change the description, review policy, search defaults, content limit, or the overrides in "
                    "`extraction_config` and `working_memory_config` (a key set to null returns to the default). "
                    "The name and the embedder are fixed: changing them is refused with a 400.",
    )
    def patch(self, request, store_name):
        store = self.get_store()
        changes = self.body(partial=True)
        store = services.store_update(store=store, changes=dict(changes))
        return Response(StoreOutput(store).data)

    @extend_schema(
        responses=StoreDeleteOutput,
        summary="Delete a memory store and all its memories",
        description="Delete the store for good, with every memory and revision, session, message, working state "
                    "and extraction job in it. Answers with the number of memories deleted.",
    )
    def delete(self, request, store_name):
        deleted = services.store_delete(store=self.get_store())
        return Response({"deleted": True, "store": store_name, **deleted})


# --- Memories ---------------------------------------------------------------------------------------


def _memory_input(data: dict) -> services.MemoryInput:
    return services.MemoryInput(**data)


class MemoryListCreateApi(StoreScopedView):
    required_scopes = {"GET": READ, "POST": WRITE}
    body_serializers = {"POST": MemoryCreateInput}
    query_serializers = {"GET": MemoryListQuery}
    paginators = {"GET": NewestFirstCursorPagination}

    @extend_schema(
        parameters=[
            OpenApiParameter("metadata.<key>", str, description="Filter on a metadata value, e.g. metadata.plan=pro "
                                                                "(compared as text; one parameter per key)"),
        ],
        responses=MemoryOutput(many=True),
        summary="List memories",
        description="The store's memories, newest first, one page at a time (follow `next`). Deleted memories "
                    "are left out unless `status=deleted` is asked for, expired ones unless `include_expired`. "
                    "Every filter narrows the list; an unknown parameter is a 400, never ignored.",
    )
    def get(self, request, store_name):
        store = self.get_store()
        memories = selectors.memory_list(store=store, filters=selectors.MemoryFilters(**self.query()))

        def render(page):
            for memory in page:
                memory.store = store
            return MemoryOutput(page, many=True).data

        return self.paginated_response(memories, render)

    @extend_schema(
        responses={201: MemoryWriteOutput, 200: MemoryWriteOutput},
        summary="Add a memory (returns the existing one, duplicate=true, for known content)",
        description="Store one memory for a user. Content the user already has (after Unicode, case and "
                    "whitespace normalisation) is not stored twice: the answer is then a 200 with the existing "
                    "memory and `duplicate: true`. Content longer than the store's `max_content_length` is a 413.",
    )
    def post(self, request, store_name):
        store = self.get_store()
        result = services.memory_create(store=store, item=_memory_input(self.body()), actor=self.actor)
        return Response(
            MemoryWriteOutput(result).data, status=status.HTTP_200_OK if result.duplicate else status.HTTP_201_CREATED
        )


class MemoryBulkCreateApi(StoreScopedView):
    required_scopes = {"POST": WRITE}
    body_serializers = {"POST": MemoryBulkInput}

    @extend_schema(
        responses={201: MemoryBulkOutput},
        summary="Add up to 500 memories at once",
        description="Store several memories in one transaction: all of them or, on any error, none. Each result "
                    "says whether the memory was new or a duplicate of one the user already had. More memories "
                    "than the server's bulk limit (default 500) is a 413.",
    )
    def post(self, request, store_name):
        store = self.get_store()
        items = request.data.get("memories") if isinstance(request.data, dict) else None
        if isinstance(items, list) and len(items) > settings.MEMORYHUB_MAX_BULK:
            raise PayloadTooLargeError(
                f"{len(items)} memories in one request; the limit is {settings.MEMORYHUB_MAX_BULK}.",
                code="batch_too_large",
            )
        data = self.body()
        results = services.memory_bulk_create(
            store=store, items=[_memory_input(item) for item in data["memories"]], actor=self.actor
        )
        duplicates = sum(1 for result in results if result.duplicate)
        body = {"created": len(results) - duplicates, "duplicates": duplicates, "results": results}
        return Response(MemoryBulkOutput(body).data, status=status.HTTP_201_CREATED)


class MemoryDetailApi(StoreScopedView):
    required_scopes = {"GET": READ, "PATCH": WRITE, "DELETE": WRITE}
    body_serializers = {"PATCH": MemoryPatchInput}
    query_serializers = {"DELETE": MemoryDeleteQuery}

    def get_memory(self):
        return selectors.memory_get(store=self.get_store(), memory_id=self.kwargs["memory_id"])

    @extend_schema(
        responses=MemoryOutput,
        summary="Get a memory",
        description="One memory of the store, whatever its status (active, pending review, rejected, "
                    "superseded or deleted), with its metadata, provenance and validity.",
    )
    def get(self, request, store_name, memory_id):
        return Response(MemoryOutput(self.get_memory()).data)

    @extend_schema(
        responses=MemoryOutput,
        summary="Change a memory",
        description="Change the content, type, metadata, tags, importance, confidence, status, validity or "
                    "expiry of a memory; each change is recorded in its history with the optional `reason`. "
                    "Setting `status` to active restores a soft-deleted memory.",
    )
    def patch(self, request, store_name, memory_id):
        memory = self.get_memory()
        changes = dict(self.body())
        reason = changes.pop("reason", "")
        memory = services.memory_update(memory=memory, changes=changes, actor=self.actor, reason=reason)
        return Response(MemoryOutput(memory).data)

    @extend_schema(
        responses=MemoryDeleteOutput,
        summary="Delete a memory (soft by default)",
        description="Soft-delete a memory: it leaves search and lists but stays restorable, and the deletion is "
                    "recorded in its history. With `hard=true` (admin scope) the memory and its whole history "
                    "are removed for good.",
    )
    def delete(self, request, store_name, memory_id):
        query = self.query()
        if query["hard"] and not request.auth.has_scope(ADMIN):
            raise ApplicationError(
                "Hard delete needs the 'admin' scope.", code="permission_denied", status_code=403
            )
        memory = self.get_memory()
        if query["hard"]:
            services.memory_hard_delete(memory=memory)
            return Response({"deleted": True, "hard": True, "id": str(memory_id)})
        memory = services.memory_delete(memory=memory, actor=self.actor, reason=query["reason"])
        return Response({"deleted": True, "hard": False, "id": str(memory_id), "memory": MemoryOutput(memory).data})


class MemoryHistoryApi(StoreScopedView):
    required_scopes = {"GET": READ}

    @extend_schema(
        responses=RevisionListOutput,
        operation_id="stores_memories_history_list",
        summary="A memory's history, oldest first",
        description="Every revision of a memory, oldest first: the action (`create`; `update`, an edit; "
                    "`status_change`; `supersede`, retired in favour of the newer memory that "
                    "`after.superseded_by_id` names; `delete`; `restore`), the fields it changed with their "
                    "values before and after, who made it (an API key, a staff user or the system, such as an "
                    "extraction job) and why.",
    )
    def get(self, request, store_name, memory_id):
        memory = selectors.memory_get(store=self.get_store(), memory_id=memory_id)
        revisions = selectors.memory_history(memory=memory)
        return Response(RevisionListOutput({"results": revisions}).data)


def search_query_from(store, data: dict) -> SearchQuery:
    """The search a validated SearchInput asks for, the store's search defaults filling in what it leaves out
    (the MCP tool search_memories asks through here too)."""
    defaults = search_settings_for(store)
    return SearchQuery(
        query=data["query"],
        mode=data.get("mode") or defaults.mode,
        limit=data.get("limit") or defaults.limit,
        min_score=data["min_score"] if data.get("min_score") is not None else defaults.min_score,
        user_id=data.get("user_id"),
        agent_id=data.get("agent_id"),
        session_id=data.get("session_id"),
        memory_types=tuple(data.get("memory_types") or ()),
        metadata=data.get("metadata") or None,
        tags=tuple(data.get("tags") or ()),
        include_pending=data["include_pending"],
        include_superseded=data["include_superseded"],
        valid_at=data.get("valid_at"),
        created_after=data.get("created_after"),
        created_before=data.get("created_before"),
        explain=data.get("explain", False),
    )


class SearchApi(StoreScopedView):
    required_scopes = {"POST": READ}
    throttle_scopes = {"POST": "searches"}
    body_serializers = {"POST": SearchInput}

    @extend_schema(
        responses=SearchOutput,
        summary="Search memories (hybrid, vector or keyword)",
        description="Rank the store's active, unexpired memories against a query: `hybrid` fuses the vector and "
                    "keyword rankings (weighted reciprocal rank fusion of each signal's best `candidate_depth` "
                    "memories, set in the store's search_defaults), `vector` uses cosine similarity, `keyword` "
                    "BM25 over PostgreSQL's English lexemes with term statistics from the searched scope. Filters "
                    "(user, agent, session, types, tags, metadata containment, when a memory was created or held) "
                    "narrow the candidates; each hit carries its score and the ranks behind it, and `explain` adds "
                    "each signal's share. A read: the read scope is enough.",
    )
    def post(self, request, store_name):
        store = self.get_store()
        search = search_query_from(store, self.body())
        result = memory_search_explained(store=store, search=search)
        if not search.explain:
            return Response(SearchOutput({"mode": search.mode, "results": result.hits}).data)
        per_hit, summary = search_explanation(result, search)
        results = [{**vars(hit), "explain": explained} for hit, explained in zip(result.hits, per_hit, strict=True)]
        return Response(SearchOutput({"mode": search.mode, "results": results, "explain": summary}).data)
