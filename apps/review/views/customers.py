"""The customer page: everything about one customer, search by meaning among their memories, and forget."""

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseRedirect
from django.urls import reverse

from apps.core.identifiers import normalise_identifier
from apps.memories.models import Memory
from apps.review.forms import AddMemoryForm, CustomerSearchForm, ForgetForm
from apps.review.selectors import customers as selectors
from apps.review.selectors.queue import source_refs
from apps.review.services import customer_forget
from apps.review.views.base import ActionView, ConsoleView
from apps.review.views.jobs import job_rows

SOURCE_LINKS_SHOWN = 5


class CustomerLookupView(ConsoleView):
    """?q=<id>: an exact id opens the customer's page; otherwise the ids that start with it."""

    template_name = "review/customers.html"
    nav = "customers"

    def get(self, request):
        query = normalise_identifier((request.GET.get("q") or "").strip())
        matches = selectors.customer_lookup(self.access, query)
        if query and query in matches:
            return HttpResponseRedirect(reverse("review:customer", args=[query]))
        return self.render_page({"title": "Customers", "query": query, "matches": matches})


class CustomerView(ConsoleView):
    template_name = "review/customer.html"
    nav = "customers"

    def get(self, request, user_id):
        access = self.access
        status = request.GET.get("status") or ""
        if status not in Memory.Status.values:
            status = ""
        memories = selectors.customer_memories(access, user_id, status=status or None)
        page_number = request.GET.get("page")
        focus = request.GET.get("memory")
        if focus and not page_number:
            try:
                focused = access.memory(focus)
            except Http404:  # a stale or foreign link simply opens the first page
                focused = None
            if focused is not None and focused.user_id == user_id:
                page_number = selectors.page_number_of(memories, focused)
        page = selectors.paginate(memories, page_number, selectors.MEMORIES_PER_PAGE)
        page_memories = access.attach_stores(page.object_list)
        for memory in page_memories:
            memory.source_refs = source_refs(memory)[:SOURCE_LINKS_SHOWN]
        counts = selectors.customer_memory_counts(access, user_id)
        sessions = selectors.customer_sessions(access, user_id)
        search_form = CustomerSearchForm(request.GET)
        search_form.is_valid()
        search_query = search_form.cleaned_data.get("q") or ""
        hits = (selectors.customer_search(access, user_id, search_query, store_ids=counts.store_ids)
                if search_query else None)
        customer_stores = [store for store in access.stores if store.pk in counts.store_ids
                           or any(session.store_id == store.pk for session in sessions)]
        forget_stores = [store for store in access.stores if access.can_forget_customers(store)]
        return self.render_page({
            "title": f"Customer {user_id}",
            "user_id": user_id,
            "status": status,
            "statuses": Memory.Status.choices,
            "page": page,
            "memories": page_memories,
            "counts": counts,
            "sessions": sessions,
            "working_state": selectors.working_state_of(sessions),
            "job_rows": job_rows(access, selectors.customer_jobs(access, user_id)),
            "search_query": search_query,
            "hits": hits,
            "customer_stores": customer_stores,
            "forget_stores": forget_stores,
            "unforgettable_stores": [store for store in customer_stores if store not in forget_stores],
            "add_form": AddMemoryForm(initial={"user_id": user_id}),
            "type_choices": Memory.Type.choices,
        })


class CustomerForgetView(ActionView):
    """Erase the customer from every store of the tenants the user administers, after a typed confirmation."""

    def post(self, request):
        form = ForgetForm(request.POST)
        if not form.is_valid():
            return self.form_refused(form)
        user_id = form.cleaned_data["user_id"]
        stores = [store for store in self.access.stores if self.access.can_forget_customers(store)]
        if not stores:
            raise PermissionDenied("Forgetting a customer needs the admin role in a tenant.")
        report = customer_forget(stores=stores, user_id=user_id)
        totals = report.totals
        message = (f"Forgot {user_id} in {len(stores)} store(s): {totals.get('memories', 0)} memories, "
                   f"{totals.get('revisions', 0)} revisions, {totals.get('sessions', 0)} sessions, "
                   f"{totals.get('messages', 0)} messages.")
        kept = [store for store in self.access.stores if store not in stores]
        if kept:
            message += f" Not erased where you are not an admin: {', '.join(str(store) for store in kept)}."
        return self.done(message, redirect_to=reverse("review:customer", args=[user_id]), data={
            "user_id": user_id, "totals": totals,
            "stores": [{"store": str(store), "counts": counts} for store, counts in report.per_store],
        })
