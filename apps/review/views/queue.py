"""The review queue: pending memories as cards, their actions one by one or in bulk, and the pieces the
page's script asks for (a new card, the counts)."""

import uuid

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, JsonResponse
from django.urls import reverse

from apps.core.actors import Actor
from apps.memories.models import Memory
from apps.memories.services import memory_approve, memory_reject
from apps.review.forms import BulkForm, EditForm, QueueFilterForm, RejectForm
from apps.review.selectors.customers import paginate
from apps.review.selectors.queue import QueueFilters, card_details, queue_memories
from apps.review.services import PENDING, memory_bulk_review, memory_edit_and_approve
from apps.review.views.base import ActionView, ConsoleView, memory_json

CARDS_PER_PAGE = 25


def queue_filters(access, params) -> tuple[QueueFilterForm, QueueFilters]:
    """The filters of the query string; a value that is not valid (or a store the user cannot see) is dropped."""
    form = QueueFilterForm(params, stores=access.stores)
    form.is_valid()
    data = form.cleaned_data
    store_id = data.get("store")
    if store_id is not None and store_id not in access.store_ids:
        store_id = None
    filters = QueueFilters(
        store_id=store_id, user_id=data.get("customer") or None, memory_type=data.get("type") or None,
        extractor=data.get("extractor") or None, min_confidence=data.get("min_confidence"),
    )
    return form, filters


def cards(memories: list[Memory]) -> list[dict]:
    details = card_details(memories)
    return [{"memory": memory, "details": details[memory.pk]} for memory in memories]


class QueueView(ConsoleView):
    template_name = "review/queue.html"
    nav = "queue"

    def get(self, request):
        form, filters = queue_filters(self.access, request.GET)
        page = paginate(queue_memories(self.access, filters), request.GET.get("page"), CARDS_PER_PAGE)
        memories = self.access.attach_stores(page.object_list)
        live_stores = [store for store in self.access.stores if filters.store_id in (None, store.pk)]
        query = request.GET.copy()
        query.pop("page", None)
        return self.render_page({
            "title": "Review queue",
            "filter_form": form,
            "filters": filters,
            "page": page,
            "cards": cards(memories),
            "matching_count": page.paginator.count,
            "filter_query": query.urlencode(),
            "filtering": any(value not in (None, "") for value in vars(filters).values()),
            "live_stores": live_stores,
        })


class CardFragmentView(ConsoleView):
    """One card, rendered by the page's template, for the script to insert when a memory arrives live.
    204 when the memory is not pending or does not match the queue's filters (sent as the query string)."""

    def get(self, request, memory_id):
        memory = self.access.memory(memory_id)
        _, filters = queue_filters(self.access, request.GET)
        matching = queue_memories(self.access, filters).filter(pk=memory.pk)
        memory = next(iter(self.access.attach_stores(matching)), None)
        if memory is None:
            return HttpResponse(status=204)
        return self.render_fragment("review/_card.html", {"card": cards([memory])[0], "next": request.GET.get(
            "next") or reverse("review:queue")})


class PendingCountView(ConsoleView):
    """The pending badge's number, and how many match the queue's filters (the query string)."""

    def get(self, request):
        _, filters = queue_filters(self.access, request.GET)
        context = self.page_context()
        return JsonResponse({"pending_count": context["pending_count"],
                             "matching_count": queue_memories(self.access, filters).count()})


class ApproveView(ActionView):
    def post(self, request, memory_id):
        memory = self.access.memory(memory_id)
        memory = memory_approve(memory=memory, actor=Actor.for_user(request.user), from_statuses=PENDING)
        return self.done("Approved.", data={"memory": memory_json(memory)})


class RejectView(ActionView):
    def post(self, request, memory_id):
        memory = self.access.memory(memory_id)
        form = RejectForm(request.POST)
        if not form.is_valid():
            return self.form_refused(form)
        memory = memory_reject(memory=memory, actor=Actor.for_user(request.user), reason=form.cleaned_data["reason"],
                               from_statuses=PENDING)
        return self.done("Rejected.", data={"memory": memory_json(memory)})


class EditApproveView(ActionView):
    def post(self, request, memory_id):
        memory = self.access.memory(memory_id)
        form = EditForm(request.POST)
        if not form.is_valid():
            return self.form_refused(form)
        memory = memory_edit_and_approve(memory=memory, changes=form.changes(memory),
                                         actor=Actor.for_user(request.user), reason=form.cleaned_data["reason"])
        return self.done("Edited and approved.", data={"memory": memory_json(memory)})


class BulkView(ActionView):
    def post(self, request):
        form = BulkForm(request.POST)
        if not form.is_valid():
            return self.form_refused(form)
        ids = list(dict.fromkeys(form.cleaned_data["memory"]))
        # All of them or none: one id the user cannot see answers 404 and changes nothing.
        try:
            uuids = [uuid.UUID(value) for value in ids]
        except ValueError:
            raise Http404("No such memory.") from None
        found = {memory.pk: memory for memory in self.access.attach_stores(self.access.memories().filter(pk__in=uuids))}
        if len(found) != len(uuids):
            raise Http404("No such memory.")
        memories = [found[pk] for pk in uuids]
        if any(not self.access.can_review(memory.store) for memory in memories):
            raise PermissionDenied
        decision = form.cleaned_data["decision"]
        outcome = memory_bulk_review(memories=memories, decision=decision, actor=Actor.for_user(request.user),
                                     reason=form.cleaned_data["reason"])
        verb = "Approved" if decision == "approve" else "Rejected"
        message = f"{verb} {len(outcome.done)} of {len(memories)}."
        if outcome.refused:
            message += " Not changed: " + "; ".join(
                f"“{memory.content[:40]}”: {reason}" for memory, reason in outcome.refused[:5])
        return self.done(message, data={
            "done": [str(memory.pk) for memory in outcome.done],
            "refused": [{"id": str(memory.pk), "message": reason} for memory, reason in outcome.refused],
        })

