from django.urls import path

from apps.memories import api

urlpatterns = [
    path("stores", api.StoreListCreateApi.as_view(), name="store-list"),
    path("stores/<slug:store_name>", api.StoreDetailApi.as_view(), name="store-detail"),
    path("stores/<slug:store_name>/memories", api.MemoryListCreateApi.as_view(), name="memory-list"),
    path("stores/<slug:store_name>/memories/bulk", api.MemoryBulkCreateApi.as_view(), name="memory-bulk"),
    path("stores/<slug:store_name>/memories/<uuid:memory_id>", api.MemoryDetailApi.as_view(), name="memory-detail"),
    path(
        "stores/<slug:store_name>/memories/<uuid:memory_id>/history",
        api.MemoryHistoryApi.as_view(),
        name="memory-history",
    ),
    path("stores/<slug:store_name>/search", api.SearchApi.as_view(), name="memory-search"),
]
