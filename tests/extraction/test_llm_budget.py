"""The LLM extractor within its context budget: long batches in windows, memories and messages trimmed."""

import json
from datetime import UTC, datetime, timedelta

import pytest

from apps.extraction.extractors.base import ConversationMessage, ExistingMemory
from apps.extraction.extractors.llm import LLMConfig, LLMExtractor
from apps.extraction.extractors.llm.budget import CONTEXT_MESSAGES, MEMORY_SHARE, estimate_tokens
from apps.extraction.extractors.llm.schema import MEMORIES_SCHEMA
from tests.fakes.llm_server import FakeLLMServer, Reply

START = datetime(2026, 3, 14, 9, 30, tzinfo=UTC)
SENTENCE = "My parcel number {seq} was left at the wrong door and the courier did not ring the bell at all. "


@pytest.fixture
def server():
    with FakeLLMServer() as fake:
        # A "model" that keeps one memory per user message it is asked to extract from.
        fake.responder = lambda request: Reply.memories(*[
            {"content": f"The user reported parcel {line['seq']}", "memory_type": "episode", "confidence": 0.9,
             "action": "add", "target_memory_id": None, "subject": None, "source_seqs": [line["seq"]]}
            for line in request.conversation if line["role"] == "user"
        ])
        yield fake


@pytest.fixture
def make_extractor(server):
    built = []

    def _make(budget: int, **overrides) -> LLMExtractor:
        # Without the worked examples by default: the budgets below are about the data, not the instructions.
        overrides.setdefault("few_shot_examples", False)
        config = LLMConfig(provider="openai", model="gpt-test-mini", base_url=server.openai_base_url,
                           max_retries=0, context_budget_tokens=budget, **overrides)
        built.append(LLMExtractor(config, sleep=lambda seconds: None))
        return built[-1]

    yield _make
    for extractor in built:
        extractor.close()


def _messages(count: int, *, repeat: int = 3) -> list[ConversationMessage]:
    return [
        ConversationMessage(seq=seq, role="user" if seq % 2 else "assistant",
                            text=SENTENCE.format(seq=seq) * repeat, created_at=START + timedelta(minutes=seq))
        for seq in range(1, count + 1)
    ]


def _estimated_request_tokens(request) -> int:
    """What the extractor budgets for: everything the model reads, the output schema included."""
    return estimate_tokens(request.prompt_text) + estimate_tokens(json.dumps(MEMORIES_SCHEMA))


def _section(request, heading: str) -> list[dict]:
    prompt = request.user_prompt
    if heading not in prompt:
        return []
    return [json.loads(line) for line in prompt.split(heading + "\n", 1)[1].split("\n\n", 1)[0].splitlines()]


def test_a_short_batch_is_one_request_without_context(make_extractor, server):
    make_extractor(8000, few_shot_examples=True).extract(messages=_messages(4), existing=[])

    (request,) = server.requests
    assert [line["seq"] for line in request.conversation] == [1, 2, 3, 4]
    assert "Earlier messages" not in request.user_prompt


def test_a_batch_longer_than_the_budget_goes_in_windows_each_under_it(make_extractor, server):
    budget = 5000
    messages = _messages(40, repeat=5)
    assert sum(estimate_tokens(message.text) for message in messages) > budget

    candidates = make_extractor(budget, few_shot_examples=True).extract(messages=messages, existing=[],
                                                                        user_name="Alice")

    requests = server.requests
    assert len(requests) >= 3
    assert all(_estimated_request_tokens(request) <= budget for request in requests)
    # Every message is extracted once, in order, and a window after the first shows the messages just
    # before it, as context only.
    windows = [[line["seq"] for line in request.conversation] for request in requests]
    assert [seq for window in windows for seq in window] == list(range(1, 41))
    assert _section(requests[0], "Earlier messages (context only):") == []
    for previous, request, window in zip(windows, requests[1:], windows[1:], strict=False):
        context = [line["seq"] for line in _section(request, "Earlier messages (context only):")]
        assert 1 <= len(context) <= CONTEXT_MESSAGES
        assert context == previous[-len(context):] and context[-1] == window[0] - 1
    # Candidates from every window.
    assert [candidate.source_seqs for candidate in candidates] == [[seq] for seq in range(1, 41, 2)]


def test_a_memory_taken_from_the_context_lines_alone_is_dropped(make_extractor, server):
    def answer(request):
        context = [line["seq"] for line in _section(request, "Earlier messages (context only):")]
        own = [line["seq"] for line in request.conversation]
        item = {"content": "x", "memory_type": "fact", "confidence": 0.9, "action": "add", "target_memory_id": None,
                "subject": None}
        if not context:
            return Reply.memories({**item, "content": f"from {own[0]}", "source_seqs": [own[0]]})
        return Reply.memories({**item, "content": f"context {context[-1]}", "source_seqs": [context[-1]]},
                              {**item, "content": f"both {own[0]}", "source_seqs": [context[-1], own[0]]})

    server.responder = answer
    candidates = make_extractor(3000).extract(messages=_messages(20), existing=[])

    assert len(server.requests) >= 2
    assert not [candidate for candidate in candidates if candidate.content.startswith("context")]
    assert len([candidate for candidate in candidates if candidate.content.startswith("both")]) == \
        len(server.requests) - 1


def test_existing_memories_are_trimmed_to_their_share_most_related_first(make_extractor, server):
    unrelated = [
        ExistingMemory(id=f"00000000-0000-4000-8000-{number:012d}", memory_type="fact", subject=None,
                       content=f"Alice once mentioned a hobby of collecting stamps from country number {number}")
        for number in range(200)
    ]
    related = ExistingMemory(id="11111111-0000-4000-8000-000000000001", memory_type="fact", subject="courier",
                             content="Alice's parcels come by courier to the wrong door")
    existing = [*unrelated[:150], related, *unrelated[150:]]
    server.responder = lambda request: Reply.memories({
        "content": "Alice's parcels now come to the back door", "memory_type": "fact", "confidence": 0.9,
        "action": "update", "target_memory_id": "m151", "subject": "courier", "source_seqs": [1]})
    extractor = make_extractor(6000)

    (candidate,) = extractor.extract(messages=_messages(2, repeat=1), existing=existing)

    (request,) = server.requests
    shown = _section(request, "Existing memories:")
    assert 0 < len(shown) < len(existing)
    memory_tokens = sum(estimate_tokens(json.dumps(line, ensure_ascii=False)) + 1 for line in shown)
    assert memory_tokens <= MEMORY_SHARE * (6000 - extractor.fixed_tokens)
    assert shown[0] == {"id": "m1", "memory_type": "fact", "subject": None, "content": unrelated[0].content}
    assert {"id": "m151", "memory_type": "fact", "subject": "courier", "content": related.content} in shown
    assert candidate.target_memory_id == related.id  # the short id it was shown under


def test_a_message_longer_than_the_budget_is_cut_with_a_marker(make_extractor, server):
    text = "START " + "the courier left it in the rain again " * 2000 + " END"
    long_message = ConversationMessage(seq=1, role="user", text=text, created_at=START)

    candidates = make_extractor(5000).extract(messages=[long_message], existing=[])

    requests = server.requests
    assert all(_estimated_request_tokens(request) <= 5000 for request in requests)
    shown = [line["text"] for request in requests for line in request.conversation]
    (cut,) = shown
    assert cut.startswith("START the courier") and cut.endswith("again  END")
    assert "characters cut" in cut and len(cut) < len(text)
    assert [candidate.source_seqs for candidate in candidates] == [[1]]


def test_a_long_message_among_short_ones_gets_a_window_of_its_own(make_extractor, server):
    messages = _messages(6, repeat=1)
    messages[2] = ConversationMessage(seq=3, role="user", text="long " * 20000, created_at=START)

    make_extractor(4000).extract(messages=messages, existing=[])

    windows = [[line["seq"] for line in request.conversation] for request in server.requests]
    assert [seq for window in windows for seq in window] == [1, 2, 3, 4, 5, 6]
    assert [3] in windows
    assert all(_estimated_request_tokens(request) <= 4000 for request in server.requests)


def test_a_server_with_a_smaller_context_than_the_budget_gets_smaller_windows(make_extractor, server):
    server.context_limit_chars = 6_000  # the prompt of the whole batch is refused as too long

    candidates = make_extractor(8000).extract(messages=_messages(12), existing=[])

    refused = [request for request in server.requests if len(request.prompt_text) > 6_000]
    answered = [request for request in server.requests if len(request.prompt_text) <= 6_000]
    assert refused[0] is server.requests[0] and len(answered) >= 2
    assert [line["seq"] for request in answered for line in request.conversation] == list(range(1, 13))
    assert [candidate.source_seqs for candidate in candidates] == [[seq] for seq in range(1, 13, 2)]


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("The courier left my parcel at the wrong door.", 10, 14),  # about 10 tokens in GPT tokenizers
        ("配達員が荷物を間違ったドアに置いていきました。", 20, 25),  # about 1 token a character
        ("", 0, 0),
    ],
)
def test_token_estimates_err_on_the_high_side(text, low, high):
    assert low <= estimate_tokens(text) <= high


def test_a_budget_below_the_instructions_is_refused():
    with pytest.raises(ValueError, match="context budget must be at least 3000"):
        LLMConfig(provider="openai", model="m", base_url="http://127.0.0.1:9/v1", context_budget_tokens=2000)


def test_a_budget_too_small_for_the_instructions_is_warned_about(make_extractor, caplog):
    make_extractor(3000, few_shot_examples=True)

    assert "LLM_CONTEXT_BUDGET_TOKENS=3000 leaves" in caplog.text and "LLM_FEW_SHOT_EXAMPLES=false" in caplog.text
