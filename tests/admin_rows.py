"""Rows for admin tests: a tenant's sessions, each with one of every row the admin lists (messages,
working memory, scratchpad, checkpoint, event, extraction job, memory and revision, API key, store), and
with each session another tenant the world's admin administers (a tenant and a membership more)."""

from apps.conversations.models import Session
from apps.conversations.services import (
    MessageInput,
    WorkingMemoryWrite,
    checkpoint_create,
    messages_ingest,
    scratchpad_append,
    session_spawn,
)
from apps.core.actors import Actor
from apps.memories.services import MemoryInput, memory_create, store_create
from apps.tenancy.models import Membership
from apps.tenancy.services import api_key_issue, membership_set, tenant_create


def add_admin_rows(world, count: int, stores=None) -> list[Session]:
    """`count` more sessions in `world`'s stores (taken in turn), with their rows, through the services.

    Every list of the admin of `world` grows with `count`: for the lists of stores, tenants and memberships,
    each session comes with a store of its own (no session in it) and a tenant `<slug>-<index>` that
    world.admin administers too.
    """
    actor = Actor.system("test")
    stores = stores or [world.store]
    slug = world.tenant.slug
    start = Session.objects.filter(store__tenant=world.tenant).count()
    sessions = []
    for index in range(start, start + count):
        store = stores[index % len(stores)]
        external_id, user_id = f"{slug}-session-{index}", f"{slug}-user"
        session = session_spawn(
            store=store, external_id=external_id, user_id=user_id, actor=actor,
            working_memory=[WorkingMemoryWrite(key=f"{slug}-key-{index}", value=index)],
        ).session  # fmt: skip
        messages_ingest(  # the first user turn also queues an extraction job
            store=store, session_external_id=external_id, user_id=user_id,
            messages=[MessageInput(role="user", content=f"{slug} says hello {index}")],
        )  # fmt: skip
        scratchpad_append(session=session, content=f"{slug} note {index}")
        checkpoint_create(session=session, description=f"{slug} checkpoint {index}", actor=actor)
        memory_create(store=store, item=MemoryInput(user_id=user_id, content=f"{slug} memory {index}"), actor=actor)
        api_key_issue(tenant=world.tenant, name=f"{slug}-key-{index}", scopes=["read"])
        store_create(tenant=world.tenant, name=f"{slug}-store-{index}", embedding_provider="hash")
        other = tenant_create(name=f"{world.tenant.name} {index}", slug=f"{slug}-{index}")
        membership_set(tenant=other, user=world.admin, role=Membership.Role.ADMIN)
        sessions.append(session)
    return sessions
