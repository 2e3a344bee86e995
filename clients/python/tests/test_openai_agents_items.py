"""MemoryHubSession without a server: how items become memoryhub messages (within the server's limits, kept
exactly when they fit), how markers shape the history, and a session whose server cannot be reached."""

import asyncio
import json
import socket
import time

import pytest

from memoryhub_client._openai_agents_items import (
    MAX_MESSAGE_CHARS,
    MAX_METADATA_BYTES,
    METADATA_KEY,
    Record,
    history_view,
    item_message,
    marker_message,
)
from memoryhub_client.openai_agents import MemoryHubSession

FUNCTION_CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "check_order",
                 "arguments": '{"order_id":"A-17"}', "status": "completed"}
ITEMS = [
    {"role": "user", "content": "I'm allergic to latex"},
    {"role": "developer", "content": [{"type": "input_text", "text": "Be brief."}]},
    {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Noted.", "annotations": [], "logprobs": []}]},
    FUNCTION_CALL,
    {"type": "function_call_output", "call_id": "call_1", "output": "Order A-17 ships tomorrow."},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Check the order."}]},
    {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}},
    {"type": "computer_call_output", "call_id": "cc_1", "output": {"type": "computer_screenshot", "file_id": "f"}},
]


def _stored_size(metadata: dict) -> int:
    # As the server measures metadata (apps.core.fields.MetadataField).
    return len(json.dumps(metadata, ensure_ascii=False).encode("utf-8"))


def test_items_within_the_limits_are_kept_exactly_in_the_metadata():
    for item in ITEMS:
        message, _ = item_message(item)
        assert message["metadata"] == {METADATA_KEY: {"item": item}}


def test_each_item_becomes_a_message_extraction_can_read():
    shapes = [(message["role"], message["content"]) for message, _ in map(item_message, ITEMS)]
    assert shapes == [
        ("user", [{"text": "I'm allergic to latex"}]),
        ("system", [{"text": "Be brief."}]),
        ("assistant", [{"text": "Noted."}]),
        ("assistant", [{"toolUse": {"toolUseId": "call_1", "name": "check_order", "input": {"order_id": "A-17"}}}]),
        ("tool", [{"toolResult": {"toolUseId": "call_1", "status": "success",
                                  "content": [{"text": "Order A-17 ships tomorrow."}]}}]),
        ("assistant", [{"reasoningContent": {"reasoningText": {"text": "Check the order."}}}]),
        ("assistant", [{"toolUse": {"toolUseId": "ws_1", "name": "web_search_call", "input": {}}}]),
        ("tool", [{"toolUse": {"toolUseId": "cc_1", "name": "computer_call_output", "input": {}}}]),
    ]


def test_what_postgresql_refuses_is_kept_out_of_the_message_even_inside_tool_arguments():
    call = {**FUNCTION_CALL, "arguments": '{"note": "a\\u0000b", "score": NaN}'}
    message, _ = item_message(call)
    assert message["content"][0]["toolUse"]["input"] == {"note": "ab", "score": None}
    assert message["metadata"][METADATA_KEY] == {"item": call}  # the arguments string itself is storable


def test_text_over_the_servers_limit_is_cut_for_extraction():
    message, _ = item_message({"role": "user", "content": [{"type": "input_text", "text": "a" * 30_000},
                                                            {"type": "input_text", "text": "b" * 30_000}]})
    text = "\n".join(block["text"] for block in message["content"])  # as the server flattens it
    assert len(text) <= MAX_MESSAGE_CHARS and text.endswith("[…truncated]")


def test_an_item_over_the_metadata_limit_is_shortened_to_fit_keeping_what_identifies_it():
    long_output = {"type": "function_call_output", "call_id": "call_9", "output": "x" * 100_000}
    image = {"role": "user", "content": [{"type": "input_text", "text": "Look"},
                                         {"type": "input_image", "image_url": "data:image/png;base64," + "A" * 50_000}]}
    many_parts = {"role": "user", "content": [{"type": "input_text", "text": "word"} for _ in range(5_000)]}
    cleaned = {"role": "user", "content": "nul\x00 and a lone \ud800 surrogate", "score": float("nan")}

    kept = {}
    for name, item in {"output": long_output, "image": image, "parts": many_parts, "cleaned": cleaned}.items():
        message, _ = item_message(item)
        assert _stored_size(message["metadata"]) <= MAX_METADATA_BYTES
        assert message["metadata"][METADATA_KEY]["altered"] is True
        kept[name] = message["metadata"][METADATA_KEY]["item"]

    assert kept["output"]["call_id"] == "call_9" and kept["output"]["output"].endswith("[…truncated]")
    assert kept["image"]["content"][1] == {"type": "input_text",
                                           "text": "[image omitted: too large to keep in memoryhub]"}
    assert kept["parts"] == {"role": "user", "content": "[omitted: too large to keep in memoryhub]"}
    assert kept["cleaned"] == {"role": "user", "content": "nul and a lone ? surrogate", "score": None}


def test_markers_hide_a_popped_item_and_everything_before_a_clear():
    def item(seq):
        return Record(key=("run", "r", seq), kind="item", item={"content": seq})

    def marker(**fields):
        _, record = marker_message(fields)
        return record

    records = [item(0), item(1), item(2), marker(pop={"run_id": "r", "seq": 1}), item(3)]
    assert [entry["content"] for _, entry in history_view(records)] == [0, 2, 3]
    assert history_view(records + [marker(clear=True)]) == []
    assert [entry["content"] for _, entry in history_view(records + [marker(clear=True), item(4)])] == [4]
    foreign = Record(key=("seq", 7), kind="item", item={"content": "imported"})
    assert history_view([foreign, marker(pop={"session_seq": 7})]) == []


@pytest.fixture
def unreachable_session():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    session = MemoryHubSession("offline", store="main", user_id="alice", base_url=f"http://127.0.0.1:{port}",
                               api_key="mh_unreachable")
    yield session
    session._guard.outbox.close(timeout=0)
    session.close()


def test_a_session_whose_server_cannot_be_reached_answers_from_what_it_was_given(unreachable_session):
    session = unreachable_session
    items = [{"role": "user", "content": f"message {n}"} for n in range(3)]

    async def scenario():
        started = time.monotonic()
        await session.add_items(items)
        assert await session.get_items() == items
        assert await session.get_items(limit=2) == items[1:]
        assert await session.pop_item() == items[2]
        assert await session.get_items() == items[:2]
        await session.clear_session()
        assert await session.get_items() == []
        assert await session.pop_item() is None
        return time.monotonic() - started

    assert asyncio.run(scenario()) < 2.0
    assert session._guard.outbox.pending() == 3  # the items (one request), the pop and the clear wait
