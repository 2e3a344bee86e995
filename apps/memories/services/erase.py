"""Removing a memory for good, with its history and the admin's log entries about it."""

from django.db import transaction

from apps.core.admin_log import admin_log_forget
from apps.memories.events import Event, EventType
from apps.memories.models import Memory, MemoryRevision
from apps.memories.services.events import events_publish
from apps.memories.services.webhooks import webhook_deliveries_forget_memory


def memory_hard_delete(*, memory: Memory) -> None:
    """Remove a memory and its whole history for good."""
    with transaction.atomic():
        admin_log_forget(Memory.objects.filter(pk=memory.pk))
        MemoryRevision.objects.filter(memory=memory).delete()
        webhook_deliveries_forget_memory(memory=memory)
        # Nothing of the erased content: a listener learns which memory to drop, not what it said.
        events_publish([Event(type=EventType.MEMORY_DELETED, store_id=str(memory.store_id), store_name=memory.store.name,
                              data={"memory": {"id": str(memory.pk), "user_id": memory.user_id}, "erased": True})])
        memory.delete()
