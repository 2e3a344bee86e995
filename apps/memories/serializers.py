from django.conf import settings
from rest_framework import serializers

from apps.core.api import QuerySerializer
from apps.core.embeddings import PROVIDERS, SUPPORTED_DIMENSIONS
from apps.core.fields import (
    CleanCharField,
    FiniteFloatField,
    IdentifierField,
    MetadataField,
    StrictIntegerField,
    iso_datetime,
)
from apps.memories.models import Memory, MemoryRevision, MemoryStore
from apps.memories.search import SEARCH_MODES
from apps.memories.store_settings import (
    extraction_settings_for,
    extractor_problem,
    resolve_extractor,
    working_state_settings_for,
)

# --- Stores -----------------------------------------------------------------------------------------


class StoreCreateInput(serializers.Serializer):
    name = serializers.SlugField(max_length=100)
    description = CleanCharField(required=False, allow_blank=True, max_length=5000, default="")
    embedding_provider = serializers.ChoiceField(choices=PROVIDERS, required=False)
    embedding_model = CleanCharField(required=False, max_length=200)
    embedding_dimension = StrictIntegerField(
        required=False, help_text=f"One of {', '.join(map(str, SUPPORTED_DIMENSIONS))}."
    )
    review_policy = serializers.ChoiceField(choices=MemoryStore.ReviewPolicy.choices, required=False, default="auto")
    search_defaults = MetadataField(required=False, default=dict)
    max_content_length = StrictIntegerField(required=False, min_value=16, max_value=1_000_000)
    extraction_config = MetadataField(required=False, default=dict)
    working_memory_config = MetadataField(required=False, default=dict)


class StoreUpdateInput(serializers.Serializer):
    description = CleanCharField(required=False, allow_blank=True, max_length=5000)
    review_policy = serializers.ChoiceField(choices=MemoryStore.ReviewPolicy.choices, required=False)
    search_defaults = MetadataField(required=False)
    max_content_length = StrictIntegerField(required=False, min_value=16, max_value=1_000_000)
    extraction_config = MetadataField(required=False)
    working_memory_config = MetadataField(required=False)
    # Accepted only to explain that they are fixed.
    name = serializers.CharField(required=False)
    embedding_provider = serializers.CharField(required=False)
    embedding_model = serializers.CharField(required=False)
    embedding_dimension = StrictIntegerField(required=False)


class StoreOutput(serializers.ModelSerializer):
    extraction_settings = serializers.SerializerMethodField(
        help_text="Extraction settings in effect: extraction_config (the store's overrides) over the defaults."
    )
    extractor_status = serializers.SerializerMethodField(
        help_text="Whether the store's extractor can run on this server: {ready, problem, extractor}; problem "
                  "says what to configure when it cannot, extractor is the one its jobs run now (auto is llm when "
                  "the server has a model configured, rules otherwise)."
    )
    working_memory_limits = serializers.SerializerMethodField(
        help_text="Working-state limits in effect: working_memory_config (the store's overrides) over the "
                  "server defaults."
    )

    class Meta:
        model = MemoryStore
        fields = [
            "id",
            "name",
            "description",
            "embedding_provider",
            "embedding_model",
            "embedding_dimension",
            "review_policy",
            "search_defaults",
            "max_content_length",
            "extraction_config",
            "extraction_settings",
            "extractor_status",
            "working_memory_config",
            "working_memory_limits",
            "created_at",
            "updated_at",
        ]

    def get_extraction_settings(self, store) -> dict:
        return extraction_settings_for(store).as_dict()

    def get_extractor_status(self, store) -> dict:
        extractor = extraction_settings_for(store).extractor
        problem = extractor_problem(extractor)
        return {"ready": problem is None, "problem": problem, "extractor": resolve_extractor(extractor)}

    def get_working_memory_limits(self, store) -> dict:
        return working_state_settings_for(store).as_dict()


class StoreListOutput(serializers.Serializer):
    results = StoreOutput(many=True)


class StoreDeleteOutput(serializers.Serializer):
    deleted = serializers.BooleanField()
    store = serializers.CharField()
    memories = serializers.IntegerField(help_text="Memories deleted with the store.")


# --- Memories ---------------------------------------------------------------------------------------


class MemoryCreateInput(serializers.Serializer):
    user_id = IdentifierField()
    content = CleanCharField()
    memory_type = serializers.ChoiceField(choices=Memory.Type.choices, default=Memory.Type.FACT)
    agent_id = IdentifierField(required=False, allow_blank=True, default="")
    session_id = IdentifierField(required=False, allow_blank=True, default="")
    metadata = MetadataField(required=False, default=dict)
    tags = serializers.ListField(
        child=CleanCharField(max_length=64), required=False, default=list, max_length=settings.MEMORYHUB_MAX_TAGS
    )
    importance = FiniteFloatField(min_value=0.0, max_value=1.0, default=0.5)
    confidence = FiniteFloatField(min_value=0.0, max_value=1.0, default=1.0)
    status = serializers.ChoiceField(
        choices=[Memory.Status.ACTIVE, Memory.Status.PENDING_REVIEW], default=Memory.Status.ACTIVE
    )
    source = serializers.ChoiceField(choices=[Memory.Source.API, Memory.Source.IMPORT], default=Memory.Source.API)
    provenance = MetadataField(required=False, default=dict)
    valid_from = serializers.DateTimeField(required=False, allow_null=True, default=None)
    valid_to = serializers.DateTimeField(required=False, allow_null=True, default=None)
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)

    def validate(self, attrs):
        if attrs.get("valid_from") and attrs.get("valid_to") and attrs["valid_to"] < attrs["valid_from"]:
            raise serializers.ValidationError({"valid_to": ["Must not be before valid_from."]})
        return attrs


class MemoryBulkInput(serializers.Serializer):
    memories = MemoryCreateInput(many=True, allow_empty=False)


class MemoryPatchInput(serializers.Serializer):
    content = CleanCharField(required=False)
    memory_type = serializers.ChoiceField(choices=Memory.Type.choices, required=False)
    metadata = MetadataField(required=False)
    tags = serializers.ListField(
        child=CleanCharField(max_length=64), required=False, max_length=settings.MEMORYHUB_MAX_TAGS
    )
    importance = FiniteFloatField(min_value=0.0, max_value=1.0, required=False)
    confidence = FiniteFloatField(min_value=0.0, max_value=1.0, required=False)
    status = serializers.ChoiceField(
        choices=[
            Memory.Status.ACTIVE,
            Memory.Status.PENDING_REVIEW,
            Memory.Status.REJECTED,
            Memory.Status.DELETED,
        ],
        required=False,
    )
    agent_id = IdentifierField(required=False, allow_blank=True)
    session_id = IdentifierField(required=False, allow_blank=True)
    valid_to = serializers.DateTimeField(required=False, allow_null=True)
    expires_at = serializers.DateTimeField(required=False, allow_null=True)
    reason = CleanCharField(required=False, allow_blank=True, max_length=2000, default="")

    def validate(self, attrs):
        if not {key for key in attrs if key != "reason"}:
            raise serializers.ValidationError("Send at least one field to change.")
        return attrs


class MemoryOutput(serializers.Serializer):
    id = serializers.UUIDField()
    store = serializers.CharField(source="store.name")
    user_id = serializers.CharField()
    agent_id = serializers.CharField()
    session_id = serializers.CharField()
    content = serializers.CharField()
    memory_type = serializers.CharField()
    metadata = serializers.JSONField()
    tags = serializers.ListField(child=serializers.CharField())
    importance = serializers.FloatField()
    confidence = serializers.FloatField()
    status = serializers.CharField()
    source = serializers.CharField()
    provenance = serializers.JSONField()
    valid_from = serializers.DateTimeField()
    valid_to = serializers.DateTimeField(allow_null=True)
    expires_at = serializers.DateTimeField(allow_null=True)
    superseded_by = serializers.UUIDField(source="superseded_by_id", allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    def to_representation(self, memory):
        # Written out by hand: DRF's field-by-field rendering cost more than the search query itself
        # on the hot path. The declared fields above still describe the shape in the OpenAPI schema.
        return {
            "id": str(memory.id),
            "store": memory.store.name,
            "user_id": memory.user_id,
            "agent_id": memory.agent_id,
            "session_id": memory.session_id,
            "content": memory.content,
            "memory_type": memory.memory_type,
            "metadata": memory.metadata,
            "tags": list(memory.tags),
            "importance": memory.importance,
            "confidence": memory.confidence,
            "status": memory.status,
            "source": memory.source,
            "provenance": memory.provenance,
            "valid_from": iso_datetime(memory.valid_from),
            "valid_to": iso_datetime(memory.valid_to),
            "expires_at": iso_datetime(memory.expires_at),
            "superseded_by": str(memory.superseded_by_id) if memory.superseded_by_id else None,
            "created_at": iso_datetime(memory.created_at),
            "updated_at": iso_datetime(memory.updated_at),
        }


class MemoryWriteOutput(serializers.Serializer):
    memory = MemoryOutput()
    duplicate = serializers.BooleanField()


class MemoryBulkOutput(serializers.Serializer):
    created = serializers.IntegerField()
    duplicates = serializers.IntegerField()
    results = MemoryWriteOutput(many=True)


class MemoryDeleteOutput(serializers.Serializer):
    deleted = serializers.BooleanField()
    hard = serializers.BooleanField()
    id = serializers.UUIDField()
    memory = MemoryOutput(required=False, help_text="The memory, now with status deleted (soft deletes only).")


class RevisionOutput(serializers.Serializer):
    id = serializers.IntegerField()
    action = serializers.ChoiceField(choices=MemoryRevision.Action.choices)
    changed_fields = serializers.ListField(child=serializers.CharField())
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)
    actor_type = serializers.CharField()
    actor_id = serializers.CharField()
    actor_label = serializers.CharField()
    reason = serializers.CharField()
    context = serializers.JSONField()
    created_at = serializers.DateTimeField()


class RevisionListOutput(serializers.Serializer):
    results = RevisionOutput(many=True)


# --- Search -----------------------------------------------------------------------------------------


class SearchInput(serializers.Serializer):
    query = CleanCharField(max_length=4000)
    mode = serializers.ChoiceField(choices=SEARCH_MODES, required=False)
    limit = StrictIntegerField(min_value=1, max_value=100, required=False)
    min_score = FiniteFloatField(min_value=-1.0, max_value=1.0, required=False, allow_null=True)
    user_id = IdentifierField(required=False)
    agent_id = IdentifierField(required=False)
    session_id = IdentifierField(required=False)
    memory_types = serializers.ListField(
        child=serializers.ChoiceField(choices=Memory.Type.choices), required=False, max_length=4
    )
    metadata = MetadataField(required=False)
    tags = serializers.ListField(child=CleanCharField(max_length=64), required=False, max_length=32)
    include_pending = serializers.BooleanField(required=False, default=False)
    include_superseded = serializers.BooleanField(
        required=False, default=False, help_text="Old values too, ranked below current facts of about the same relevance."
    )
    valid_at = serializers.DateTimeField(
        required=False, help_text="Only memories that held at this moment (superseded ones included)."
    )
    created_after = serializers.DateTimeField(required=False)
    created_before = serializers.DateTimeField(required=False)
    explain = serializers.BooleanField(
        required=False, default=False, help_text="Each hit's rank and score per signal, and the ranking used."
    )

    def validate(self, attrs):
        after, before = attrs.get("created_after"), attrs.get("created_before")
        if after and before and before <= after:
            raise serializers.ValidationError({"created_before": ["Must be after created_after."]})
        return attrs


class SearchHitOutput(serializers.Serializer):
    memory = MemoryOutput()
    score = serializers.FloatField()
    vector_rank = serializers.IntegerField(allow_null=True)
    keyword_rank = serializers.IntegerField(allow_null=True)
    similarity = serializers.FloatField(allow_null=True)
    keyword_score = serializers.FloatField(allow_null=True, help_text="The memory's BM25 score for the query.")
    explain = serializers.DictField(
        required=False, help_text="With `explain`: per signal, the rank, score and share of the fused score."
    )


class SearchOutput(serializers.Serializer):
    mode = serializers.CharField()
    results = SearchHitOutput(many=True)
    explain = serializers.DictField(
        required=False, help_text="With `explain`: the ranking used and the query terms' statistics in the scope."
    )

    def to_representation(self, instance):
        # Written out by hand, as MemoryOutput's: building the nested serializers' fields (DRF copies every
        # declared field of each) cost about 1.5 ms per search. The declared fields describe the schema.
        data = {"mode": instance["mode"], "results": [_search_hit(hit) for hit in instance["results"]]}
        if "explain" in instance:
            data["explain"] = instance["explain"]
        return data


def _search_hit(hit) -> dict:
    """A SearchHit, or a dict of its fields and "explain", as SearchHitOutput renders it."""
    fields = hit if isinstance(hit, dict) else vars(hit)
    data = {
        "memory": MemoryOutput().to_representation(fields["memory"]),
        "score": float(fields["score"]),
        "vector_rank": _int_or_none(fields["vector_rank"]),
        "keyword_rank": _int_or_none(fields["keyword_rank"]),
        "similarity": _float_or_none(fields["similarity"]),
        "keyword_score": _float_or_none(fields["keyword_score"]),
    }
    if "explain" in fields:
        data["explain"] = dict(fields["explain"])
    return data


def _int_or_none(value) -> int | None:
    return None if value is None else int(value)


def _float_or_none(value) -> float | None:
    return None if value is None else float(value)


class MemoryListQuery(QuerySerializer):
    parameter_prefixes = ("metadata.",)

    user_id = IdentifierField(required=False)
    agent_id = IdentifierField(required=False, allow_blank=True)
    session_id = IdentifierField(required=False, allow_blank=True)
    memory_type = serializers.ChoiceField(choices=Memory.Type.choices, required=False)
    status = serializers.ChoiceField(choices=Memory.Status.choices, required=False)
    tag = CleanCharField(max_length=64, required=False)
    created_after = serializers.DateTimeField(required=False)
    created_before = serializers.DateTimeField(required=False)
    include_expired = serializers.BooleanField(required=False, default=False)

    def validate(self, attrs):
        # metadata.<key>=<value>: a metadata filter per parameter, compared as text.
        if "metadata." in self.initial_data:
            raise serializers.ValidationError({"metadata.": ["Name the key: metadata.<key>=<value>."]})
        attrs["metadata"] = {
            key.removeprefix("metadata."): value
            for key, value in self.initial_data.items()
            if key.startswith("metadata.")
        }
        return attrs


class MemoryDeleteQuery(QuerySerializer):
    hard = serializers.BooleanField(required=False, default=False,
                                    help_text="Remove the memory and its history for good (admin scope).")
    reason = CleanCharField(required=False, allow_blank=True, max_length=2000, default="",
                            help_text="Recorded in the memory's history (soft deletes).")
