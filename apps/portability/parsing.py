"""Reading an export's lines: each record checked field by field, every problem an error naming its line.

A file may have been written by another memoryhub, edited by hand or cut short, so nothing in it is trusted:
types, choices, ranges, times and what PostgreSQL can store (apps.core.fields) are checked before a batch is
written, and the first problem stops the import with the line number and the field.
"""

import json
import math
import uuid
from datetime import UTC, datetime

from django.utils.dateparse import parse_datetime

from apps.core.errors import ApplicationError
from apps.core.fields import find_unstorable_text, is_storable_json
from apps.core.identifiers import normalise_identifier

MISSING = object()
MAX_ID_LENGTH = 255


class ImportFileError(ApplicationError):
    """A line of the file that cannot be imported, or a file that is not an export this server reads."""

    default_code = "invalid_import_file"


def parse_line(number: int, text: str) -> dict:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # a line cut short (a truncated file) ends up here too
        raise ImportFileError(f"line {number}: not valid JSON ({exc}).", details={"line": number}) from exc
    if not isinstance(data, dict):
        raise ImportFileError(f"line {number}: a record must be a JSON object.", details={"line": number})
    return data


class Record:
    """One line's JSON object and its number; each accessor returns a checked value or raises ImportFileError."""

    def __init__(self, data: dict, line: int, kind: str):
        self.data = data
        self.line = line
        self.kind = kind

    def fail(self, name: str, problem: str):
        raise ImportFileError(f"line {self.line}: {self.kind} {name}: {problem}.",
                              details={"line": self.line, "field": name})

    def _get(self, name: str, default):
        if name in self.data:
            return self.data[name]
        if default is MISSING:
            self.fail(name, "missing")
        return default

    def nested(self, name: str, data: dict, kind: str) -> "Record":
        if not isinstance(data, dict):
            self.fail(name, "must be a JSON object")
        return Record(data, self.line, f"{self.kind} {name} {kind}".strip())

    def text(self, name: str, default=MISSING, *, blank: bool = True, max_length: int | None = None) -> str:
        value = self._get(name, default)
        if not isinstance(value, str):
            self.fail(name, "must be a string")
        problem = find_unstorable_text(value)
        if problem:
            self.fail(name, problem)
        if not blank and not value.strip():
            self.fail(name, "must not be blank")
        if max_length is not None and len(value) > max_length:
            self.fail(name, f"at most {max_length} characters")
        return value

    def identifier(self, name: str, default=MISSING, *, blank: bool = True) -> str:
        value = normalise_identifier(self.text(name, default, blank=blank))
        if len(value) > MAX_ID_LENGTH:
            self.fail(name, f"at most {MAX_ID_LENGTH} characters")
        return value

    def choice(self, name: str, choices, default=MISSING) -> str:
        value = self._get(name, default)
        if value not in choices:
            self.fail(name, f"{value!r} is not one of {', '.join(sorted(choices))}")
        return value

    def number(self, name: str, default=MISSING, *, low: float = 0.0, high: float = 1.0) -> float:
        value = self._get(name, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self.fail(name, "must be a finite number")
        if not low <= value <= high:
            self.fail(name, f"must be between {low:g} and {high:g}")
        return float(value)

    def integer(self, name: str, default=MISSING, *, nullable: bool = False, high: int = 2**31 - 1) -> int | None:
        value = self._get(name, default)
        if value is None and nullable:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
            self.fail(name, f"must be a whole number from 0 to {high}")
        return value

    def boolean(self, name: str, default=MISSING) -> bool:
        value = self._get(name, default)
        if not isinstance(value, bool):
            self.fail(name, "must be true or false")
        return value

    def when(self, name: str, default=MISSING, *, nullable: bool = True) -> datetime | None:
        value = self._get(name, default)
        if value is None and nullable:
            return None
        parsed = None
        if isinstance(value, str):
            try:
                parsed = parse_datetime(value)
            except ValueError:
                parsed = None
        if parsed is None:
            self.fail(name, "must be an ISO 8601 time")
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)

    def json_value(self, name: str, default=MISSING):
        value = self._get(name, default)
        if not is_storable_json(value):
            self.fail(name, "holds a value PostgreSQL cannot store (NUL, an unpaired surrogate, NaN or deep nesting)")
        return value

    def json_object(self, name: str, default=MISSING, *, nullable: bool = False) -> dict | None:
        value = self.json_value(name, default)
        if value is None and nullable:
            return None
        if not isinstance(value, dict):
            self.fail(name, "must be a JSON object")
        return value

    def text_list(self, name: str, default=MISSING, *, max_length: int = 64) -> list[str]:
        value = self._get(name, default)
        if not isinstance(value, list):
            self.fail(name, "must be a list of strings")
        for item in value:
            if not isinstance(item, str) or find_unstorable_text(item) or len(item) > max_length:
                self.fail(name, f"must be a list of strings of at most {max_length} characters")
        return value

    def object_list(self, name: str, default=MISSING) -> list[dict]:
        value = self._get(name, default)
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            self.fail(name, "must be a list of JSON objects")
        return value

    def uuid(self, name: str, default=MISSING, *, nullable: bool = False) -> uuid.UUID | None:
        value = self._get(name, default)
        if value is None and nullable:
            return None
        try:
            return uuid.UUID(value)
        except (TypeError, ValueError, AttributeError):
            self.fail(name, "must be a UUID")

    def vector(self, name: str, dimension: int) -> list[float] | None:
        value = self._get(name, None)
        if value is None:
            return None
        if (not isinstance(value, list) or len(value) != dimension
                or not all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in value)):
            self.fail(name, f"must be a list of {dimension} finite numbers (the store's dimension)")
        return value
