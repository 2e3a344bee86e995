"""What the console does that is more than one service call: each composes the services of the apps below,
so every change still leaves the revision those write, attributed to the staff user."""

from dataclasses import dataclass, field

from django.db import transaction

from apps.conversations.services.erase import user_erase
from apps.core.actors import Actor
from apps.core.errors import ApplicationError
from apps.memories.models import Memory, MemoryStore
from apps.memories.services import memory_approve, memory_reject, memory_update

PENDING = (Memory.Status.PENDING_REVIEW,)


def memory_edit_and_approve(*, memory: Memory, changes: dict, actor: Actor, reason: str = "") -> Memory:
    """Correct a pending memory and publish it, together: both revisions or neither."""
    with transaction.atomic():
        if changes:
            memory = memory_update(memory=memory, changes=changes, actor=actor, reason=reason or "corrected in review",
                                   from_statuses=PENDING)
        return memory_approve(memory=memory, actor=actor, from_statuses=PENDING)


@dataclass
class BulkOutcome:
    done: list[Memory] = field(default_factory=list)
    refused: list[tuple[Memory, str]] = field(default_factory=list)


def memory_bulk_review(*, memories: list[Memory], decision: str, actor: Actor, reason: str = "") -> BulkOutcome:
    """Approve or reject each pending memory; one that is no longer pending (or clashes) is refused alone."""
    if decision not in ("approve", "reject"):
        raise ApplicationError(f"Unknown decision {decision!r}.", code="validation_error")
    if decision == "reject" and not reason.strip():
        raise ApplicationError("A rejection needs a reason.", code="validation_error")
    outcome = BulkOutcome()
    for memory in memories:
        try:
            if decision == "approve":
                done = memory_approve(memory=memory, actor=actor, reason=reason, from_statuses=PENDING)
            else:
                done = memory_reject(memory=memory, actor=actor, reason=reason, from_statuses=PENDING)
        except ApplicationError as exc:
            outcome.refused.append((memory, exc.message))
        else:
            outcome.done.append(done)
    return outcome


@dataclass(frozen=True)
class ForgetReport:
    user_id: str
    per_store: list[tuple[MemoryStore, dict]]

    @property
    def totals(self) -> dict:
        totals: dict = {}
        for _, counts in self.per_store:
            for name, value in counts.items():
                totals[name] = totals.get(name, 0) + value
        return totals


def customer_forget(*, stores: list[MemoryStore], user_id: str) -> ForgetReport:
    """Erase a customer from each of `stores` (the caller has checked it administers them), all or none."""
    with transaction.atomic():
        per_store = [(store, user_erase(store=store, user_id=user_id)) for store in stores]
    return ForgetReport(user_id=user_id, per_store=per_store)
