"""The review console under /review/ (memoryhub.urls): pages are GET, every change is a POST."""

from django.urls import path

from apps.review.views import auth, customers, jobs, memories, queue, sessions, webhooks

app_name = "review"

urlpatterns = [
    path("login/", auth.LoginView.as_view(), name="login"),
    path("logout/", auth.LogoutView.as_view(), name="logout"),
    # Queue
    path("", queue.QueueView.as_view(), name="queue"),
    path("queue/cards/<uuid:memory_id>/", queue.CardFragmentView.as_view(), name="queue-card"),
    path("queue/count/", queue.PendingCountView.as_view(), name="pending-count"),
    path("queue/bulk/", queue.BulkView.as_view(), name="queue-bulk"),
    # Memories
    path("memories/add/", memories.MemoryAddView.as_view(), name="memory-add"),
    path("memories/<uuid:memory_id>/", memories.MemoryView.as_view(), name="memory"),
    path("memories/<uuid:memory_id>/history/", memories.MemoryHistoryFragmentView.as_view(), name="memory-history"),
    path("memories/<uuid:memory_id>/approve/", queue.ApproveView.as_view(), name="memory-approve"),
    path("memories/<uuid:memory_id>/reject/", queue.RejectView.as_view(), name="memory-reject"),
    path("memories/<uuid:memory_id>/edit-approve/", queue.EditApproveView.as_view(), name="memory-edit-approve"),
    path("memories/<uuid:memory_id>/edit/", memories.MemoryEditView.as_view(), name="memory-edit"),
    path("memories/<uuid:memory_id>/delete/", memories.MemoryDeleteView.as_view(), name="memory-delete"),
    path("memories/<uuid:memory_id>/restore/", memories.MemoryRestoreView.as_view(), name="memory-restore"),
    # Customers: an id may hold "/" (identifier_path), so nothing else goes under customers/<id>
    path("customers/", customers.CustomerLookupView.as_view(), name="customers"),
    path("forget-customer/", customers.CustomerForgetView.as_view(), name="customer-forget"),
    path("customers/<identifier_path:user_id>/", customers.CustomerView.as_view(), name="customer"),
    # Sessions, jobs, overview
    path("stores/<uuid:store_id>/sessions/<identifier_path:external_id>/", sessions.SessionView.as_view(),
         name="session"),
    path("jobs/", jobs.JobsView.as_view(), name="jobs"),
    path("jobs/<uuid:job_id>/retry/", jobs.JobRetryView.as_view(), name="job-retry"),
    path("overview/", jobs.OverviewView.as_view(), name="overview"),
    # Webhooks of a store (tenant admins)
    path("stores/<uuid:store_id>/webhooks/", webhooks.WebhooksView.as_view(), name="webhooks"),
    path("stores/<uuid:store_id>/webhooks/add/", webhooks.WebhookCreateView.as_view(), name="webhook-create"),
    path("stores/<uuid:store_id>/webhooks/<uuid:webhook_id>/toggle/", webhooks.WebhookToggleView.as_view(),
         name="webhook-toggle"),
    path("stores/<uuid:store_id>/webhooks/<uuid:webhook_id>/rotate/", webhooks.WebhookRotateView.as_view(),
         name="webhook-rotate"),
    path("stores/<uuid:store_id>/webhooks/<uuid:webhook_id>/test/", webhooks.WebhookTestView.as_view(),
         name="webhook-test"),
    path("stores/<uuid:store_id>/webhooks/<uuid:webhook_id>/delete/", webhooks.WebhookDeleteView.as_view(),
         name="webhook-delete"),
    path("stores/<uuid:store_id>/webhooks/<uuid:webhook_id>/deliveries/<uuid:delivery_id>/retry/",
         webhooks.WebhookDeliveryRetryView.as_view(), name="webhook-delivery-retry"),
]
