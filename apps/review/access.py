"""Who may see and do what in the review console: the one place that decides.

A staff user sees the stores of their tenants (every tenant for a superuser; tenants_for_user), and in
them may review memories: approve, reject, edit, delete, restore. A tenant admin may also forget a customer,
retry a failed extraction job (as in the Django admin) and manage the store's webhooks. Another tenant's store or memory is
not found (404), so the console never confirms that it exists; an action the user's role does not allow
on an object they can see is refused (403). A staff user of no tenant sees empty pages.
"""

from dataclasses import dataclass, field
from uuid import UUID

from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, QuerySet
from django.http import Http404

from apps.memories.models import Memory, MemoryStore
from apps.tenancy.models import Membership
from apps.tenancy.selectors import tenants_for_user


@dataclass(frozen=True)
class ConsoleAccess:
    user: object
    stores: tuple[MemoryStore, ...]  # visible, with their tenants; each has `is_admin`
    _by_id: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def for_user(cls, user) -> "ConsoleAccess":
        """The stores `user` may see, each marked with whether they administer its tenant (one query)."""
        administered = tenants_for_user(user, role=Membership.Role.ADMIN).filter(pk=OuterRef("tenant_id"))
        stores = tuple(
            MemoryStore.objects.filter(tenant__in=tenants_for_user(user))
            .select_related("tenant")
            .annotate(is_admin=Exists(administered))
            .order_by("tenant__name", "name")
        )
        return cls(user=user, stores=stores, _by_id={store.pk: store for store in stores})

    @classmethod
    def for_request(cls, request) -> "ConsoleAccess":
        """Cached on the request: every part of a page asks the same question once."""
        access = getattr(request, "_review_access", None)
        if access is None:
            access = request._review_access = cls.for_user(request.user)
        return access

    # --- Stores -------------------------------------------------------------------------------------

    @property
    def store_ids(self) -> list:
        return list(self._by_id)

    @property
    def admin_stores(self) -> list[MemoryStore]:
        return [store for store in self.stores if store.is_admin]

    @property
    def is_admin_anywhere(self) -> bool:
        return any(store.is_admin for store in self.stores)

    def store(self, store_id) -> MemoryStore:
        """A visible store; any other is not found."""
        store = self._by_id.get(_as_uuid(store_id))
        if store is None:
            raise Http404("No such store.")
        return store

    def administers(self, store: MemoryStore) -> bool:
        return bool(getattr(self._by_id.get(store.pk), "is_admin", False))

    def require_admin(self, store: MemoryStore) -> None:
        if not self.administers(store):
            raise PermissionDenied("This needs the admin role in the store's tenant.")

    # --- Memories -----------------------------------------------------------------------------------

    def memories(self) -> QuerySet[Memory]:
        """Memories of the visible stores, without the columns a page never shows."""
        return Memory.objects.filter(store_id__in=self.store_ids).defer("embedding", "search_vector")

    def memory(self, memory_id) -> Memory:
        """A memory of a visible store, with its store (and tenant) attached without a join."""
        memory = self.memories().filter(pk=_as_uuid(memory_id)).first() if self.stores else None
        if memory is None:
            raise Http404("No such memory.")
        memory.store = self._by_id[memory.store_id]
        return memory

    def attach_stores(self, rows) -> list:
        """`rows` (memories, sessions, jobs of visible stores) with their store set from the cache."""
        rows = list(rows)
        for row in rows:
            row.store = self._by_id[row.store_id]
        return rows

    # --- What the role allows -----------------------------------------------------------------------

    def can_review(self, store: MemoryStore) -> bool:
        """Approve, reject, edit, delete and restore memories: any member of the tenant."""
        return store.pk in self._by_id

    def can_retry_jobs(self, store: MemoryStore) -> bool:
        return self.administers(store)

    def can_forget_customers(self, store: MemoryStore) -> bool:
        return self.administers(store)

    def can_manage_webhooks(self, store: MemoryStore) -> bool:
        return self.administers(store)


def _as_uuid(value) -> UUID | None:
    if isinstance(value, UUID):
        return value
    try:
        return UUID(str(value))
    except ValueError:
        return None
