from rest_framework.pagination import CursorPagination


class ApiCursorPagination(CursorPagination):
    """DRF's cursor pagination, `page_size` settable, described in the schema as it answers:
    `{results, next, previous}`, both links always there (null at either end)."""

    page_size_query_param = "page_size"

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
        cursor["description"] = "The cursor of a `next` or `previous` link; an invalid one is a 404."
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
