from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class DepthSafeJSONParser(JSONParser):
    """JSON too deeply nested for Python's decoder is a 400 (malformed_request), not a RecursionError and a 500."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise ParseError("JSON parse error - the document is nested too deeply.") from exc
