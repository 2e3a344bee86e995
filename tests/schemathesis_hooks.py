"""schemathesis hooks of tests/test_schema_fuzz.py, loaded by the schemathesis process (`hooks` in its config)."""

import itertools

import schemathesis

_calls = itertools.count(1)


@schemathesis.hook
def before_call(context, case, kwargs):
    # Generated cases share a few Idempotency-Key values, and memoryhub answers a key reused for another
    # request with a 409 before it reads the body: the writes would go untested. A number per call makes
    # each key unique and keeps a key that is too long or not printable just as invalid.
    if case.headers and "Idempotency-Key" in case.headers:
        case.headers["Idempotency-Key"] = f"{case.headers['Idempotency-Key']}.{next(_calls)}"
