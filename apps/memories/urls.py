from django.urls import path

from apps.memories import api, api_key, api_webhooks

urlpatterns = [
    path("key", api_key.ApiKeyInfoApi.as_view(), name="api-key-info"),
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
    path("stores/<slug:store_name>/webhooks", api_webhooks.WebhookListCreateApi.as_view(), name="webhook-list"),
    path(
        "stores/<slug:store_name>/webhooks/<uuid:webhook_id>",
        api_webhooks.WebhookDetailApi.as_view(),
        name="webhook-detail",
    ),
    path(
        "stores/<slug:store_name>/webhooks/<uuid:webhook_id>/rotate-secret",
        api_webhooks.WebhookRotateSecretApi.as_view(),
        name="webhook-rotate-secret",
    ),
    path(
        "stores/<slug:store_name>/webhooks/<uuid:webhook_id>/test",
        api_webhooks.WebhookTestApi.as_view(),
        name="webhook-test",
    ),
    path(
        "stores/<slug:store_name>/webhooks/<uuid:webhook_id>/deliveries",
        api_webhooks.WebhookDeliveryListApi.as_view(),
        name="webhook-delivery-list",
    ),
    path(
        "stores/<slug:store_name>/webhooks/<uuid:webhook_id>/deliveries/<uuid:delivery_id>/retry",
        api_webhooks.WebhookDeliveryRetryApi.as_view(),
        name="webhook-delivery-retry",
    ),
]
