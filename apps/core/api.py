"""Small helpers shared by the API views of every app."""

from rest_framework import serializers

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no", ""}


def query_bool(request, name: str, default: bool = False) -> bool:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise serializers.ValidationError({name: [f"Must be true or false, got {raw!r}."]})


def validated(serializer_class, data, **kwargs) -> dict:
    serializer = serializer_class(data=data, **kwargs)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
