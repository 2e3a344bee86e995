"""The queue and the customer page cost a fixed number of queries, however many cards or memories they
show: sources and neighbours of all cards are read together (apps.review.selectors.queue)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.conversations.services import working_memory_put
from tests.review.conftest import conversation, pending

# The queue: session, user, stores, badge, page count, page, source messages, neighbours.
QUEUE_QUERIES = 8
# The customer page: session, user, stores, badge, page count, page, counts, sessions, working memory, jobs
# (and one search query per store holding the customer, when searching).
CUSTOMER_QUERIES = 11


def _fill(store, count: int, add_memory, start: int = 0):
    """`count` conversations, each with an active and a pending memory, among three customers."""
    for index in range(start, start + count):
        session = conversation(store, f"s-{index}", [f"I have pet number {index}", "ok"], user_id=f"user-{index % 3}")
        working_memory_put(session=session, key="step", value=index)
        add_memory(store, f"Has a pet called number {index}", user_id=f"user-{index % 3}")
        pending(store, f"Has pet number {index}", user_id=f"user-{index % 3}", session=session, seqs=[1, 2],
                metadata={"supersedes": "not-a-uuid"} if index == 0 else {})


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured.captured_queries)


@pytest.mark.parametrize("url", ["/review/", "/review/customers/user-1/", "/review/customers/user-1/?q=pet"])
def test_pages_cost_the_same_queries_for_5_or_25_items(tenant_a, quiet_stores, browsers, add_memory, url):
    _fill(tenant_a.store, 5, add_memory)
    few = _queries(browsers.reviewer, url)
    _fill(tenant_a.store, 20, add_memory, start=5)
    many = _queries(browsers.reviewer, url)
    assert few == many
    assert many <= (QUEUE_QUERIES if url == "/review/" else CUSTOMER_QUERIES)


def test_the_queue_page_reads_cards_evidence_in_two_queries(tenant_a, quiet_stores, browsers, add_memory,
                                                             django_assert_max_num_queries):
    _fill(tenant_a.store, 25, add_memory)
    with django_assert_max_num_queries(QUEUE_QUERIES):
        response = browsers.reviewer.get("/review/")
    assert len(response.context["cards"]) == 25
    assert all(card["details"].sources and card["details"].neighbours for card in response.context["cards"])


def test_the_session_and_jobs_pages_cost_fixed_queries(tenant_a, quiet_stores, browsers, add_memory,
                                                       django_assert_max_num_queries):
    _fill(tenant_a.store, 10, add_memory)
    with django_assert_max_num_queries(12):
        assert browsers.reviewer.get(f"/review/stores/{tenant_a.store.pk}/sessions/s-3/").status_code == 200
    with django_assert_max_num_queries(8):
        assert browsers.reviewer.get("/review/jobs/").status_code == 200
    with django_assert_max_num_queries(8):
        assert browsers.reviewer.get("/review/overview/").status_code == 200
