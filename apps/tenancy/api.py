from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from apps.tenancy.api_base import ApiView


class ApiKeyOutput(serializers.Serializer):
    name = serializers.CharField()
    prefix = serializers.CharField()
    tenant = serializers.CharField(source="tenant.slug")
    scopes = serializers.ListField(child=serializers.CharField())
    can_write = serializers.SerializerMethodField()
    stores = serializers.SerializerMethodField(help_text="The stores the key may use; null: every store.")
    created_at = serializers.DateTimeField()

    def get_can_write(self, api_key) -> bool:
        return api_key.has_scope("write")

    def get_stores(self, api_key) -> list[str] | None:
        return list(api_key.store_names) or None


class ApiKeyInfoApi(ApiView):
    required_scopes = {"GET": "read"}

    @extend_schema(
        responses=ApiKeyOutput,
        summary="The calling API key: tenant, scopes, allowed stores",
        description="What the calling API key may do: its tenant, scopes, whether it can write, and the stores "
                    "it is limited to (null: every store). Lets a client check its configuration before it "
                    "needs it.",
    )
    def get(self, request):
        return Response(ApiKeyOutput(request.auth).data)
