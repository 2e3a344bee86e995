"""Small helpers shared by the API views of every app: validation that refuses what it does not know."""

import difflib
import functools
from collections.abc import Iterable, Mapping

from rest_framework import serializers


class QuerySerializer(serializers.Serializer):
    """The query parameters of an operation. Besides its fields, it accepts the parameters that start
    with one of `parameter_prefixes` (a family such as `metadata.<key>`); anything else is refused."""

    parameter_prefixes: tuple[str, ...] = ()


def _unknown(kind: str, name: str, known: Iterable[str], *, when_none: str = "this operation takes none") -> str:
    known = sorted(known)
    if not known:
        return f"Unknown {kind}; {when_none}."
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        return f"Unknown {kind}; did you mean '{close[0]}'?"
    return f"Unknown {kind}; expected one of: {', '.join(known)}."


def unknown_fields(field, data):
    """The keys of `data` that `field` (a serializer, nested ones included) does not declare, as DRF-shaped
    error details ({"name": [message]}, a list per item for many=True), or None when there are none.
    Only the shape is checked here; values are the serializer's business."""
    if isinstance(field, serializers.ListSerializer | serializers.ListField):
        if not isinstance(data, list):
            return None
        errors = [unknown_fields(field.child, item) or {} for item in data]
        return errors if any(errors) else None
    if isinstance(field, serializers.DictField):
        if not isinstance(data, Mapping):
            return None
        errors = {key: error for key, value in data.items() if (error := unknown_fields(field.child, value))}
        return errors or None
    if not isinstance(field, serializers.Serializer) or not isinstance(data, Mapping):
        return None
    writable = {name: child for name, child in field.fields.items() if not child.read_only}
    errors = {}
    for key, value in data.items():
        if key not in writable:
            errors[key] = [_unknown("field", str(key), writable)]
        elif inner := unknown_fields(writable[key], value):
            errors[key] = inner
    return errors or None


def refuse_unknown_fields(serializer_class, data) -> None:
    """A 400 naming every field of a request body that `serializer_class` does not declare: a misspelt
    filter must not be ignored (a search for "userid" would return every user's memories)."""
    errors = unknown_fields(_declaring_instance(serializer_class), data)
    if errors:
        raise serializers.ValidationError(errors)


@functools.cache
def _declaring_instance(serializer_class) -> serializers.Serializer:
    """One instance of a body serializer per process, to read its declared fields from: a new instance copies
    every declared field, nested serializers' included, the first time its fields are read (about 1 ms per
    request here). Only read: a request's validation has an instance of its own."""
    return serializer_class()


def refuse_body(data) -> None:
    """A 400 for a request body sent to an operation that takes none; no body or {} is fine."""
    if data is None or (isinstance(data, Mapping) and not data):
        return
    if isinstance(data, Mapping):
        raise serializers.ValidationError(
            {key: [_unknown("field", str(key), (), when_none="this operation takes no request body")] for key in data}
        )
    raise serializers.ValidationError({"non_field_errors": ["This operation takes no request body."]})


def refuse_unknown_parameters(params: Iterable[str], *, known: Iterable[str], prefixes: Iterable[str] = ()) -> None:
    """A 400 naming every query parameter that is not in `known` and starts with none of `prefixes`."""
    known, prefixes = set(known), tuple(prefixes)
    unknown = [name for name in params if name not in known and not (prefixes and name.startswith(prefixes))]
    if unknown:
        expected = known | {f"{prefix}<key>" for prefix in prefixes}
        raise serializers.ValidationError(
            {name: [_unknown("query parameter", name, expected)] for name in unknown}
        )


def validated(serializer_class, data, **kwargs) -> dict:
    serializer = serializer_class(data=data, **kwargs)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data

