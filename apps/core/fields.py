"""Serializer fields that reject what PostgreSQL cannot store, as 400s rather than 500s."""

import json
import math
from datetime import UTC, datetime

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.core.identifiers import normalise_identifier


def find_unstorable_text(value: str) -> str | None:
    """Why PostgreSQL would refuse this string, or None: NUL bytes and lone UTF-16 surrogates."""
    if "\x00" in value:
        return "must not contain NUL (\\u0000) characters"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "contains an unpaired surrogate and is not valid Unicode"
    return None


MAX_JSON_DEPTH = 100


def check_json_depth(value, limit: int = MAX_JSON_DEPTH) -> None:
    """Refuse JSON nested deeper than `limit` arrays/objects, before anything recursive (json.dumps) sees it."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > limit:
                raise serializers.ValidationError(f"Nested more than {limit} levels deep.")
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))


def check_json_tree(value, path: str = "") -> None:
    """Raise a ValidationError for a JSON value PostgreSQL cannot store (NUL, lone surrogates, NaN).
    Recursive: check_json_depth first, as the fields below do."""
    if isinstance(value, str):
        problem = find_unstorable_text(value)
        if problem:
            raise serializers.ValidationError(f"{path or 'value'} {problem}")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise serializers.ValidationError(f"{path or 'value'} must be a finite number")
    elif isinstance(value, dict):
        for key, inner in value.items():
            problem = find_unstorable_text(str(key))  # str: DRF's error details number list items
            if problem:
                raise serializers.ValidationError(f"key {key!r} {problem}")
            check_json_tree(inner, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            check_json_tree(inner, f"{path}[{index}]")


def is_storable_json(value) -> bool:
    """Whether PostgreSQL can store this JSON value (jsonb): no NUL, no lone surrogate, no NaN."""
    try:
        check_json_depth(value)
        check_json_tree(value)
    except serializers.ValidationError:
        return False
    return True


class CleanCharField(serializers.CharField):
    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise serializers.ValidationError("Must be a string.")
        value = super().to_internal_value(data)
        problem = find_unstorable_text(value)
        if problem:
            raise serializers.ValidationError(f"Text {problem}.")
        return value


class IdentifierField(CleanCharField):
    """A user, agent, session or run id: cleaned like any text, then NFC-normalised (apps.core.identifiers);
    at most 255 characters after normalisation, the size of every id column."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 255)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        return normalise_identifier(super().to_internal_value(data))


class FiniteFloatField(serializers.FloatField):
    def to_internal_value(self, data):
        if isinstance(data, bool):
            raise serializers.ValidationError("A number is required.")
        value = super().to_internal_value(data)
        if not math.isfinite(value):
            raise serializers.ValidationError("Must be a finite number.")
        return value


class StrictIntegerField(serializers.IntegerField):
    """Rejects booleans and floats with a fraction, which DRF would otherwise coerce."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or (isinstance(data, float) and not data.is_integer()):
            raise serializers.ValidationError("A whole number is required.")
        if isinstance(data, float) and not math.isfinite(data):
            raise serializers.ValidationError("A whole number is required.")
        return super().to_internal_value(data)


class StorableJSONField(serializers.JSONField):
    """Any JSON value whose strings and numbers PostgreSQL can store, at most MAX_JSON_DEPTH levels deep."""

    def to_internal_value(self, data):
        check_json_depth(data)  # before DRF's own check, which serialises the value recursively
        value = super().to_internal_value(data)
        check_json_tree(value)
        return value


@extend_schema_field({"type": "object", "additionalProperties": {}})
class MetadataField(StorableJSONField):
    """A JSON object of bounded size whose strings PostgreSQL can store."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError("Must be a JSON object.")
        size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
        limit = settings.MEMORYHUB_MAX_METADATA_BYTES
        if size > limit:
            raise serializers.ValidationError(f"Metadata is {size} bytes; the limit is {limit} bytes.")
        return value


def iso_datetime(value: datetime | None) -> str | None:
    """ISO 8601 in UTC with a Z, as DRF renders datetimes."""
    if value is None:
        return None
    text = value.astimezone(UTC).isoformat() if value.tzinfo else value.isoformat()
    return text.removesuffix("+00:00") + "Z" if text.endswith("+00:00") else text
