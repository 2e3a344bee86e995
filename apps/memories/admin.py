"""Admin for memory stores, memories and their history.

Access follows the rule in apps.tenancy.admin: members of a tenant see its stores, memories and
revisions and may approve or reject memories; its admins also create and edit stores, add and edit
memories, and soft delete or restore them. Revisions are read-only for everyone. Every write is a
service call made with Actor.for_user(the staff user), so each memory change leaves one revision.
"""

from django import forms
from django.conf import settings
from django.contrib import admin
from django.contrib.postgres.forms import SimpleArrayField
from django.utils.text import Truncator
from rest_framework import serializers

from apps.core.actors import Actor
from apps.core.admin import LatestRowsInline, ServiceModelForm
from apps.core.embeddings import SUPPORTED_DIMENSIONS
from apps.core.errors import ApplicationError
from apps.core.fields import MetadataField
from apps.core.identifiers import IdentifierFormField
from apps.memories.models import Memory, MemoryRevision, MemoryStore
from apps.memories.services import (
    MemoryInput,
    memory_approve,
    memory_create,
    memory_delete,
    memory_reject,
    memory_restore,
    memory_update,
    store_create,
    store_update,
)
from apps.tenancy.admin_base import ReadOnlyTenantAdmin, TenantScopedAdmin


def _clean_metadata(value):
    """The API's rules for a JSON object (size, finite numbers, storable strings), as a form error."""
    try:
        return MetadataField().run_validation(value)
    except serializers.ValidationError as exc:
        raise forms.ValidationError([str(detail) for detail in exc.detail]) from exc


# --- Stores -----------------------------------------------------------------------------------------


_STORE_MUTABLE_FIELDS = [
    "description", "review_policy", "search_defaults", "max_content_length", "extraction_config",
    "working_memory_config",
]
_STORE_FIXED_FIELDS = ["tenant", "name", "embedding_provider", "embedding_model", "embedding_dimension"]


class StoreCreateForm(ServiceModelForm):
    embedding_model = forms.CharField(max_length=200, required=False, help_text="Blank: the provider's default.")
    embedding_dimension = forms.TypedChoiceField(
        choices=[("", "Provider default"), *[(d, d) for d in SUPPORTED_DIMENSIONS]],
        coerce=int,
        empty_value=None,
        required=False,
    )
    max_content_length = forms.IntegerField(
        min_value=16, max_value=1_000_000, required=False, help_text="Characters; blank: the server default."
    )

    class Meta:
        model = MemoryStore
        fields = [*_STORE_FIXED_FIELDS, *_STORE_MUTABLE_FIELDS]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["embedding_provider"].initial = settings.MEMORYHUB_DEFAULT_EMBEDDER

    def run_service(self):
        data = self.cleaned_data
        return store_create(
            tenant=data["tenant"],
            name=data["name"],
            description=data["description"],
            embedding_provider=data["embedding_provider"],
            embedding_model=data["embedding_model"] or None,
            embedding_dimension=data["embedding_dimension"],
            review_policy=data["review_policy"],
            search_defaults=data["search_defaults"] or {},
            max_content_length=data["max_content_length"],
            extraction_config=data["extraction_config"] or {},
            working_memory_config=data["working_memory_config"] or {},
        )


class StoreChangeForm(ServiceModelForm):
    max_content_length = forms.IntegerField(min_value=16, max_value=1_000_000)

    class Meta:
        model = MemoryStore
        fields = _STORE_MUTABLE_FIELDS

    def clean_search_defaults(self):
        return self.cleaned_data["search_defaults"] or {}

    def clean_extraction_config(self):
        return self.cleaned_data["extraction_config"] or {}

    def clean_working_memory_config(self):
        return self.cleaned_data["working_memory_config"] or {}

    def run_service(self):
        return store_update(store=self.unchanged, changes=self.changed_values(_STORE_MUTABLE_FIELDS))


@admin.register(MemoryStore)
class MemoryStoreAdmin(TenantScopedAdmin):
    add_form = StoreCreateForm
    form = StoreChangeForm
    list_display = [
        "name", "tenant", "embedding_provider", "embedding_model", "embedding_dimension", "review_policy", "created_at",
    ]  # fmt: skip
    list_filter = ["tenant", "embedding_provider", "review_policy"]
    list_select_related = ["tenant"]
    search_fields = ["name", "description"]

    def get_fields(self, request, obj=None):
        if obj is None:
            return [*_STORE_FIXED_FIELDS, *_STORE_MUTABLE_FIELDS]
        return [*_STORE_FIXED_FIELDS, *_STORE_MUTABLE_FIELDS, "created_at", "updated_at"]

    def get_readonly_fields(self, request, obj=None):
        # Vectors of different models or dimensions cannot be compared, so the embedder is fixed.
        return [] if obj is None else [*_STORE_FIXED_FIELDS, "created_at", "updated_at"]


# --- Memories ---------------------------------------------------------------------------------------


_MEMORY_EDITABLE_FIELDS = ["content", "memory_type", "status", "metadata", "tags", "importance", "confidence"]
_MEMORY_READONLY_FIELDS = [
    "store", "user_id", "agent_id", "session_id", "source", "provenance", "valid_from", "valid_to",
    "expires_at", "superseded_by", "embedding_dimension", "created_at", "updated_at",
]  # fmt: skip
# Statuses a person may set by hand (as in the API); `superseded` is set by consolidation.
_SETTABLE_STATUSES = [Memory.Status.ACTIVE, Memory.Status.PENDING_REVIEW, Memory.Status.REJECTED, Memory.Status.DELETED]


class _MemoryFormFields(ServiceModelForm):
    tags = SimpleArrayField(
        forms.CharField(max_length=64),
        required=False,
        max_length=settings.MEMORYHUB_MAX_TAGS,
        help_text="Comma-separated.",
    )
    importance = forms.FloatField(min_value=0.0, max_value=1.0)
    confidence = forms.FloatField(min_value=0.0, max_value=1.0)

    def clean_metadata(self):
        return _clean_metadata(self.cleaned_data["metadata"] or {})

    def _limit_statuses(self, statuses):
        if "status" not in self.fields:  # a view-only page has no form fields
            return
        labels = dict(Memory.Status.choices)
        self.fields["status"].choices = [(status, labels[status]) for status in statuses]


class MemoryCreateForm(_MemoryFormFields):
    class Meta:
        model = Memory
        fields = ["store", "user_id", "agent_id", "session_id", *_MEMORY_EDITABLE_FIELDS]
        field_classes = {name: IdentifierFormField for name in ("user_id", "agent_id", "session_id")}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._limit_statuses(Memory.LIVE_STATUSES)

    def run_service(self):
        data = self.cleaned_data
        item = MemoryInput(
            user_id=data["user_id"],
            content=data["content"],
            memory_type=data["memory_type"],
            agent_id=data["agent_id"],
            session_id=data["session_id"],
            metadata=data["metadata"],
            tags=data["tags"],
            importance=data["importance"],
            confidence=data["confidence"],
            status=data["status"],
            source=Memory.Source.ADMIN,
        )
        result = memory_create(store=data["store"], item=item, actor=self.actor)
        if result.duplicate:
            raise ApplicationError(
                f"This user already has a live memory with this content (id {result.memory.pk}).",
                code="duplicate_memory",
                details={"content": ["Duplicate."]},
            )
        return result.memory


class MemoryChangeForm(_MemoryFormFields):
    class Meta:
        model = Memory
        fields = _MEMORY_EDITABLE_FIELDS

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        current = self.instance.status
        self._limit_statuses([*_SETTABLE_STATUSES, *([current] if current not in _SETTABLE_STATUSES else [])])

    def run_service(self):
        changes = self.changed_values(_MEMORY_EDITABLE_FIELDS)
        return memory_update(memory=self.unchanged, changes=changes, actor=self.actor, reason="edited in admin")


class MemoryRevisionInline(LatestRowsInline):
    model = MemoryRevision
    fk_name = "memory"
    verbose_name = "revision"
    verbose_name_plural = "history"
    fields = ["created_at", "action", "changed_fields", "actor_type", "actor_label", "reason", "before", "after"]
    readonly_fields = fields
    ordering = ["id"]
    latest_first = ["-id"]
    extra = 0
    can_delete = False

    def has_view_permission(self, request, obj=None):
        return True  # the memory page itself is already scoped

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Memory)
class MemoryAdmin(TenantScopedAdmin):
    tenant_path = "store__tenant"
    own_history = (MemoryRevision, "memory")
    add_form = MemoryCreateForm
    form = MemoryChangeForm
    list_display = ["short_content", "user_id", "store", "memory_type", "status", "source", "created_at"]
    list_filter = ["store", "status", "memory_type", "source"]
    list_select_related = ["store__tenant"]
    search_fields = ["content", "user_id"]
    inlines = [MemoryRevisionInline]
    actions = ["approve", "reject", "soft_delete", "restore"]

    def get_queryset(self, request):
        # Vectors are large and never shown.
        return super().get_queryset(request).defer("embedding", "search_vector")

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []

    # embedding, content_hash and search_vector are in none of these lists, so they are never rendered.
    def get_fields(self, request, obj=None):
        if obj is None:
            return ["store", "user_id", "agent_id", "session_id", *_MEMORY_EDITABLE_FIELDS]
        return [*_MEMORY_EDITABLE_FIELDS, *_MEMORY_READONLY_FIELDS]

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else _MEMORY_READONLY_FIELDS

    @admin.display(description="content", ordering="content")
    def short_content(self, obj):
        return Truncator(obj.content).chars(80)

    def has_review_permission(self, request):
        """Approve and reject: any member (the rows are already limited to the user's tenants)."""
        return self.has_view_permission(request)

    def _set_status(self, request, queryset, service, verb: str, *, statuses, needs_edit_role=True) -> None:
        actor = Actor.for_user(request.user)

        def act(memory):
            service(memory=memory, actor=actor, from_statuses=tuple(statuses))

        self.act_on_selected(request, queryset, act, done=f"{verb} {{count}} memory(ies).",
                             label=lambda memory: f"“{Truncator(memory.content).chars(40)}”",
                             needs_edit_role=needs_edit_role)

    @admin.action(description="Approve selected memories (pending review → active)", permissions=["review"])
    def approve(self, request, queryset):
        pending = [Memory.Status.PENDING_REVIEW]
        self._set_status(request, queryset, memory_approve, "Approved", statuses=pending, needs_edit_role=False)

    @admin.action(description="Reject selected memories (pending review → rejected)", permissions=["review"])
    def reject(self, request, queryset):
        pending = [Memory.Status.PENDING_REVIEW]
        self._set_status(request, queryset, memory_reject, "Rejected", statuses=pending, needs_edit_role=False)

    @admin.action(description="Soft delete selected memories", permissions=["change"])
    def soft_delete(self, request, queryset):
        live = [status for status in Memory.Status.values if status != Memory.Status.DELETED]
        self._set_status(request, queryset, memory_delete, "Deleted", statuses=live)

    @admin.action(description="Restore selected memories (deleted or rejected → active)", permissions=["change"])
    def restore(self, request, queryset):
        restorable = [Memory.Status.DELETED, Memory.Status.REJECTED]
        self._set_status(request, queryset, memory_restore, "Restored", statuses=restorable)


# --- History ----------------------------------------------------------------------------------------


@admin.register(MemoryRevision)
class MemoryRevisionAdmin(ReadOnlyTenantAdmin):
    """Append-only: viewable by members, changeable and deletable by no one."""

    tenant_path = "store__tenant"
    list_display = ["created_at", "memory_content", "store", "user_id", "action", "actor_type", "actor_label"]
    list_filter = ["action", "actor_type", "store"]
    search_fields = ["actor_label", "user_id", "=memory__id"]
    ordering = ["-id"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("store__tenant", "memory")
            .defer("memory__embedding", "memory__search_vector")
        )

    @admin.display(description="memory")
    def memory_content(self, obj):
        return Truncator(obj.memory.content).chars(60)
