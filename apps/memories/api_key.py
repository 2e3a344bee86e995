"""GET /api/v1/key: what the calling API key may do, the limits it works under and what its tenant uses of them.

Here rather than in apps.tenancy, which owns keys and limits: the usage counts memories and stores."""

from dataclasses import dataclass

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from apps.memories.quotas import TenantUsage, tenant_usage
from apps.tenancy.api_base import ApiView
from apps.tenancy.limits import TenantLimits, tenant_limits
from apps.tenancy.models import ApiKey

NO_LIMIT = "null: no limit."


@dataclass(frozen=True)
class KeyInfo:
    api_key: ApiKey
    limits: TenantLimits
    usage: TenantUsage


class RequestRatesOutput(serializers.Serializer):
    reads = serializers.IntegerField(allow_null=True, help_text=f"GET requests; {NO_LIMIT}")
    writes = serializers.IntegerField(allow_null=True, help_text=f"POST, PUT, PATCH and DELETE requests; {NO_LIMIT}")
    searches = serializers.IntegerField(allow_null=True, help_text=f"Searches and context requests; {NO_LIMIT}")
    flushes = serializers.IntegerField(allow_null=True, help_text=f"Session flushes and terminations; {NO_LIMIT}")


class LimitsOutput(serializers.Serializer):
    requests_per_minute = RequestRatesOutput(
        help_text="Requests per minute with this API key, by kind; past one, a 429 with Retry-After."
    )
    max_memories = serializers.IntegerField(
        allow_null=True, help_text=f"Memories the tenant may hold, whatever their status; {NO_LIMIT}"
    )
    max_stores = serializers.IntegerField(allow_null=True, help_text=f"Stores the tenant may have; {NO_LIMIT}")
    max_request_bytes = serializers.IntegerField(help_text="Largest request body, in bytes.")


class UsageOutput(serializers.Serializer):
    memories = serializers.IntegerField(help_text="Memories the tenant holds, whatever their status.")
    stores = serializers.IntegerField()


class ApiKeyOutput(serializers.Serializer):
    name = serializers.CharField(source="api_key.name")
    prefix = serializers.CharField(source="api_key.prefix")
    tenant = serializers.CharField(source="api_key.tenant.slug")
    scopes = serializers.ListField(child=serializers.CharField(), source="api_key.scopes")
    can_write = serializers.SerializerMethodField()
    stores = serializers.SerializerMethodField(help_text="The stores the key may use; null: every store.")
    created_at = serializers.DateTimeField(source="api_key.created_at")
    limits = LimitsOutput(help_text="The tenant's limits in force.")
    usage = UsageOutput(help_text="What the tenant holds now, against max_memories and max_stores.")

    def get_can_write(self, info) -> bool:
        return info.api_key.has_scope("write")

    def get_stores(self, info) -> list[str] | None:
        return list(info.api_key.store_names) or None


class ApiKeyInfoApi(ApiView):
    required_scopes = {"GET": "read"}

    @extend_schema(
        responses=ApiKeyOutput,
        summary="The calling API key: tenant, scopes, allowed stores, limits and usage",
        description="What the calling API key may do: its tenant, scopes, whether it can write, and the stores "
                    "it is limited to (null: every store). Lets a client check its configuration before it "
                    "needs it. Also the limits in force (requests per minute by kind, quotas of memories and "
                    "stores, the largest request) and what the tenant holds now.",
    )
    def get(self, request):
        tenant = request.auth.tenant
        info = KeyInfo(api_key=request.auth, limits=tenant_limits(tenant), usage=tenant_usage(tenant))
        return Response(ApiKeyOutput(info).data)
