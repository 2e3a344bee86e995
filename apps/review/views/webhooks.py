"""A store's outgoing webhooks and their delivery log: tenant admins only (apps.review.access)."""

from django.core.paginator import Paginator
from django.http import Http404
from django.urls import reverse

from apps.core.errors import NotFoundError
from apps.memories.events import EventType
from apps.memories.models import WebhookDelivery
from apps.memories.selectors import webhook_delivery_get, webhook_delivery_list, webhook_get, webhook_list
from apps.memories.services.webhooks import (
    webhook_create,
    webhook_delete,
    webhook_delivery_retry,
    webhook_rotate_secret,
    webhook_send_test,
    webhook_update,
)
from apps.review.forms import WebhookForm
from apps.review.views.base import ActionView, ConsoleView

DELIVERIES_PER_PAGE = 50


class StoreAdminMixin:
    """The store of the URL, which the user must administer: another tenant's is not found, a store the user
    only reviews is refused."""

    def admin_store(self):
        store = self.access.store(self.kwargs["store_id"])
        self.access.require_admin(store)
        return store

    def webhook(self, store):
        try:
            return webhook_get(store=store, webhook_id=self.kwargs["webhook_id"])
        except NotFoundError:
            raise Http404("No such webhook.") from None

    def page_url(self, store, webhook=None) -> str:
        url = reverse("review:webhooks", args=[store.pk])
        return f"{url}?webhook={webhook.pk}" if webhook is not None else url


class WebhooksView(StoreAdminMixin, ConsoleView):
    template_name = "review/webhooks.html"
    nav = "overview"

    def get(self, request, store_id):
        store = self.admin_store()
        webhooks = list(webhook_list(store=store))
        selected = next((hook for hook in webhooks if str(hook.pk) == request.GET.get("webhook")), None)
        status = request.GET.get("status") if request.GET.get("status") in WebhookDelivery.Status.values else None
        deliveries = None
        if selected is not None:
            deliveries = Paginator(webhook_delivery_list(webhook=selected, status=status),
                                   DELIVERIES_PER_PAGE).get_page(request.GET.get("page"))
        return self.render_page({
            "title": f"Webhooks of {store}",
            "store": store,
            "webhooks": webhooks,
            "selected": selected,
            "status": status or "",
            "deliveries": deliveries,
            "event_types": EventType.ALL,
            "delivery_statuses": WebhookDelivery.Status.choices,
        })


class WebhookCreateView(StoreAdminMixin, ActionView):
    def post(self, request, store_id):
        store = self.admin_store()
        form = WebhookForm(request.POST)
        if not form.is_valid():
            return self.form_refused(form)
        data = form.cleaned_data
        webhook = webhook_create(store=store, url=data["url"], event_types=data["event_types"],
                                 description=data["description"])
        return self.done(f"Webhook added. Its signing secret, shown now and after a rotation: {webhook.secret}",
                         data={"webhook": {"id": str(webhook.pk), "secret": webhook.secret}},
                         redirect_to=self.page_url(store, webhook))


class WebhookToggleView(StoreAdminMixin, ActionView):
    def post(self, request, store_id, webhook_id):
        store = self.admin_store()
        enable = request.POST.get("enable") == "1"
        webhook = webhook_update(webhook=self.webhook(store), changes={"is_active": enable})
        return self.done("Webhook enabled." if enable else "Webhook disabled.",
                         data={"webhook": {"id": str(webhook.pk), "is_active": webhook.is_active}},
                         redirect_to=self.page_url(store, webhook))


class WebhookRotateView(StoreAdminMixin, ActionView):
    def post(self, request, store_id, webhook_id):
        store = self.admin_store()
        webhook = webhook_rotate_secret(webhook=self.webhook(store))
        return self.done(f"New signing secret: {webhook.secret}",
                         data={"webhook": {"id": str(webhook.pk), "secret": webhook.secret}},
                         redirect_to=self.page_url(store, webhook))


class WebhookTestView(StoreAdminMixin, ActionView):
    def post(self, request, store_id, webhook_id):
        store = self.admin_store()
        webhook = self.webhook(store)
        delivery = webhook_send_test(webhook=webhook)
        return self.done("Test delivery queued.", data={"delivery": {"id": str(delivery.pk)}},
                         redirect_to=self.page_url(store, webhook))


class WebhookDeleteView(StoreAdminMixin, ActionView):
    def post(self, request, store_id, webhook_id):
        store = self.admin_store()
        webhook_delete(webhook=self.webhook(store))
        return self.done("Webhook deleted.", redirect_to=self.page_url(store))


class WebhookDeliveryRetryView(StoreAdminMixin, ActionView):
    def post(self, request, store_id, webhook_id, delivery_id):
        store = self.admin_store()
        webhook = self.webhook(store)
        try:
            delivery = webhook_delivery_get(webhook=webhook, delivery_id=delivery_id)
        except NotFoundError:
            raise Http404("No such delivery.") from None
        delivery = webhook_delivery_retry(delivery=delivery)
        return self.done("Delivery queued again.", data={"delivery": {"id": str(delivery.pk), "status": delivery.status}},
                         redirect_to=self.page_url(store, webhook))
