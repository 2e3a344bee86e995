"""The queue and the customer page with 10,000 memories in the store: the number of queries stays that of a
small store. How fast they answer is bench/review_pages.py's to measure."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.core.actors import Actor
from apps.memories.models import Memory
from apps.memories.services import MemoryInput, memory_bulk_create
from tests.review.conftest import conversation
from tests.review.test_query_counts import CUSTOMER_QUERIES, QUEUE_QUERIES

pytestmark = pytest.mark.slow

MEMORIES = 10_000
CUSTOMERS = 200
WORDS = ["tea", "coffee", "flight", "window", "seat", "allergy", "latex", "paris", "berlin", "invoice", "refund",
         "email", "phone", "dog", "cat", "bike", "train", "hotel", "vegan", "gluten"]


def _seed(store):
    session = conversation(store, "big", [f"message {index}" for index in range(50)], user_id="customer-0")
    items = []
    for index in range(MEMORIES):
        words = " ".join(WORDS[(index * k) % len(WORDS)] for k in (1, 3, 7))
        pending_one = index % 100 == 0
        items.append(MemoryInput(
            user_id=f"customer-{index % CUSTOMERS}", content=f"Memory {index}: likes {words}",
            status=Memory.Status.PENDING_REVIEW if pending_one else Memory.Status.ACTIVE,
            provenance={"sources": [{"session_id": "big", "message_seqs": [index % 50 + 1]}]} if pending_one else {},
        ))
    for start in range(0, MEMORIES, 500):
        memory_bulk_create(store=store, items=items[start:start + 500], actor=Actor.system("seed"))
    return session


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured.captured_queries)


def test_pages_with_ten_thousand_memories(tenant_a, quiet_stores, browsers):
    _seed(tenant_a.store)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
    for url, limit in [("/review/", QUEUE_QUERIES), ("/review/customers/customer-0/", CUSTOMER_QUERIES),
                       ("/review/customers/customer-0/?q=allergy+latex", CUSTOMER_QUERIES + 1),
                       ("/review/overview/", 8)]:
        assert _queries(browsers.reviewer, url) <= limit, url
