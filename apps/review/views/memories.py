"""One memory: its page with the readable history, and the edits a reviewer makes from the customer page."""

from django.urls import reverse

from apps.core.actors import Actor
from apps.memories.models import Memory
from apps.memories.selectors import memory_history
from apps.memories.services import MemoryInput, memory_create, memory_delete, memory_restore, memory_update
from apps.review.diff import history
from apps.review.forms import AddMemoryForm, EditForm, ReasonForm
from apps.review.selectors.queue import card_details, source_refs
from apps.review.views.base import ActionView, ConsoleView, memory_json

DELETABLE = (Memory.Status.ACTIVE, Memory.Status.PENDING_REVIEW, Memory.Status.REJECTED)
RESTORABLE = (Memory.Status.DELETED, Memory.Status.REJECTED)


def customer_url(user_id: str, memory: Memory | None = None) -> str:
    url = reverse("review:customer", args=[user_id])
    if memory is not None:
        url += f"?memory={memory.pk}#memory-{memory.pk}"
    return url


class MemoryView(ConsoleView):
    """A memory, where it came from, what is near it, and its whole history as a diff."""

    template_name = "review/memory.html"
    nav = "customers"

    def get(self, request, memory_id):
        memory = self.access.memory(memory_id)
        memory.source_refs = source_refs(memory)
        return self.render_page({
            "title": "Memory",
            "memory": memory,
            "details": card_details([memory])[memory.pk],
            "history": history(memory_history(memory=memory)),
            "edit_form": EditForm(initial={"content": memory.content, "memory_type": memory.memory_type}),
        })


class MemoryHistoryFragmentView(ConsoleView):
    """The history part of the memory page, for the customer page to open in place."""

    def get(self, request, memory_id):
        memory = self.access.memory(memory_id)
        return self.render_fragment("review/_history.html", {"memory": memory,
                                                            "history": history(memory_history(memory=memory))})


class MemoryEditView(ActionView):
    def post(self, request, memory_id):
        memory = self.access.memory(memory_id)
        form = EditForm(request.POST)
        if not form.is_valid():
            return self.form_refused(form)
        changes = form.changes(memory)
        if changes:
            memory = memory_update(memory=memory, changes=changes, actor=Actor.for_user(request.user),
                                   reason=form.cleaned_data["reason"])
        return self.done("Saved." if changes else "Nothing changed.", data={"memory": memory_json(memory)})


class MemoryDeleteView(ActionView):
    def post(self, request, memory_id):
        memory = self.access.memory(memory_id)
        form = ReasonForm(request.POST)
        form.is_valid()
        memory = memory_delete(memory=memory, actor=Actor.for_user(request.user),
                               reason=form.cleaned_data.get("reason") or "deleted in review", from_statuses=DELETABLE)
        return self.done("Deleted; it can be restored.", data={"memory": memory_json(memory)})


class MemoryRestoreView(ActionView):
    def post(self, request, memory_id):
        memory = self.access.memory(memory_id)
        form = ReasonForm(request.POST)
        form.is_valid()
        memory = memory_restore(memory=memory, actor=Actor.for_user(request.user),
                                reason=form.cleaned_data.get("reason") or "", from_statuses=RESTORABLE)
        return self.done("Restored.", data={"memory": memory_json(memory)})


class MemoryAddView(ActionView):
    def post(self, request):
        form = AddMemoryForm(request.POST)
        if not form.is_valid():
            return self.form_refused(form)
        data = form.cleaned_data
        store = self.access.store(data["store"])
        result = memory_create(
            store=store,
            item=MemoryInput(user_id=data["user_id"], content=data["content"], memory_type=data["memory_type"],
                             source=Memory.Source.ADMIN),
            actor=Actor.for_user(request.user),
            reason=data["reason"] or "added in review",
        )
        memory = result.memory
        message = "This customer already has that memory." if result.duplicate else "Added."
        return self.done(message, data={"memory": memory_json(memory), "duplicate": result.duplicate},
                         redirect_to=customer_url(memory.user_id, memory))
