"""Pages of a list for a tool, by the REST API's own cursor pagination: the same order, page sizes and cursors
(a cursor from a REST `next` link works here, and the other way round), and the same refusal of a bad one."""

from urllib.parse import parse_qs, urlsplit

from django.http import HttpRequest, QueryDict
from rest_framework import serializers
from rest_framework.request import Request

from apps.core.fields import CleanCharField, StrictIntegerField
from apps.core.pagination import ApiCursorPagination


class PageArguments(serializers.Serializer):
    cursor = CleanCharField(required=False, help_text="The next_cursor of the previous page; absent: the first page.")
    page_size = StrictIntegerField(required=False, min_value=1,
                                   help_text="Items per page; larger values are capped at the list's maximum.")


def page_of(request: HttpRequest, queryset, pagination: type[ApiCursorPagination], *, cursor: str | None = None,
            page_size: int | None = None) -> tuple[list, str | None]:
    """One page of `queryset` and the cursor of the next page (None on the last one)."""
    query = QueryDict(mutable=True)
    if cursor:
        query[pagination.cursor_query_param] = cursor
    if page_size:
        query[pagination.page_size_query_param] = str(page_size)
    # The paginator reads the cursor from a GET's query string and writes the next one into a link.
    listing = HttpRequest()
    listing.method, listing.path, listing.META, listing.GET = "GET", request.path, request.META, query
    paginator = pagination()
    page = paginator.paginate_queryset(queryset, Request(listing))
    next_link = paginator.get_next_link()
    next_cursor = parse_qs(urlsplit(next_link).query)[pagination.cursor_query_param][0] if next_link else None
    return page, next_cursor
