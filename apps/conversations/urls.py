from django.urls import path

from apps.conversations import api

urlpatterns = [
    path("stores/<slug:store_name>/sessions", api.SessionListApi.as_view(), name="session-list"),
    path("stores/<slug:store_name>/sessions/<str:session_id>", api.SessionDetailApi.as_view(), name="session-detail"),
    path(
        "stores/<slug:store_name>/sessions/<str:session_id>/messages",
        api.MessageIngestApi.as_view(),
        name="session-messages",
    ),
    path("stores/<slug:store_name>/sessions/<str:session_id>/flush", api.SessionFlushApi.as_view(), name="session-flush"),
]
