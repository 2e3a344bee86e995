from django.urls import path

from apps.tenancy import api

urlpatterns = [
    path("key", api.ApiKeyInfoApi.as_view(), name="api-key-info"),
]
