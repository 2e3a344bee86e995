"""Ids that clients choose (user, agent, session and run ids) are kept in Unicode NFC.

"José" typed with a composed é (U+00E9) and with e + a combining accent (U+0301) looks the same and
is the same person; compared as sent, they were two users, and erasing one left the other. Every way
in normalises: serializers (apps.core.fields.IdentifierField), URL paths (the converters below,
registered by CoreConfig), admin forms (IdentifierFormField), and the services that store ids.
NFC, not NFKC: compatibility folding would merge ids that differ visibly ("ｊｏｓé" and "josé").
"""

import unicodedata

from django import forms


def normalise_identifier(value: str) -> str:
    return unicodedata.normalize("NFC", value)


class IdentifierConverter:
    """A URL path segment holding an id, normalised like every other way in."""

    regex = "[^/]+"

    def to_python(self, value: str) -> str:
        return normalise_identifier(value)

    def to_url(self, value: str) -> str:
        return value


class IdentifierPathConverter(IdentifierConverter):
    """The last part of a URL path holding an id that may contain "/" (or a newline: ids are any text)."""

    regex = r"[\s\S]+"


class IdentifierFormField(forms.CharField):
    def to_python(self, value):
        value = super().to_python(value)
        return normalise_identifier(value) if isinstance(value, str) else value
