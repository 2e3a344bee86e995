"""The scratchpad: numbered entries, the oldest dropped beyond the store's limit, validation."""

from datetime import timedelta

import pytest
import time_machine

from apps.conversations.models import ScratchpadEntry, Session
from tests.conversations.working_state import PAD, T0, assert_error, when


def test_scratchpad_appends_numbered_timestamped_entries(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        first = client.post(PAD, {"content": "The user wants Rome.", "metadata": {"step": 1}}, format="json")
        traveller.move_to(T0 + timedelta(seconds=1))
        second = client.post(PAD, {"content": "Check flights first."}, format="json")
    assert first.status_code == 201, first.content
    body = first.json()
    assert body["entry"]["seq"] == 1 and body["entry"]["content"] == "The user wants Rome."
    assert body["entry"]["metadata"] == {"step": 1} and when(body["entry"]["created_at"]) == T0
    assert (body["dropped"], body["entries"], body["limit"]) == (0, 1, 500)
    assert (second.json()["entry"]["seq"], second.json()["entries"], second.json()["entry"]["metadata"]) == (2, 2, {})
    listed = session.client("read").get(PAD).json()["results"]
    assert [(entry["seq"], entry["content"]) for entry in listed] == [
        (1, "The user wants Rome."), (2, "Check flights first.")
    ]
    assert when(listed[1]["created_at"]) == T0 + timedelta(seconds=1)


def test_scratchpad_drops_the_oldest_entries_beyond_the_limit(session, configure_store):
    configure_store(session.store, working_memory_config={"scratchpad_max_entries": 3})
    client = session.client("write")
    reports = [client.post(PAD, {"content": f"thought {i}"}, format="json").json() for i in range(1, 6)]
    assert [(r["entry"]["seq"], r["dropped"], r["entries"], r["limit"]) for r in reports] == [
        (1, 0, 1, 3), (2, 0, 2, 3), (3, 0, 3, 3), (4, 1, 3, 3), (5, 1, 3, 3)
    ]
    assert [entry["content"] for entry in client.get(PAD).json()["results"]] == ["thought 3", "thought 4", "thought 5"]
    # Lowering the limit drops several at once on the next append.
    configure_store(session.store, working_memory_config={"scratchpad_max_entries": 1})
    report = client.post(PAD, {"content": "thought 6"}, format="json").json()
    assert (report["dropped"], report["entries"], report["limit"]) == (3, 1, 1)
    assert list(ScratchpadEntry.objects.values_list("seq", flat=True)) == [6]


def test_scratchpad_list_is_paginated_in_seq_order(session):
    client = session.client("write")
    for i in range(5):
        client.post(PAD, {"content": f"e{i}"}, format="json")
    page = client.get(PAD + "?page_size=2").json()
    assert [entry["seq"] for entry in page["results"]] == [1, 2]
    assert [entry["seq"] for entry in client.get(page["next"]).json()["results"]] == [3, 4]


def test_clearing_the_scratchpad_keeps_numbering(session):
    client = session.client("write")
    for i in range(3):
        client.post(PAD, {"content": f"e{i}"}, format="json")
    assert client.delete(PAD).json() == {"deleted": 3}
    assert client.get(PAD).json()["results"] == []
    assert client.post(PAD, {"content": "after"}, format="json").json()["entry"]["seq"] == 4
    assert client.delete(PAD).json() == {"deleted": 1} and not ScratchpadEntry.objects.exists()


@pytest.mark.parametrize(
    "body",
    [{}, {"content": ""}, {"content": "   \n\t"}, {"content": None}, {"content": 5}, {"content": "nul \u0000"},
     {"content": "ok", "metadata": [1]}, {"content": "ok", "metadata": "x"}, ["content"]],
)
def test_bad_scratchpad_entries_are_400_and_store_nothing(session, body):
    assert_error(session.client("write").post(PAD, body, format="json"), 400, "validation_error")
    assert not ScratchpadEntry.objects.exists()
    assert Session.objects.get().scratchpad_seq == 0


def test_scratchpad_entry_length_limit_is_413(session, settings):
    settings.SCRATCHPAD_MAX_ENTRY_CHARS = 100
    client = session.client("write")
    at_limit = client.post(PAD, {"content": "x" * 100}, format="json")
    assert (at_limit.status_code, at_limit.json()["entry"]["content"]) == (201, "x" * 100)
    error = assert_error(client.post(PAD, {"content": "y" * 101}, format="json"), 413, "entry_too_long")
    assert "100" in error["message"]
    assert list(ScratchpadEntry.objects.values_list("content", flat=True)) == ["x" * 100]
