"""Cursor pagination for every list of the API; a malformed cursor is a 400 naming `cursor`, never a 500."""

from base64 import b64decode
from datetime import datetime
from urllib.parse import parse_qs

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils import timezone
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import Cursor, CursorPagination


class ApiCursorPagination(CursorPagination):
    """The cursor pagination of every list: DRF's, strict about the cursor it is handed back, `page_size`
    settable, and described in the schema as it answers: `{results, next, previous}`, both links always
    there (null at either end).

    DRF answers a cursor it cannot decode with a 404, decodes base64 leniently, and hands the position
    inside the cursor to the database unchecked: `p=notadate` on a list ordered by seq was a 500
    ("Field 'seq' expected a number"). Here the cursor must be one this class could have written, with a
    position the ordering field accepts; anything else is a validation error on the `cursor` parameter.
    A bad `page_size` falls back to the default (DRF's behaviour, kept).
    """

    page_size_query_param = "page_size"
    invalid_cursor_message = "Invalid cursor: pass the cursor of a `next` or `previous` link back unchanged."

    def paginate_queryset(self, queryset, request, view=None):
        self._model = queryset.model  # decode_cursor checks the position against the ordering field
        return super().paginate_queryset(queryset, request, view)

    def decode_cursor(self, request) -> Cursor | None:
        encoded = request.query_params.get(self.cursor_query_param)
        if not encoded:  # absent or empty: the first page
            return None
        try:
            return self._parse_cursor(encoded)
        except (ValueError, DjangoValidationError) as error:  # binascii.Error and UnicodeError are ValueErrors
            raise ValidationError({self.cursor_query_param: [self.invalid_cursor_message]}) from error

    def _parse_cursor(self, encoded: str) -> Cursor:
        querystring = b64decode(encoded, validate=True).decode("ascii")
        tokens = parse_qs(querystring, keep_blank_values=True, strict_parsing=True)
        if not tokens.keys() <= {"o", "r", "p"} or any(len(values) > 1 for values in tokens.values()):
            raise ValueError("unknown or repeated cursor token")
        offset = tokens.get("o", ["0"])[0]
        reverse = tokens.get("r", ["0"])[0]
        if not offset.isdigit() or reverse not in ("0", "1"):
            raise ValueError("offset or reverse flag out of range")
        position = tokens.get("p", [None])[0]
        if position is not None:
            self._check_position(position)
        return Cursor(offset=min(int(offset), self.offset_cutoff), reverse=reverse == "1", position=position)

    def _check_position(self, position: str) -> None:
        """The position goes into a comparison with the ordering field: it must be a value of that field."""
        if "\x00" in position:  # PostgreSQL text cannot hold NUL
            raise ValueError("NUL in cursor position")
        field = self._model._meta.get_field(self.ordering[0].lstrip("-"))
        value = field.clean(position, None)
        if isinstance(value, datetime) and timezone.is_naive(value):  # positions written here carry their offset
            raise ValueError("naive datetime in cursor position")


    @classmethod
    def query_parameters(cls) -> tuple[str, ...]:
        return (cls.cursor_query_param, cls.page_size_query_param)

    def get_paginated_response_schema(self, schema):
        body = super().get_paginated_response_schema(schema)
        body["required"] = ["next", "previous", "results"]
        for link in ("next", "previous"):
            body["properties"][link].pop("example", None)
            body["properties"][link]["description"] = f"The URL of the {link} page; null when there is none."
        return body

    def get_schema_operation_parameters(self, view):
        cursor, page_size = super().get_schema_operation_parameters(view)
        cursor["description"] = "The cursor of a `next` or `previous` link; an invalid one is a 400."
        page_size["description"] = (
            f"Items per page: default {self.page_size}, at most {self.max_page_size} (larger values are capped; "
            "values that are not a positive whole number mean the default)."
        )
        return [cursor, page_size]


class NewestFirstCursorPagination(ApiCursorPagination):
    ordering = ("-created_at", "-id")
    page_size = 50
    max_page_size = 500


def ordered_by(*fields: str, page_size: int = 100, max_page_size: int = 1000) -> type[ApiCursorPagination]:
    """A cursor pagination in the order of `fields` (ascending unless prefixed with "-"), for logs and
    sequences read front to back: messages by seq, working memory by key, events by id."""
    return type(
        "OrderedCursorPagination",
        (ApiCursorPagination,),
        {"ordering": fields, "page_size": page_size, "max_page_size": max_page_size},
    )
