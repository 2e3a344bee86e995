"""JSON Schemas of the tools' arguments, read off the DRF serializers that validate them.

The arguments are validated by the REST API's own serializers (see arguments.py), so their bounds, choices and
help texts are written once: a limit of 1 to 100 in SearchInput is `minimum: 1, maximum: 100` here too. A field
that drf-spectacular describes with `extend_schema_field` (metadata, message content) keeps that description.
"""

from drf_spectacular.drainage import get_override
from rest_framework import serializers
from rest_framework.fields import empty


def _numeric_bounds(field) -> dict:
    bounds = {}
    if getattr(field, "min_value", None) is not None:
        bounds["minimum"] = field.min_value
    if getattr(field, "max_value", None) is not None:
        bounds["maximum"] = field.max_value
    return bounds


def field_schema(field) -> dict:
    """The JSON Schema of one serializer field (a nested serializer included)."""
    declared = get_override(field, "field")
    if isinstance(declared, dict):
        schema = dict(declared)
    elif isinstance(field, serializers.ListSerializer):
        items = field_schema(field.child)
        if items.get("description") == field.help_text:  # DRF hands the list's help_text to its child too
            del items["description"]
        schema = {"type": "array", "items": items}
        if not field.allow_empty:
            schema["minItems"] = 1
    elif isinstance(field, serializers.Serializer):
        schema = object_schema(field)
    elif isinstance(field, serializers.BooleanField):
        schema = {"type": "boolean"}
    elif isinstance(field, serializers.IntegerField):
        schema = {"type": "integer", **_numeric_bounds(field)}
    elif isinstance(field, serializers.FloatField):
        schema = {"type": "number", **_numeric_bounds(field)}
    elif isinstance(field, serializers.ChoiceField):
        schema = {"type": "string", "enum": [str(choice) for choice in field.choices]}
    elif isinstance(field, serializers.DateTimeField):
        schema = {"type": "string", "format": "date-time"}
    elif isinstance(field, serializers.UUIDField):
        schema = {"type": "string", "format": "uuid"}
    elif isinstance(field, serializers.ListField):
        schema = {"type": "array", "items": field_schema(field.child)}
        if field.max_length is not None:
            schema["maxItems"] = field.max_length
    elif isinstance(field, serializers.DictField):
        schema = {"type": "object", "additionalProperties": field_schema(field.child)}
    elif isinstance(field, serializers.JSONField):
        schema = {}  # any JSON value
    elif isinstance(field, serializers.CharField):
        schema = {"type": "string"}
        if field.max_length is not None:
            schema["maxLength"] = field.max_length
    else:  # a field class the tools do not use yet: describe it loosely rather than wrongly
        schema = {}
    default = getattr(field, "default", empty)
    if default is not empty and not callable(default):
        schema["default"] = default
    if getattr(field, "allow_null", False) and isinstance(schema.get("type"), str):
        schema["type"] = [schema["type"], "null"]
    help_text = getattr(field, "help_text", None)
    if help_text:
        schema["description"] = str(help_text)
    return schema


# The ids most tools take, described once for a model; a serializer's `descriptions` or help_text say more.
COMMON_DESCRIPTIONS = {
    "user_id": "Whom the memories are about: your application's id for the end user.",
    "agent_id": "The agent (assistant) concerned, for memories kept per agent; empty: none.",
    "session_id": "The conversation's id.",
    "metadata": "A JSON object of your own keys and values.",
}


def object_schema(serializer: serializers.Serializer) -> dict:
    """An object with the serializer's writable fields; any other key is refused (unknown_fields). A class
    attribute `descriptions` ({field: text}) describes fields for a model where the REST API's help_text does
    not say enough."""
    fields = {name: field for name, field in serializer.fields.items() if not field.read_only}
    descriptions = getattr(serializer, "descriptions", {})
    properties = {}
    for name, field in fields.items():
        properties[name] = field_schema(field)
        description = descriptions.get(name) or properties[name].get("description") or COMMON_DESCRIPTIONS.get(name)
        if description:
            properties[name]["description"] = description
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    required = [name for name, field in fields.items() if field.required]
    if required:
        schema["required"] = required
    return schema
