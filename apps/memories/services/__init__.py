"""Every change to stores and memories; each memory change writes a MemoryRevision (see revisions)."""

from apps.memories.services.create import MemoryInput, MemoryWriteResult, memory_bulk_create, memory_create
from apps.memories.services.erase import memory_hard_delete
from apps.memories.services.revisions import SNAPSHOT_FIELDS, memory_snapshot
from apps.memories.services.stores import store_create, store_delete, store_embedders_load, store_update
from apps.memories.services.update import (
    memory_add_provenance,
    memory_approve,
    memory_delete,
    memory_invalidate,
    memory_reject,
    memory_restore,
    memory_set_status,
    memory_supersede,
    memory_update,
)

__all__ = [
    "SNAPSHOT_FIELDS",
    "MemoryInput",
    "MemoryWriteResult",
    "memory_add_provenance",
    "memory_approve",
    "memory_bulk_create",
    "memory_create",
    "memory_delete",
    "memory_hard_delete",
    "memory_invalidate",
    "memory_reject",
    "memory_restore",
    "memory_set_status",
    "memory_snapshot",
    "memory_supersede",
    "memory_update",
    "store_create",
    "store_embedders_load",
    "store_delete",
    "store_update",
]
