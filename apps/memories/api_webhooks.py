"""The API of a store's outgoing webhooks: all of it needs the admin scope, like managing the store."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from apps.core.pagination import NewestFirstCursorPagination
from apps.memories import selectors
from apps.memories.api import ADMIN, StoreScopedView
from apps.memories.serializers_webhooks import (
    WebhookCreateInput,
    WebhookDeleteOutput,
    WebhookDeliveryListQuery,
    WebhookDeliveryOutput,
    WebhookListOutput,
    WebhookOutput,
    WebhookUpdateInput,
    WebhookWithSecretOutput,
)
from apps.memories.services import webhooks as services


class WebhookScopedView(StoreScopedView):
    def get_webhook(self):
        return selectors.webhook_get(store=self.get_store(), webhook_id=self.kwargs["webhook_id"])


class WebhookListCreateApi(StoreScopedView):
    required_scopes = {"GET": ADMIN, "POST": ADMIN}
    body_serializers = {"POST": WebhookCreateInput}

    @extend_schema(
        responses=WebhookListOutput,
        operation_id="stores_webhooks_list",
        summary="List a store's webhooks",
        description="The store's outgoing webhooks, oldest first: where each sends, which event types, whether it "
                    "is active (and if not, why), and how many deliveries in a row failed. Secrets are not shown.",
    )
    def get(self, request, store_name):
        webhooks = selectors.webhook_list(store=self.get_store())
        return Response(WebhookListOutput({"results": webhooks}).data)

    @extend_schema(
        responses={201: WebhookWithSecretOutput},
        summary="Add a webhook",
        description="Send the store's events (all, or the `event_types` named) to a URL as signed JSON POSTs. The "
                    "answer holds the signing `secret`, shown this once. An http or https URL whose host is a "
                    "private, loopback or link-local address is refused (400) unless the server allows it; a store "
                    "already at the server's webhook limit is a 409.",
    )
    def post(self, request, store_name):
        webhook = services.webhook_create(store=self.get_store(), **self.body())
        return Response(WebhookWithSecretOutput(webhook).data, status=status.HTTP_201_CREATED)


class WebhookDetailApi(WebhookScopedView):
    required_scopes = {"GET": ADMIN, "PATCH": ADMIN, "DELETE": ADMIN}
    body_serializers = {"PATCH": WebhookUpdateInput}

    @extend_schema(
        responses=WebhookOutput,
        summary="Get a webhook",
        description="One webhook of the store, without its secret: URL, event types, description, whether it is "
                    "active, when and why it was disabled, and its count of consecutive failed deliveries.",
    )
    def get(self, request, store_name, webhook_id):
        return Response(WebhookOutput(self.get_webhook()).data)

    @extend_schema(
        responses=WebhookOutput,
        summary="Change a webhook",
        description="Change the URL (checked like on creation), the event types, the description, or `is_active`: "
                    "false disables the webhook, true enables it again and resets its count of failed deliveries "
                    "(a webhook disabled after repeated failures is enabled this way).",
    )
    def patch(self, request, store_name, webhook_id):
        webhook = services.webhook_update(webhook=self.get_webhook(), changes=dict(self.body(partial=True)))
        return Response(WebhookOutput(webhook).data)

    @extend_schema(
        responses=WebhookDeleteOutput,
        summary="Delete a webhook",
        description="Delete the webhook with its delivery log; deliveries still queued for it are not sent. Other "
                    "webhooks of the store are not affected.",
    )
    def delete(self, request, store_name, webhook_id):
        webhook = self.get_webhook()
        services.webhook_delete(webhook=webhook)
        return Response({"deleted": True, "id": str(webhook_id)})


class WebhookRotateSecretApi(WebhookScopedView):
    required_scopes = {"POST": ADMIN}

    @extend_schema(
        responses=WebhookWithSecretOutput,
        summary="Rotate a webhook's signing secret",
        description="Give the webhook a new signing secret and answer with it, shown this once; it takes no request "
                    "body. Every delivery from now on, including retries of earlier events, is signed with the new "
                    "secret only.",
    )
    def post(self, request, store_name, webhook_id):
        webhook = services.webhook_rotate_secret(webhook=self.get_webhook())
        return Response(WebhookWithSecretOutput(webhook).data)


class WebhookTestApi(WebhookScopedView):
    required_scopes = {"POST": ADMIN}

    @extend_schema(
        responses={202: WebhookDeliveryOutput},
        summary="Send a test event to a webhook",
        description="Queue a `ping` event to the webhook, signed like every delivery, and answer with the queued "
                    "delivery (follow it in the delivery log); it takes no request body. A disabled webhook is a "
                    "409 `webhook_disabled`.",
    )
    def post(self, request, store_name, webhook_id):
        delivery = services.webhook_send_test(webhook=self.get_webhook())
        return Response(WebhookDeliveryOutput(delivery).data, status=status.HTTP_202_ACCEPTED)


class WebhookDeliveryListApi(WebhookScopedView):
    required_scopes = {"GET": ADMIN}
    query_serializers = {"GET": WebhookDeliveryListQuery}
    paginators = {"GET": NewestFirstCursorPagination}

    @extend_schema(
        responses=WebhookDeliveryOutput(many=True),
        summary="A webhook's delivery log",
        description="The webhook's deliveries, newest first, one page at a time, optionally in one `status`: the "
                    "event sent (payload included), the attempts made, the last answer's HTTP status, what went "
                    "wrong in words, and when it was delivered. Deliveries are kept for the server's retention.",
    )
    def get(self, request, store_name, webhook_id):
        deliveries = selectors.webhook_delivery_list(webhook=self.get_webhook(), status=self.query().get("status"))
        return self.paginated_response(deliveries, lambda page: WebhookDeliveryOutput(page, many=True).data)


class WebhookDeliveryRetryApi(WebhookScopedView):
    required_scopes = {"POST": ADMIN}

    @extend_schema(
        responses={202: WebhookDeliveryOutput},
        summary="Send a failed delivery again",
        description="Queue a delivery that failed on every attempt again, with a fresh set of attempts; it takes "
                    "no request body. A delivery that has not failed is a 409 `delivery_not_failed`, one of a "
                    "disabled webhook a 409 `webhook_disabled`.",
    )
    def post(self, request, store_name, webhook_id, delivery_id):
        delivery = selectors.webhook_delivery_get(webhook=self.get_webhook(), delivery_id=delivery_id)
        delivery = services.webhook_delivery_retry(delivery=delivery)
        return Response(WebhookDeliveryOutput(delivery).data, status=status.HTTP_202_ACCEPTED)
