from rest_framework.pagination import CursorPagination


class NewestFirstCursorPagination(CursorPagination):
    ordering = ("-created_at", "-id")
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


def ordered_by(*fields: str, page_size: int = 100, max_page_size: int = 1000) -> type[CursorPagination]:
    """A cursor pagination in the order of `fields` (ascending unless prefixed with "-"), for logs and
    sequences read front to back: messages by seq, working memory by key, events by id."""
    return type(
        "OrderedCursorPagination",
        (CursorPagination,),
        {"ordering": fields, "page_size": page_size, "page_size_query_param": "page_size",
         "max_page_size": max_page_size},
    )
